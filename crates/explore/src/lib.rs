//! The explorer: enumerates the candidate executions of a program and asks a memory model which
//! of them are consistent.
//!
//! 1. `trace`: every path of every thread, reads returning every value the program could write.
//! 2. Combinations of one path per thread whose read values some write could provide.
//! 3. `graph`: the execution graph of a combination; every reads-from choice.
//! 4. The [`Model`] enumerates its own per-execution orders (coherence, and whatever else it
//!    quantifies over) with the help of `orders`, and hands back the coherence order of each
//!    consistent execution.
//!
//! The explorer knows program semantics (paths, values, barriers) and nothing of any model.

pub mod graph;
pub mod loops;
pub mod orders;
pub mod progress;
pub mod relation;
pub mod trace;

use scopecheck_ir::{LocId, Program, ThreadId, Value};

pub use graph::{Event, Graph, NotAnExecution};
pub use relation::{EventSet, Relation};
pub use trace::{EventKind, PathEnd, Trace, TraceLimit};

/// A memory model, as the explorer sees it.
pub trait Model: Sync {
    /// The name used in reports (`ptx`).
    fn name(&self) -> &'static str;

    /// Whether `read` may read from `write` at all, judged from the graph before reads-from is
    /// chosen. A cheap filter; it must never exclude a pair some consistent execution uses.
    fn may_read_from(&self, g: &Graph, read: usize, write: usize) -> bool {
        let _ = (g, read, write);
        true
    }

    /// Whether `g`, whose reads-from is chosen for some reads only (the others are `None`), may
    /// still be completed into a consistent execution. Must only say no when every completion
    /// breaks an axiom: only axioms that get harder with more reads-from edges may be checked.
    fn consistent_so_far(&self, g: &Graph) -> bool {
        let _ = g;
        true
    }

    /// Calls `accept` once with the coherence order of each consistent execution of `g`, whose
    /// reads-from is chosen, and the races the model sees in it; counts each rejected candidate
    /// under the axiom that rejected it.
    fn executions(
        &self,
        g: &Graph,
        rejected: &mut Rejections,
        accept: &mut dyn FnMut(&Relation, &[Race]),
    );
}

/// What makes two conflicting accesses a race.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RaceKind {
    /// A plain (non-atomic, weak) access conflicts with another access and nothing orders them.
    Data,
    /// Two atomics conflict, nothing orders them, and their scopes do not include each other's
    /// thread (Hower et al., heterogeneous races).
    Heterogeneous,
}

/// Two conflicting accesses (events of the graph) that race in a consistent execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Race {
    pub first: usize,
    pub second: usize,
    pub kind: RaceKind,
}

/// How many candidates each axiom rejected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rejections {
    pub by_axiom: Vec<(&'static str, u64)>,
}

impl Rejections {
    pub fn add(&mut self, axiom: &'static str) {
        match self.by_axiom.iter_mut().find(|(a, _)| *a == axiom) {
            Some((_, n)) => *n += 1,
            None => self.by_axiom.push((axiom, 1)),
        }
    }
}

/// A loop whose unroll bound cut a feasible path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutLoop {
    pub thread: ThreadId,
    /// The backward branch's instruction index.
    pub instr: usize,
}

/// A fault some consistent execution reaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub thread: ThreadId,
    pub instr: usize,
    pub message: String,
}

/// A thread spinning forever in an await loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spinner {
    pub thread: ThreadId,
    /// The loop's backward branch.
    pub instr: usize,
    /// What its failing iteration reads, and keeps reading: the latest value of each location.
    pub reads: Vec<(LocId, Value)>,
}

/// A consistent execution in which no thread can make progress: every thread has finished,
/// spins in an await loop reading the coherence-latest writes, waits at a barrier some
/// participant never reaches, or was never scheduled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hang {
    pub spinning: Vec<Spinner>,
    /// Threads waiting forever at a barrier, with the barrier instruction.
    pub at_barrier: Vec<(ThreadId, usize)>,
    /// Threads the scheduler never ran.
    pub starved: Vec<ThreadId>,
    /// Why the scheduler permits it, in words.
    pub reason: String,
}

/// What the exploration saw besides the consistent executions it reported.
#[derive(Clone, Debug, Default)]
pub struct Exploration {
    pub rejected: Rejections,
    /// Loops the unroll bound cut in some consistent execution prefix: the exploration is
    /// incomplete when this is not empty.
    pub cut: Vec<CutLoop>,
    /// Faults reached by consistent executions.
    pub faults: Vec<Fault>,
    /// Await loops explored by their exiting iteration alone, as (thread, backward branch).
    pub reduced_loops: Vec<(ThreadId, usize)>,
    /// Hangs the scheduler permits.
    pub hangs: Vec<Hang>,
}

