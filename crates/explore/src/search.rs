//! The graph explorer: threads are interpreted against an execution graph grown event by event.
//!
//! The next event always comes from the lowest-numbered thread that can run. A read branches
//! over the writes already in the graph that it may read from, and over *waiting* for a write
//! not yet added (the thread is suspended); a new write is offered to every suspended read of
//! its location, each of which takes it or goes on waiting. So every execution is built along
//! exactly one path of choices, determined by the execution itself, and memory stays one graph
//! per level of the depth-first search. The model prunes every partial graph that no
//! completion could make consistent, and judges complete graphs (coherence and the orders it
//! quantifies over) as before. docs/explore.md proves the search complete when each
//! consistent execution's `po ∪ rf` (with barrier and launch edges) is acyclic, and the gate
//! [`Search::dead_end`] detects every program where that may fail, so that the caller can
//! fall back to the candidate enumerator.

use std::time::Instant;

use scopecheck_ir::{BarrierRedOp, LocId, Placement, Program, ThreadId, Value};

use crate::interp::{Status, Step, ThreadRun};
use crate::progress::Scheduler;
use crate::statics::ThreadStatics;
use crate::trace::{EventKind, PathEnd, Trace};
use crate::{Exploration, Graph, Model, OnExecution};

/// Where a read's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Init(LocId),
    /// (thread, path index)
    Event(usize, usize),
}

#[derive(Clone)]
struct State {
    threads: Vec<ThreadRun>,
    /// Per thread, per path index: what a read reads from.
    rf: Vec<Vec<Option<Source>>>,
    /// Writes not yet offered to the suspended reads.
    fresh: Vec<(usize, usize)>,
}

/// Why the search cannot vouch for its own completeness on this program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateFailure(pub String);

/// Limits of one search.
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget {
    pub max_executions: Option<u64>,
    pub deadline: Option<Instant>,
}

pub(crate) struct Search<'a, 'f, 'p> {
    program: &'p Program,
    model: &'a dyn Model,
    scheduler: &'a Scheduler,
    statics: &'a [ThreadStatics],
    /// Threads never scheduled (again) in this search: only hangs are looked for.
    starved: Vec<ThreadId>,
    /// Transitive launch successors of each thread.
    successors: &'a [Vec<usize>],
    budget: Budget,
    pub gate: Option<GateFailure>,
    /// Some thread was blocked in a pure iteration (the hang search is worth running).
    pub spun: bool,
    pub out: &'a mut Exploration,
    on_execution: &'a mut OnExecution<'f, 'p>,
    /// Consistent executions handed on, for the budget.
    found: u64,
    checks: u32,
    /// What each thread could do from where it waits (by thread, instruction, unknown
    /// registers), for the gate.
    after: std::collections::HashMap<(usize, usize, Vec<usize>), crate::statics::AfterRead>,
}

/// The CTA key of a thread for barrier rounds (host threads each have their own).
fn cta_of(p: &Placement, t: usize) -> (u32, u32, u32, usize) {
    match p {
        Placement::Device(d) => (d.gpu, d.cluster, d.cta, usize::MAX),
        Placement::Host => (u32::MAX, u32::MAX, u32::MAX, t),
    }
}

/// Transitive launch successors (`Thread::after`) of every thread.
pub(crate) fn launch_successors(program: &Program) -> Vec<Vec<usize>> {
    let n = program.threads.len();
    (0..n)
        .map(|t| {
            let mut out: Vec<usize> = Vec::new();
            let mut stack = vec![t];
            while let Some(x) = stack.pop() {
                for (s, th) in program.threads.iter().enumerate() {
                    if th.after.iter().any(|a| a.0 as usize == x) && !out.contains(&s) {
                        out.push(s);
                        stack.push(s);
                    }
                }
            }
            out
        })
        .collect()
}

