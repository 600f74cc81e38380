//! The candidate enumerator, the first explorer: every path of every thread with reads
//! returning every value the program could write (`paths`), combinations of one path per
//! thread, every reads-from choice, then the model's orders. Its cost follows the candidates,
//! not the executions; it stays as the fallback where the graph explorer cannot vouch for its
//! completeness (load buffering through independent writes, barrier and launch cycles) and as
//! the differential oracle of the tests (`Engine::Candidates`).

use scopecheck_ir::{LocId, Program, ThreadId, Value};

use crate::paths::{enumerate_paths, TraceLimit};
use crate::trace::{EventKind, PathEnd, Trace};
use crate::{
    loops, progress, Exploration, ExploreOptions, Graph, Leaf, Model, NotAnExecution, OnExecution,
};

/// The read and written `(location, value)` pairs of a path.
struct PathValues {
    reads: Vec<(LocId, Value)>,
    writes: Vec<(LocId, Value)>,
}

fn path_values(t: &Trace) -> PathValues {
    let mut v = PathValues {
        reads: vec![],
        writes: vec![],
    };
    for e in &t.events {
        match e.kind {
            EventKind::Read { loc, value, .. } => v.reads.push((loc, value)),
            EventKind::Write { loc, value, .. } => v.writes.push((loc, value)),
            _ => {}
        }
    }
    v.reads.sort_unstable();
    v.reads.dedup();
    v.writes.sort_unstable();
    v.writes.dedup();
    v
}

/// The path of a thread the scheduler never ran.
fn never_ran(thread: &scopecheck_ir::Thread) -> Trace {
    let mut regs = vec![0; thread.registers.len()];
    for (r, v) in &thread.init_regs {
        regs[r.0 as usize] = *v;
    }
    Trace {
        events: vec![],
        rmw: vec![],
        regs,
        end: PathEnd::Starved,
    }
}

/// [`crate::explore`] by candidate enumeration.
pub fn explore<'p>(
    program: &'p Program,
    model: &dyn Model,
    opts: &ExploreOptions,
    on_execution: &OnExecution<'_, 'p>,
) -> Result<Exploration, TraceLimit> {
    let paths = enumerate_paths(program, opts.unroll, &opts.budget)?;
    let mut out = Exploration::default();
    for (t, th) in program.threads.iter().enumerate() {
        for l in loops::thread_loops(program, th) {
            if l.reducible.is_ok() {
                out.reduced_loops
                    .push((ThreadId(t as u32), *l.branches.last().expect("a branch")));
            }
        }
    }
    // What a starved thread may have done before the scheduler stopped running it: nothing, or
    // under a preempting scheduler any instruction-aligned prefix of one of its paths.
    let starved_paths: Vec<Vec<Trace>> = program
        .threads
        .iter()
        .enumerate()
        .map(|(t, th)| {
            let mut v = vec![never_ran(th)];
            if opts.scheduler.preempts() {
                for p in &paths.per_thread[t] {
                    for k in 1..=p.events.len() {
                        let aligned =
                            k == p.events.len() || p.events[k].instr != p.events[k - 1].instr;
                        let prefix = p.prefix(k, v[0].regs.clone(), PathEnd::Starved);
                        if aligned && !v.contains(&prefix) {
                            v.push(prefix);
                        }
                    }
                }
            }
            v
        })
        .collect();
    let spins = paths
        .per_thread
        .iter()
        .flatten()
        .any(|p| matches!(p.end, PathEnd::Blocked { .. }));
    let candidates = if spins {
        opts.scheduler.starvation_candidates(program)
    } else {
        vec![vec![]]
    };
    let mut leaves_before = 0;
    for starved in candidates {
        let per_thread: Vec<&[Trace]> = (0..program.threads.len())
            .map(|t| {
                if starved.contains(&ThreadId(t as u32)) {
                    &starved_paths[t][..]
                } else {
                    &paths.per_thread[t][..]
                }
            })
            .collect();
        let values: Vec<Vec<PathValues>> = per_thread
            .iter()
            .map(|ts| ts.iter().map(path_values).collect())
            .collect();
        // available[t]: values the initial state and threads t.. could write.
        let nt = program.threads.len();
        let mut available: Vec<Vec<(LocId, Value)>> = vec![vec![]; nt + 1];
        available[nt] = program
            .locations
            .iter()
            .enumerate()
            .map(|(i, l)| (LocId(i as u32), l.init))
            .collect();
        for t in (0..nt).rev() {
            let mut a = available[t + 1].clone();
            for pv in &values[t] {
                a.extend_from_slice(&pv.writes);
            }
            a.sort_unstable();
            a.dedup();
            available[t] = a;
        }
        let mut run = Run {
            program,
            model,
            scheduler: &opts.scheduler,
            starved: &starved,
            paths: &per_thread,
            values: &values,
            available: &available,
            chosen: Vec::with_capacity(nt),
            written: Vec::new(),
            out: &mut out,
            on_execution,
            budget: opts.budget,
            ticks: 0,
            leaves: leaves_before,
        };
        run.choose();
        leaves_before = run.leaves;
        if out.cut_short.is_some() {
            break;
        }
    }
    Ok(out)
}