/// Options of the exploration.
#[derive(Clone, Debug)]
pub struct ExploreOptions {
    /// How often one backward branch may be taken per path.
    pub unroll: u32,
    /// The scheduler hangs are judged under.
    pub scheduler: progress::Scheduler,
}

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

/// What receives each consistent, finished execution: the graph, each thread's path, the
/// coherence order and the races.
pub type OnExecution<'f, 'p> = dyn FnMut(&Graph<'p>, &[&Trace], &Relation, &[Race]) + 'f;

/// Explores every execution of `program` under `model`. `on_execution` receives each consistent
/// execution of paths that all finished: its graph, the path of each thread, its coherence
/// order and the races the model sees in it. Hangs are searched for under every starvation the scheduler could allow.
pub fn explore<'p>(
    program: &'p Program,
    model: &dyn Model,
    opts: &ExploreOptions,
    on_execution: &mut OnExecution<'_, 'p>,
) -> Result<Exploration, TraceLimit> {
    let paths = trace::enumerate_paths(program, opts.unroll)?;
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
                        let prefix = Trace {
                            events: p.events[..k].to_vec(),
                            rmw: p
                                .rmw
                                .iter()
                                .copied()
                                .filter(|&(_, w)| (w as usize) < k)
                                .collect(),
                            regs: v[0].regs.clone(),
                            end: PathEnd::Starved,
                        };
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
        };
        run.choose(0);
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
    on_execution: &'a mut OnExecution<'a, 'p>,
}

impl<'p> Run<'_, 'p> {
    /// Chooses a path for thread `t`, pruning paths that read a value nothing can write.
    fn choose(&mut self, t: usize) {
        if t == self.paths.len() {
            self.combination();
            return;
        }
        for (i, pv) in self.values[t].iter().enumerate() {
            let feasible = pv.reads.iter().all(|rv| {
                pv.writes.contains(rv)
                    || self.written.contains(rv)
                    || self.available[t + 1].binary_search(rv).is_ok()
            });
            if !feasible {
                continue;
            }
            let mark = self.written.len();
            self.written.extend_from_slice(&pv.writes);
            self.chosen.push(i);
            self.choose(t + 1);
            self.chosen.pop();
            self.written.truncate(mark);
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
        self.reads_from(&mut g, &reads, &candidates, 0, &paths);
    }

    fn reads_from(
        &mut self,
        g: &mut Graph<'p>,
        reads: &[usize],
        candidates: &[Vec<usize>],
        k: usize,
        paths: &[&Trace],
    ) {
        if k < reads.len() {
            for &w in &candidates[k] {
                g.rf[reads[k]] = Some(w);
                // Prune as early as the model allows: a prefix of reads-from that already breaks
                // an axiom breaks it in every completion.
                if self.model.consistent_so_far(g) {
                    self.reads_from(g, reads, candidates, k + 1, paths);
                } else {
                    self.out.rejected.add("(reads-from prefix)");
                }
            }
            g.rf[reads[k]] = None;
            return;
        }
        let unfinished: Vec<usize> = (0..paths.len())
            .filter(|&t| paths[t].end != PathEnd::Finished)
            .collect();
        let waiting: Vec<(ThreadId, usize)> = unfinished
            .iter()
            .filter_map(|&t| match paths[t].end {
                PathEnd::AtBarrier { instr } => Some((ThreadId(t as u32), instr)),
                _ => None,
            })
            .collect();
        let stuck = unfinished.iter().all(|&t| {
            matches!(
                paths[t].end,
                PathEnd::Blocked { .. } | PathEnd::Starved | PathEnd::AtBarrier { .. }
            )
        }) && unfinished.iter().any(|&t| {
            matches!(
                paths[t].end,
                PathEnd::Blocked { .. } | PathEnd::AtBarrier { .. }
            )
        });
        let out = &mut *self.out;
        let on_execution = &mut self.on_execution;
        let (mut feasible, mut hang) = (false, None);
        self.model
            .executions(g, &mut out.rejected, &mut |co, races| {
                if unfinished.is_empty() {
                    on_execution(g, paths, co, races)
                } else {
                    feasible = true;
                    if stuck && hang.is_none() {
                        hang = spinners_read_latest(g, paths, co);
                    }
                }
            });
        if let Some(spinning) = hang {
            let mut stuck_ids: Vec<ThreadId> = spinning.iter().map(|s| s.thread).collect();
            stuck_ids.extend(waiting.iter().map(|w| w.0));
            if let Some(mut reason) = self
                .scheduler
                .permits(self.program, &stuck_ids, self.starved)
            {
                if !waiting.is_empty() {
                    let more = if self.starved.is_empty() {
                        ""
                    } else {
                        reason.as_str()
                    };
                    reason = barrier_waits(self.program, paths, &waiting, more);
                }
                let h = Hang {
                    spinning,
                    at_barrier: waiting,
                    starved: self.starved.to_vec(),
                    reason,
                };
                if !out.hangs.contains(&h) {
                    out.hangs.push(h);
                }
            }
        }
        if !self.starved.is_empty() {
            return;
        }
        // A consistent prefix that stops at a cut loop or a fault is a real execution's prefix.
        for &t in unfinished.iter().filter(|_| feasible) {
            let thread = ThreadId(t as u32);
            match &paths[t].end {
                PathEnd::Cut { instr } => {
                    let c = CutLoop {
                        thread,
                        instr: *instr,
                    };
                    if !out.cut.contains(&c) {
                        out.cut.push(c);
                    }
                }
                PathEnd::Fault { instr, message } => {
                    let f = Fault {
                        thread,
                        instr: *instr,
                        message: message.clone(),
                    };
                    if !out.faults.contains(&f) {
                        out.faults.push(f);
                    }
                }
                PathEnd::Finished
                | PathEnd::Blocked { .. }
                | PathEnd::Starved
                | PathEnd::AtBarrier { .. } => {}
            }
        }
    }
}