impl<'a, 'f, 'p> Search<'a, 'f, 'p> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        program: &'p Program,
        model: &'a dyn Model,
        scheduler: &'a Scheduler,
        statics: &'a [ThreadStatics],
        successors: &'a [Vec<usize>],
        starved: Vec<ThreadId>,
        budget: Budget,
        out: &'a mut Exploration,
        on_execution: &'a mut OnExecution<'f, 'p>,
    ) -> Self {
        Search {
            program,
            model,
            scheduler,
            statics,
            starved,
            successors,
            budget,
            gate: None,
            spun: false,
            out,
            on_execution,
            found: 0,
            checks: 0,
            after: Default::default(),
        }
    }

    pub(crate) fn run(&mut self) {
        let run_ahead = !self.model.porf_acyclic();
        let mut threads: Vec<ThreadRun> = self
            .program
            .threads
            .iter()
            .map(|t| ThreadRun::new(t, run_ahead))
            .collect();
        if !self.scheduler.preempts() {
            for t in &self.starved {
                threads[t.0 as usize].starve();
            }
        }
        let n = threads.len();
        self.visit(State {
            threads,
            rf: vec![vec![]; n],
            fresh: vec![],
        });
    }

    /// Whether the search must stop now (a failed gate or a spent budget).
    fn stopped(&mut self) -> bool {
        if self.gate.is_some() || self.out.cut_short.is_some() {
            return true;
        }
        if let Some(max) = self.budget.max_executions {
            if self.found >= max {
                self.out.cut_short = Some(format!("--max-executions {max} was reached"));
                return true;
            }
        }
        self.checks = self.checks.wrapping_add(1);
        if self.checks.is_multiple_of(256) {
            if let Some(d) = self.budget.deadline {
                if Instant::now() >= d {
                    self.out.cut_short = Some("the --timeout was reached".into());
                    return true;
                }
            }
        }
        false
    }

    fn launched(&self, st: &State, t: usize) -> bool {
        self.program.threads[t].after.iter().all(|a| {
            let a = &st.threads[a.0 as usize];
            a.status == Status::Stopped && a.trace.end == PathEnd::Finished
        })
    }

    fn next_thread(&self, st: &State) -> Option<usize> {
        (0..st.threads.len())
            .find(|&t| st.threads[t].status == Status::Ready && self.launched(st, t))
    }

    fn sync_rf(st: &mut State, t: usize) {
        let len = st.threads[t].trace.events.len();
        st.rf[t].resize(len, None);
    }

    fn visit(&mut self, mut st: State) {
        if self.stopped() {
            return;
        }
        if let Some(w) = st.fresh.pop() {
            let loc = st.threads[w.0].trace.events[w.1]
                .kind
                .loc()
                .expect("a write");
            let takers: Vec<(usize, usize)> = (0..st.threads.len())
                .flat_map(|u| {
                    st.threads[u]
                        .holes
                        .iter()
                        .filter(move |h| h.1.loc == loc)
                        .map(move |h| (u, h.0))
                })
                .collect();
            return self.offer(st, w, &takers);
        }
        loop {
            self.complete_barriers(&mut st);
            let Some(t) = self.next_thread(&st) else {
                return self.leaf(st);
            };
            if self.starved.contains(&ThreadId(t as u32)) {
                // A preempting scheduler may stop a starved thread before any instruction.
                let mut frozen = st.clone();
                frozen.threads[t].starve();
                self.visit(frozen);
                if self.stopped() {
                    return;
                }
            }
            let thread = &self.program.threads[t];
            let step = st.threads[t].step(self.program, thread, &self.statics[t]);
            Self::sync_rf(&mut st, t);
            match step {
                Step::Wrote(e) => {
                    st.fresh.push((t, e));
                    return self.visit(st);
                }
                Step::NeedsValue => return self.choose_read(st, t),
                Step::Stopped => {
                    if let PathEnd::Blocked { instr, .. } = st.threads[t].trace.end {
                        self.spun = true;
                        // A loop is named by the last backward branch to its head.
                        let code = &self.program.threads[t].code;
                        let head = match code[instr].kind {
                            scopecheck_ir::InstrKind::Branch { target, .. } => target,
                            _ => instr,
                        };
                        let last = (head..code.len())
                            .rev()
                            .find(|&b| {
                                matches!(code[b].kind, scopecheck_ir::InstrKind::Branch { target, .. } if target == head)
                            })
                            .unwrap_or(instr);
                        let l = (ThreadId(t as u32), last);
                        if !self.out.reduced_loops.contains(&l) {
                            self.out.reduced_loops.push(l);
                        }
                    }
                }
                Step::Other | Step::Waits | Step::Suspended => {}
            }
        }
    }

    /// Offers write `w` to each hole in `takers` (thread, path index): it takes it or waits on.
    fn offer(&mut self, st: State, w: (usize, usize), takers: &[(usize, usize)]) {
        let Some((&(u, r), rest)) = takers.split_first() else {
            return self.visit(st);
        };
        self.offer(st.clone(), w, rest);
        if self.stopped() {
            return;
        }
        let mut taken = st;
        if self.fill(&mut taken, u, r, Source::Event(w.0, w.1)) {
            self.offer(taken, w, rest);
        }
    }

    /// Fills hole `r` of thread `t` from `src`; false when no completion is consistent.
    fn fill(&mut self, st: &mut State, t: usize, r: usize, src: Source) -> bool {
        let v = self.value(st, src);
        let readable = st.threads[t].fill_hole(
            self.program,
            &self.program.threads[t],
            &self.statics[t],
            r,
            v,
        );
        Self::sync_rf(st, t);
        st.rf[t][r] = Some(src);
        st.fresh.extend(readable.into_iter().map(|w| (t, w)));
        self.check(st, t, r, src)
    }

    /// The value of a source in `st`.
    fn value(&self, st: &State, s: Source) -> Value {
        match s {
            Source::Init(l) => self.program.location(l).init,
            Source::Event(t, i) => st.threads[t].trace.events[i]
                .kind
                .value()
                .expect("a write has a value"),
        }
    }

    /// Lets thread `t` read from `src`; false when the model says no completion is consistent.
    fn resolve(&mut self, st: &mut State, t: usize, src: Source) -> bool {
        let v = self.value(st, src);
        let (r, w) = st.threads[t].resolve_read(v);
        Self::sync_rf(st, t);
        st.rf[t][r] = Some(src);
        if let Some(w) = w {
            st.fresh.push((t, w));
        }
        self.check(st, t, r, src)
    }

    /// Whether the graph of `st`, where read `r` of thread `t` now reads from `src`, may still
    /// be completed into a consistent execution.
    fn check(&mut self, st: &State, t: usize, r: usize, src: Source) -> bool {
        let Ok(g) = self.graph(st) else {
            self.gate = Some(GateFailure(
                "a barrier's rounds do not match its thread count".into(),
            ));
            return false;
        };
        let read = g.thread_start[t] + r;
        let write = self.global(&g, src);
        self.model.may_read_from(&g, read, write) && self.model.consistent_so_far(&g)
    }

    fn global(&self, g: &Graph, s: Source) -> usize {
        match s {
            Source::Init(l) => l.0 as usize,
            Source::Event(t, i) => g.thread_start[t] + i,
        }
    }

    fn graph(&self, st: &State) -> Result<Graph<'p>, crate::NotAnExecution> {
        let paths: Vec<&Trace> = st.threads.iter().map(|t| &t.trace).collect();
        let mut g = Graph::new(self.program, &paths)?;
        for (t, rfs) in st.rf.iter().enumerate() {
            for (i, s) in rfs.iter().enumerate() {
                if let Some(s) = s {
                    g.rf[g.thread_start[t] + i] = Some(self.global(&g, *s));
                }
            }
        }
        Ok(g)
    }

    fn choose_read(&mut self, st: State, t: usize) {
        let Status::Reads(req) = st.threads[t].status.clone() else {
            unreachable!("choose_read on a thread that does not read");
        };
        let mut sources = vec![Source::Init(req.loc)];
        for (u, th) in st.threads.iter().enumerate() {
            for (i, e) in th.trace.events.iter().enumerate() {
                if matches!(e.kind, EventKind::Write { loc, .. } if loc == req.loc)
                    && !th.value_holes.contains(&i)
                {
                    sources.push(Source::Event(u, i));
                }
            }
        }
        for s in sources {
            let mut next = st.clone();
            if self.resolve(&mut next, t, s) {
                self.visit(next);
            }
            if self.stopped() {
                return;
            }
        }
        // Or it reads a write not yet made, by a thread that can still make it.
        if self.may_still_be_written(&st, t, req.loc) {
            let mut next = st;
            next.threads[t].make_hole();
            Self::sync_rf(&mut next, t);
            self.visit(next);
        }
    }

    /// Whether a thread other than `t` that may run at the same time as `t` could still write
    /// `loc` (a thread launched after `t` cannot write what `t` reads: causality).
    fn may_still_be_written(&self, st: &State, t: usize, loc: LocId) -> bool {
        (0..st.threads.len()).any(|u| {
            let th = &st.threads[u];
            u != t
                && !self.successors[t].contains(&u)
                && ((th.status != Status::Stopped && self.statics[u].writes.contains(&loc))
                    || th
                        .value_holes
                        .iter()
                        .any(|&w| th.trace.events[w].kind.loc() == Some(loc)))
        })
    }

    /// Lets every waiting thread whose barrier round is complete through.
    fn complete_barriers(&self, st: &mut State) {
        loop {
            let mut released = false;
            for t in 0..st.threads.len() {
                let Status::Waiting(w) = &st.threads[t].status else {
                    continue;
                };
                let (barrier, round) = (w.barrier, w.round);
                let cta = cta_of(&self.program.threads[t].placement, t);
                let members: Vec<usize> = (0..st.threads.len())
                    .filter(|&u| cta_of(&self.program.threads[u].placement, u) == cta)
                    .collect();
                let mut arrivals: Vec<(Option<u32>, Option<Value>)> = Vec::new();
                for &u in &members {
                    let a = st.threads[u]
                        .trace
                        .events
                        .iter()
                        .filter_map(|e| match e.kind {
                            EventKind::Arrive {
                                barrier: b,
                                count,
                                pred,
                            } if b == barrier => Some((count, pred)),
                            _ => None,
                        })
                        .nth(round as usize);
                    arrivals.extend(a);
                }
                let expected = arrivals
                    .iter()
                    .find_map(|a| a.0)
                    .map(|c| c as usize)
                    .unwrap_or(members.len());
                if arrivals.len() != expected {
                    continue;
                }
                let red = match w.red {
                    None => None,
                    Some((op, _)) => {
                        let preds = arrivals.iter().map(|a| a.1.unwrap_or(0) != 0);
                        Some(match op {
                            BarrierRedOp::Popc => preds.filter(|p| *p).count() as Value,
                            BarrierRedOp::And => Value::from(preds.clone().all(|p| p)),
                            BarrierRedOp::Or => Value::from(preds.clone().any(|p| p)),
                        })
                    }
                };
                st.threads[t].pass_barrier(red);
                Self::sync_rf(st, t);
                released = true;
            }
            if !released {
                return;
            }
        }
    }

    /// A state where no thread can run.
    fn leaf(&mut self, mut st: State) {
        if st.threads.iter().any(|t| !t.holes.is_empty()) {
            return self.dead_end(&st);
        }
        let mut starved = self.starved.clone();
        for t in 0..st.threads.len() {
            let th = &mut st.threads[t];
            match th.status {
                Status::Waiting(_) => th.stuck_at_barrier(),
                // Never launched: a thread it starts after never finished.
                Status::Ready => {
                    th.starve();
                    starved.push(ThreadId(t as u32));
                }
                Status::Stopped | Status::Reads(_) | Status::Suspended => {}
            }
        }
        starved.sort_unstable();
        starved.dedup();
        if !self.starved.is_empty() {
            for t in &self.starved {
                let th = &mut st.threads[t.0 as usize];
                if th.trace.end == PathEnd::Finished {
                    th.trace.end = PathEnd::Starved;
                }
            }
            if st
                .threads
                .iter()
                .any(|t| matches!(t.trace.end, PathEnd::Cut { .. } | PathEnd::Fault { .. }))
            {
                return;
            }
        }
        let Ok(g) = self.graph(&st) else {
            self.gate = Some(GateFailure(
                "a barrier's rounds do not match its thread count".into(),
            ));
            return;
        };
        let paths: Vec<&Trace> = st.threads.iter().map(|t| &t.trace).collect();
        if paths.iter().all(|p| p.end == PathEnd::Finished) {
            self.found += 1;
        } else {
            self.out.blocked += 1;
        }
        let mut leaf = crate::Leaf {
            program: self.program,
            model: self.model,
            scheduler: self.scheduler,
            starved: &starved,
            out: &mut *self.out,
            on_execution: &mut *self.on_execution,
        };
        leaf.judge(&g, &paths);
    }

    /// A state where no thread can run and some read waits for a write no one can make now.
    /// Along the path of choices that a consistent execution determines, this happens only when
    /// the waiting reads and what holds up the writes they wait for form a cycle: each link is
    /// a hole, then what its thread cannot do without the value, then the write (or barrier
    /// arrival, or finish before a launch) that another hole needs. The search is complete when
    /// every such cycle breaks an axiom (docs/explore.md); the gate fails when one might not.
    fn dead_end(&mut self, st: &State) {
        let waits_on = |loc: LocId, me: usize| {
            st.threads
                .iter()
                .enumerate()
                .any(|(v, th)| v != me && th.holes.iter().any(|h| h.1.loc == loc))
        };
        for (u, th) in st.threads.iter().enumerate() {
            if th.holes.is_empty() {
                continue;
            }
            let key = (u, th.pc(), th.unknown_registers().collect::<Vec<_>>());
            let after = match self.after.get(&key) {
                Some(a) => a.clone(),
                None => {
                    let a = crate::statics::after_holes(&self.program.threads[u], key.1, &key.2);
                    self.after.insert(key, a.clone());
                    a
                }
            };
            let cta = cta_of(&self.program.threads[u].placement, u);
            let barrier_waits_on_it = after.reaches_arrive
                && (0..st.threads.len()).any(|w| {
                    matches!(st.threads[w].status, Status::Waiting(_))
                        && cta_of(&self.program.threads[w].placement, w) == cta
                });
            let name = &self.program.threads[u].name;
            if barrier_waits_on_it {
                self.gate = Some(GateFailure(format!(
                    "{name} waits for a value before a barrier others wait at"
                )));
                return;
            }
            if self.successors[u]
                .iter()
                .any(|&s| self.statics[s].writes.iter().any(|&l| waits_on(l, u)))
            {
                self.gate = Some(GateFailure(format!(
                    "{name} waits for a value before threads launched after it write what others wait for"
                )));
                return;
            }
            if !self.model.porf_acyclic()
                && after.independent_writes.iter().any(|&l| waits_on(l, u))
            {
                self.gate = Some(GateFailure(format!(
                    "{name} could write, without the value it waits for, what another thread waits for"
                )));
                return;
            }
        }
    }
}