struct Run<'a, 'p> {
    program: &'p Program,
    model: &'a dyn Model,
    scheduler: &'a progress::Scheduler,
    /// Threads never scheduled in this run: only hangs are looked for.
    starved: &'a [ThreadId],
    paths: &'a [&'a [Trace]],
    values: &'a [Vec<PathValues>],
    available: &'a [Vec<(LocId, Value)>],
    chosen: Vec<usize>,
    /// Values written by the chosen paths, with multiplicity (popped on backtrack).
    written: Vec<(LocId, Value)>,
    out: &'a mut Exploration,
    on_execution: &'a OnExecution<'a, 'p>,
    budget: crate::Budget,
    ticks: u32,
    /// Leaves judged so far: the search order (`Found::key`).
    leaves: u64,
}

impl<'p> Run<'_, 'p> {
    fn spent(&mut self) -> bool {
        self.ticks = self.ticks.wrapping_add(1);
        self.budget.spent(self.out, self.ticks)
    }

    /// Chooses a path for each thread in turn, pruning paths that read a value nothing can
    /// write, and judges each combination. Depth first on a stack of its own (one level per
    /// thread): `next[t]` is the next path of thread `t` to try. A level entered once the budget
    /// is spent returns at once, as the recursion this replaced did.
    fn choose(&mut self) {
        if self.spent() {
            return;
        }
        let mut next: Vec<usize> = vec![0];
        let mut marks: Vec<usize> = Vec::new();
        while let Some(&from) = next.last() {
            let t = next.len() - 1;
            let found = if t == self.paths.len() {
                self.combination();
                None
            } else {
                (from..self.values[t].len()).find(|&i| {
                    self.values[t][i].reads.iter().all(|rv| {
                        self.values[t][i].writes.contains(rv)
                            || self.written.contains(rv)
                            || self.available[t + 1].binary_search(rv).is_ok()
                    })
                })
            };
            let Some(i) = found else {
                // This level is done: back to the thread before, undoing its choice.
                next.pop();
                if let Some(mark) = marks.pop() {
                    self.chosen.pop();
                    self.written.truncate(mark);
                }
                continue;
            };
            next[t] = i + 1;
            marks.push(self.written.len());
            self.written.extend_from_slice(&self.values[t][i].writes);
            self.chosen.push(i);
            if self.spent() {
                self.chosen.pop();
                self.written.truncate(marks.pop().expect("its mark"));
                continue;
            }
            next.push(0);
        }
    }

    fn combination(&mut self) {
        let owned: Vec<Trace>;
        let mut paths: Vec<&Trace> = self
            .chosen
            .iter()
            .enumerate()
            .map(|(t, &i)| &self.paths[t][i])
            .collect();
        // With threads starved, only configurations where everyone else finished or spins
        // can hang.
        if !self.starved.is_empty()
            && !paths.iter().all(|p| {
                matches!(
                    p.end,
                    PathEnd::Finished | PathEnd::Blocked { .. } | PathEnd::Starved
                )
            })
        {
            return;
        }
        // A barrier some participant never reaches stops its waiters there: cut their paths
        // before the wait and go on with what remains (a hang, or a prefix of a cut loop or a
        // fault, which must still be reported).
        let mut cut: Vec<Trace> = Vec::new();
        let g = loop {
            let attempt = if cut.is_empty() {
                Graph::new(self.program, &paths)
            } else {
                Graph::new(self.program, &cut.iter().collect::<Vec<_>>())
            };
            match attempt {
                Ok(g) => break g,
                Err(NotAnExecution::BarrierBlocks(waits)) => {
                    if cut.is_empty() {
                        cut = paths.iter().map(|p| (*p).clone()).collect();
                    }
                    for (t, k) in waits {
                        let t = t.0 as usize;
                        if k < cut[t].events.len() {
                            cut[t] = cut[t].stopped_at_barrier(k);
                        }
                    }
                }
                Err(NotAnExecution::WrongReduction) => return,
            }
        };
        if !cut.is_empty() {
            owned = cut;
            paths = owned.iter().collect();
        }
        let reads: Vec<usize> = g.reads.iter().collect();
        let mut candidates: Vec<Vec<usize>> = Vec::with_capacity(reads.len());
        for &r in &reads {
            let (loc, value) = (g.events[r].kind.loc(), g.events[r].kind.value());
            let c: Vec<usize> = g
                .writes
                .iter()
                .filter(|&w| {
                    g.events[w].kind.loc() == loc
                        && g.events[w].kind.value() == value
                        && !g.rmw.contains(r, w)
                        && self.model.may_read_from(&g, r, w)
                })
                .collect();
            if c.is_empty() {
                return;
            }
            candidates.push(c);
        }
        let mut g = g;
        self.reads_from(&mut g, &reads, &candidates, &paths);
    }

    /// Chooses a write for each of `reads` in turn from its `candidates`, pruning prefixes the
    /// model rejects, and judges each complete choice. Depth first on a stack of its own (one
    /// level per read, as many as the paths have): `next[k]` is the next candidate of read `k`.
    fn reads_from(
        &mut self,
        g: &mut Graph<'p>,
        reads: &[usize],
        candidates: &[Vec<usize>],
        paths: &[&Trace],
    ) {
        if self.spent() {
            return;
        }
        let mut next: Vec<usize> = vec![0];
        while let Some(&j) = next.last() {
            let k = next.len() - 1;
            if k == reads.len() {
                self.judge_leaf(g, paths);
                next.pop();
                continue;
            }
            let Some(&w) = candidates[k].get(j) else {
                g.rf[reads[k]] = None;
                next.pop();
                continue;
            };
            next[k] += 1;
            g.rf[reads[k]] = Some(w);
            // Prune as early as the model allows: a prefix of reads-from that already breaks
            // an axiom breaks it in every completion.
            if self.model.consistent_so_far(g) {
                if !self.spent() {
                    next.push(0);
                }
            } else {
                self.out.rejected.add("(reads-from prefix)");
            }
        }
    }

    /// Judges the execution of `paths` with every read's write chosen in `g`.
    fn judge_leaf(&mut self, g: &Graph<'p>, paths: &[&Trace]) {
        let key = [self.leaves];
        self.leaves += 1;
        let mut leaf = Leaf {
            program: self.program,
            model: self.model,
            scheduler: self.scheduler,
            starved: self.starved,
            only_hangs: !self.starved.is_empty(),
            out: self.out,
            on_execution: self.on_execution,
            key: &key,
            budget: &self.budget,
        };
        leaf.judge(g, paths, 1, None);
    }
}