/// The spinning threads of a stuck execution, when each one's failing iteration reads only
/// coherence-latest writes: no later write will ever change what it sees, so it spins forever.
fn spinners_read_latest(g: &Graph, paths: &[&Trace], co: &Relation) -> Option<Vec<Spinner>> {
    // The failing iterations' events: write-backs there repeat what was read and release no one.
    let mut spinning = EventSet::new(g.len());
    for (t, p) in paths.iter().enumerate() {
        if let PathEnd::Blocked { iteration, .. } = p.end {
            let base = g.thread_start[t];
            (base + iteration..base + p.events.len()).for_each(|e| spinning.insert(e));
        }
    }
    let mut out = Vec::new();
    for (t, p) in paths.iter().enumerate() {
        let PathEnd::Blocked { instr, iteration } = p.end else {
            continue;
        };
        let base = g.thread_start[t];
        let mut reads = Vec::new();
        for e in base + iteration..base + p.events.len() {
            if let EventKind::Read { loc, value, .. } = g.events[e].kind {
                // Only write-backs of spinning iterations may follow what it read.
                let w = g.rf[e]?;
                if co.successors(w).any(|x| !spinning.contains(x)) {
                    return None;
                }
                reads.push((loc, value));
            }
        }
        out.push(Spinner {
            thread: ThreadId(t as u32),
            instr,
            reads,
        });
    }
    Some(out)
}

/// Why threads wait forever at a barrier, in words, followed by `more` (the scheduler's part):
/// for each missing participant of its CTA, whether it spins, was never scheduled, or finished
/// without reaching the barrier (barrier divergence).
fn barrier_waits(
    program: &Program,
    paths: &[&Trace],
    waiting: &[(ThreadId, usize)],
    more: &str,
) -> String {
    let mut parts: Vec<String> = waiting
        .iter()
        .map(|&(t, instr)| {
            let th = program.thread(t);
            let i = &th.code[instr];
            let missing: Vec<String> = program
                .threads
                .iter()
                .enumerate()
                .filter(|(o, other)| {
                    *o != t.0 as usize
                        && other.placement.same_cta(&th.placement)
                        && !waiting.iter().any(|w| w.0 .0 as usize == *o)
                })
                .map(|(o, other)| match paths[o].end {
                    PathEnd::Blocked { .. } => format!("{}, which spins", other.name),
                    PathEnd::Starved => format!("{}, which is not scheduled", other.name),
                    _ => format!(
                        "{}, which finished without reaching it (barrier divergence)",
                        other.name
                    ),
                })
                .collect();
            format!(
                "{} waits at `{}` (line {}) for {}",
                th.name,
                i.text,
                i.span.line,
                if missing.is_empty() {
                    "a thread that never arrives".to_string()
                } else {
                    missing.join(" and ")
                }
            )
        })
        .collect();
    if !more.is_empty() {
        parts.push(more.to_string());
    }
    parts.join("; ")
}
