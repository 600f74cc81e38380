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
//!
//! The search's parts are types of their own, each in the module that uses it: the
//! [`Context`] every part reads (program, model, static facts; `state.rs`, with the search
//! `State`), the completeness `Gate` (`dead_ends.rs`), the `Symmetry` reduction (`orbits.rs`),
//! the barrier rounds' `LeavesSeen` (`rounds.rs`), and here the [`Limits`] and the search's
//! [`Place`] in the order of the whole search. Only `walk.rs` (the explicit stack of branches)
//! and `revisit.rs` (the revisiting search's moves; what it asks of a state is `Context`'s)
//! extend `Search` itself.

use scopecheck_ir::{Program, ThreadId};

use crate::dead_ends::Gate;
use crate::interp::{Status, Step, ThreadRun};
use crate::orbits::Symmetry;
use crate::progress::Scheduler;
use crate::rounds::LeavesSeen;
use crate::state::{Context, Source, State, Threads};
use crate::statics::ThreadStatics;
use crate::trace::{EventKind, PathEnd, Trace};
use crate::{Budget, Exploration, Graph, Model, OnExecution};

/// Graphs with fewer events than this (initial writes included) are not checked as they grow:
/// their few branches cost less to finish than the check would.
pub const PRUNE_FROM_EVENTS: usize = 12;

pub(crate) struct Search<'a, 'f, 'p> {
    /// The program, the model and the static facts.
    pub(crate) cx: Context<'a, 'p>,
    pub(crate) scheduler: &'a Scheduler,
    /// Threads never scheduled (again) in this search: only hangs are looked for.
    pub(crate) starved: Vec<ThreadId>,
    /// The budget, and when to stop.
    pub(crate) limits: Limits<'a>,
    pub(crate) progress: Option<std::sync::Arc<crate::Counters>>,
    /// The completeness gate (`dead_ends`).
    pub gate: Gate,
    /// Some thread was blocked in a pure iteration (the hang search is worth running).
    pub spun: bool,
    pub out: &'a mut Exploration,
    pub(crate) on_execution: &'a OnExecution<'f, 'p>,
    /// Where this search stands in the order of the whole search.
    pub(crate) place: Place,
    /// Digests of the leaves reached after a choice of barrier rounds (`Rounds::chosen`).
    pub(crate) leaves_seen: LeavesSeen,
    /// The program has a CTA barrier (rounds are formed only then).
    pub(crate) cta_barriers: bool,
    /// Reads take only writes already in the graph, and each new write is placed in coherence
    /// and revisits earlier reads (`revisit`), instead of reads waiting for writes to come.
    pub(crate) revisits: bool,
    /// The symmetry reduction: the classes of interchangeable threads and the orbits
    /// explored (`orbits`).
    pub(crate) symmetry: Symmetry<'a>,
    /// What the depth-first walk has still to do (`walk`).
    pub(crate) frames: Vec<crate::walk::Frame<'p>>,
}

/// How many levels of reads-from choices the hole search explores in parallel, on rayon's
/// threads: enough subtrees to keep two to eight cores busy, few enough that forking costs
/// nothing next to the subtrees.
const FORK_LEVELS: usize = 6;

/// Programs with fewer instructions in all threads are searched sequentially: their searches
/// take well under a millisecond, less than handing subtrees to other threads costs.
const FORK_FROM_INSTRUCTIONS: usize = 20;

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

/// What the searches of one exploration share, whichever threads each one starves.
pub(crate) struct Setup<'a, 'p> {
    pub program: &'p Program,
    pub model: &'a dyn Model,
    pub scheduler: &'a Scheduler,
    pub statics: &'a [ThreadStatics],
    /// Transitive launch successors of each thread.
    pub successors: &'a [Vec<usize>],
    pub budget: Budget,
    pub progress: Option<std::sync::Arc<crate::Counters>>,
    /// Classes of interchangeable threads, explored one state per orbit (`orbits`).
    pub classes: &'a [Vec<usize>],
    /// Whether the search may explore subtrees on rayon's threads (`ExploreOptions::parallel`).
    pub parallel: bool,
}

impl<'a, 'f, 'p> Search<'a, 'f, 'p> {
    /// The search of `setup`'s program that never schedules `starved` (again), revisiting
    /// (`revisits`) or with holes, adding what it finds to `out` and handing executions to
    /// `on_execution`; it stops when `halt` is set.
    pub(crate) fn new(
        setup: &Setup<'a, 'p>,
        starved: Vec<ThreadId>,
        revisits: bool,
        out: &'a mut Exploration,
        on_execution: &'a OnExecution<'f, 'p>,
        halt: &'a std::sync::atomic::AtomicBool,
    ) -> Self {
        let Setup {
            program,
            model,
            scheduler,
            statics,
            successors,
            budget,
            ref progress,
            classes,
            parallel,
        } = *setup;
        let progress = progress.clone();
        let cta_barriers = program.threads.iter().any(|t| {
            t.code
                .iter()
                .any(|i| matches!(i.kind, scopecheck_ir::InstrKind::Barrier { .. }))
        });
        // Forked workers run their subtrees in any order; the keys of what they find
        // (`Found::key`) make the report the sequential search's. Searches whose memos span
        // subtrees (symmetry, barrier rounds) or whose budget would cut them at a point that
        // depends on the workers run sequentially, as do the revisiting and starvation
        // searches.
        let instructions: usize = program.threads.iter().map(|t| t.code.len()).sum();
        let forks_left = if parallel
            && instructions >= FORK_FROM_INSTRUCTIONS
            && classes.is_empty()
            && !revisits
            && starved.is_empty()
            && budget.max_executions.is_none()
            && !cta_barriers
            && rayon::current_num_threads() > 1
        {
            FORK_LEVELS
        } else {
            0
        };
        Search {
            cx: Context {
                program,
                model,
                statics,
                successors,
            },
            scheduler,
            starved,
            limits: Limits::new(budget, halt),
            progress,
            gate: Gate::default(),
            spun: false,
            out,
            on_execution,
            place: Place {
                prefix: vec![],
                counter: 0,
                forks_left,
            },
            revisits,
            leaves_seen: Default::default(),
            symmetry: Symmetry::new(classes, statics),
            cta_barriers,
            frames: Vec::new(),
        }
    }

    pub(crate) fn run(&mut self) {
        let run_ahead = !self.cx.model.porf_acyclic();
        let mut threads: Threads = self
            .cx
            .program
            .threads
            .iter()
            .map(|t| ThreadRun::new(self.cx.program, t, run_ahead))
            .collect();
        if !self.scheduler.preempts() {
            for t in &self.starved {
                threads[t.0 as usize].starve();
            }
        }
        let co = if self.revisits {
            (0..self.cx.program.locations.len())
                .map(|l| vec![l])
                .collect()
        } else {
            vec![]
        };
        self.walk(State {
            threads,
            graph: Graph::empty(self.cx.program),
            fresh: vec![],
            co,
            rounds: Default::default(),
        });
    }

    /// Whether the search must stop now (a failed gate or a spent budget).
    pub(crate) fn stopped(&mut self) -> bool {
        let must = self.gate.failure.is_some()
            || self.out.cut_short.is_some()
            || self.out.symmetry_abandoned
            || self.out.commute_abandoned;
        self.limits.stopped(must, self.out)
    }

    /// The thread to run next: the lowest-numbered one that can run; in the hole search, one
    /// not about to read inside a loop if there is one, in the revisiting search one that would
    /// not block there reading the latest writes (`would_block`). Any choice that depends on
    /// the state alone keeps either search complete (docs/explore.md); running the others first
    /// lets an await read find the writes it waits for already made, instead of waiting for
    /// them in a hole whose branch every later thread's choices multiply, or blocking on a
    /// write that every later write must then revisit or leave stale.
    fn next_thread(&self, st: &State) -> Option<usize> {
        let ready = |t: usize| st.threads[t].status == Status::Ready && self.cx.launched(st, t);
        if !self.revisits {
            let spins = |t: usize| self.cx.statics[t].is_loop_read(st.threads[t].pc());
            if let Some(t) = (0..st.threads.len()).find(|&t| ready(t) && !spins(t)) {
                return Some(t);
            }
        } else if let Some(t) =
            (0..st.threads.len()).find(|&t| ready(t) && !self.cx.would_block(st, t))
        {
            return Some(t);
        }
        (0..st.threads.len()).find(|&t| ready(t))
    }

    /// Visits a state: offers it its newest write, or runs its threads on. The walk checked the
    /// budget before.
    pub(crate) fn visit(&mut self, mut st: State<'p>) {
        if let Some(&w) = st.fresh.last() {
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
            // Under symmetry a state with a write some hole may take is named by its form too
            // (the writes still to offer are part of it): of the orders in which
            // interchangeable threads waiting at holes take a chain of writes (each taker's
            // fetch-and-add the next one's), one per orbit is explored, not every order.
            if !takers.is_empty()
                && self.symmetry.reduces()
                && self.symmetry.explore(&st, false).is_none()
            {
                return;
            }
            st.fresh.pop();
            if !takers.is_empty() && st.graph.len() >= PRUNE_FROM_EVENTS {
                self.cx.model.extend_memos(&st.graph);
            }
            return self.offer(st, w, takers.into(), 0);
        }
        // A hole no thread can fill any more: no completion of this graph exists, unless the
        // threads that wait on each other in a cycle could break it where the gate cannot
        // vouch that an axiom forbids it (the same rules as at a dead end).
        if let Some(waiting) = self.cx.unfillable_hole(&st) {
            self.out.dead_ends += 1;
            self.gate.check(&self.cx, &st, &waiting);
            return;
        }
        if !self.symmetry.reduces() {
            return self.run_threads(st, None);
        }
        // A state whose image under the classes' permutations was explored: its completions
        // are the images of that one's; so are those of a state it subsumes.
        let Some(digest) = self.symmetry.explore(&st, true) else {
            return;
        };
        // Once the search below it is over (and was not stopped), the state is done.
        self.frames.push(crate::walk::Frame::Done(digest));
        self.run_threads(st, None);
    }

    /// Runs threads, each step from the thread `next_thread` picks, until the search branches
    /// (and pushes the branches for the walk). `resume`: step this thread first, the branch
    /// where it was starved done.
    pub(crate) fn run_threads(&mut self, mut st: State<'p>, mut resume: Option<usize>) {
        loop {
            let t = match resume.take() {
                Some(t) => t,
                None => {
                    if self.cta_barriers {
                        st = match self.form_rounds(st) {
                            Some(st) => st,
                            None => return,
                        };
                    }
                    self.cx.complete_barriers(&mut st);
                    let Some(t) = self.next_thread(&st) else {
                        return self.leaf(st);
                    };
                    if self.starved.contains(&ThreadId(t as u32)) {
                        // A preempting scheduler may stop a starved thread before any
                        // instruction: that branch first, then this one goes on.
                        let mut frozen = st.clone();
                        frozen.threads[t].starve();
                        self.frames.push(crate::walk::Frame::Step(st, t));
                        self.frames.push(crate::walk::Frame::Visit(frozen));
                        return;
                    }
                    t
                }
            };
            let thread = &self.cx.program.threads[t];
            let events = st.threads[t].trace.events.len();
            let step = st.threads[t].step(self.cx.program, thread, &self.cx.statics[t]);
            self.cx.sync_graph(&mut st, t);
            if st.threads[t].trace.events.len() > events {
                if let Some(message) = self.cx.mixed_count(&st, t) {
                    st.threads[t].fault_at_last_event(message);
                    continue;
                }
            }
            match step {
                Step::Wrote(e) if self.revisits => return self.add_write(st, t, e),
                Step::Wrote(e) => {
                    // A write adds coherence edges only into itself: it can make a spinner
                    // stale only at a location some spinner read.
                    if self.cx.spinner_read_loc(&st, t, e) && self.cx.spinner_goes_stale(&st) {
                        self.out.blocked += 1;
                        return;
                    }
                    st.fresh.push((t, e));
                    return self.frames.push(crate::walk::Frame::Visit(st));
                }
                Step::NeedsValue if self.revisits => return self.read_placed(st, t),
                Step::NeedsValue => return self.choose_read(st, t),
                Step::Converges => return self.choose_convergence(st, t),
                Step::Stopped => {
                    if let PathEnd::Blocked { instr, .. } = st.threads[t].trace.end {
                        self.spun = true;
                        // A loop is named by the last backward branch to its head.
                        let code = &self.cx.program.threads[t].code;
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
                        // Under symmetry its images in the other threads of its class too.
                        let class = self.symmetry.class_of(t);
                        for u in class.map_or(vec![t], |c| c.clone()) {
                            let l = (ThreadId(u as u32), last);
                            if !self.out.reduced_loops.contains(&l) {
                                self.out.reduced_loops.push(l);
                            }
                        }
                        if self.revisits && self.cx.spins_on_stale_write(&st, t) {
                            self.out.blocked += 1;
                            return;
                        }
                        if !self.revisits && self.cx.spinner_goes_stale(&st) {
                            self.out.blocked += 1;
                            return;
                        }
                    }
                }
                Step::Other | Step::Waits | Step::Suspended => {}
            }
        }
    }

    /// Fills hole `r` of thread `t` from `src`; false when no completion is consistent.
    pub(crate) fn fill(&mut self, st: &mut State<'p>, t: usize, r: usize, src: Source) -> bool {
        let v = self.cx.value(st, src);
        let readable = st.threads[t].fill_hole(
            self.cx.program,
            &self.cx.program.threads[t],
            &self.cx.statics[t],
            r,
            v,
        );
        self.cx.sync_graph(st, t);
        self.set_rf(st, t, r, src);
        st.fresh.extend(readable.into_iter().map(|w| (t, w)));
        self.check(st, t, r, src, false)
    }

    /// Lets thread `t` read from `src`; false when the model says no completion is consistent.
    /// `judged`: the model already said the graph so made may be completed
    /// ([`Model::readable`]), so only what it leaves to the explorer is asked.
    pub(crate) fn resolve(
        &mut self,
        st: &mut State<'p>,
        t: usize,
        src: Source,
        judged: bool,
    ) -> bool {
        let v = self.cx.value(st, src);
        let (r, w) = st.threads[t].resolve_read(v);
        self.cx.sync_graph(st, t);
        self.set_rf(st, t, r, src);
        if let Some(w) = w {
            st.fresh.push((t, w));
        }
        self.check(st, t, r, src, judged)
    }

    fn set_rf(&self, st: &mut State<'p>, t: usize, r: usize, src: Source) {
        let read = st.graph.thread_events[t][r];
        st.graph.rf[read] = Some(src.global(&st.graph));
    }

    /// Whether the graph of `st`, where read `r` of thread `t` now reads from `src`, may still
    /// be completed into a consistent execution (`judged`: as far as the model is concerned,
    /// it may).
    fn check(&mut self, st: &State<'p>, t: usize, r: usize, src: Source, judged: bool) -> bool {
        let g = &st.graph;
        let read = g.thread_events[t][r];
        let write = src.global(g);
        if !self.cx.model.may_read_from(g, read, write) {
            return false;
        }
        // Pruning is optional (every complete graph is judged in full): on a small graph the
        // check costs more than the branches it could cut.
        if g.len() < PRUNE_FROM_EVENTS {
            return true;
        }
        self.out.checks += 1;
        (judged || self.cx.model.consistent_so_far(g))
            && (self.revisits
                || !self.cx.read_may_stale_spinner(st, t, r)
                || !self.cx.spinner_goes_stale(st))
    }

    /// A state where no thread can run.
    fn leaf(&mut self, mut st: State<'p>) {
        // A round left to arrivals that never came: it completed with those it had, along
        // another branch.
        if st.rounds.deferral_pending() {
            return;
        }
        if st.threads.iter().any(|t| !t.holes.is_empty()) {
            self.out.dead_ends += 1;
            // Holes whose writers all stopped hide no execution; only a cycle needs the gate.
            match self.cx.unfillable_hole(&st) {
                Some(cycle) => self.gate.check(&self.cx, &st, &cycle),
                None => self.dead_end(&st),
            }
            return;
        }
        let mut starved = self.starved.clone();
        for t in 0..st.threads.len() {
            let th = &mut st.threads[t];
            th.seal_registers();
            match th.status {
                Status::Waiting(_) => th.stuck_at_barrier(),
                // Never launched: a thread it starts after never finished.
                Status::Ready => {
                    th.starve();
                    starved.push(ThreadId(t as u32));
                }
                Status::Stopped
                | Status::Reads(_)
                | Status::Suspended
                | Status::Converges { .. } => {}
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
        if !self.cx.convergence_kept(&st) || !self.leaves_seen.first_visit(&st) {
            return;
        }
        if self.cannot_hang(&st) {
            self.out.blocked += 1;
            if let Some(c) = &self.progress {
                c.blocked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            return;
        }
        // Under symmetry reduction one leaf of each orbit is judged, for the whole orbit.
        let weight = if !self.symmetry.reduces() {
            1
        } else {
            let Some((digest, size)) = self.symmetry.leaf_orbit(&st) else {
                self.out.symmetry_abandoned = true;
                return;
            };
            if !self.symmetry.orbits_seen.insert(digest) {
                return;
            }
            size
        };
        let weight = weight.saturating_mul(self.chain_updates(&mut st));
        if self.out.commute_abandoned {
            return;
        }
        let key = self.place.next_key();
        let paths: Vec<&Trace> = st.threads.iter().map(|t| &t.trace).collect();
        let g = &st.graph;
        let finished = paths.iter().all(|p| p.end == PathEnd::Finished);
        if finished {
            self.limits.found += 1;
            self.out.finished += 1;
        } else {
            self.out.blocked += 1;
        }
        if let Some(c) = &self.progress {
            let counter = if finished { &c.executions } else { &c.blocked };
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let mut leaf = crate::Leaf {
            program: self.cx.program,
            model: self.cx.model,
            scheduler: self.scheduler,
            starved: &starved,
            only_hangs: !self.starved.is_empty(),
            out: &mut *self.out,
            on_execution: self.on_execution,
            key: &key,
            budget: &self.limits.budget,
        };
        let co = self
            .revisits
            .then(|| crate::revisit::co_relation(g, &st.co));
        leaf.judge(g, &paths, weight, co.as_ref());
    }

    /// Chains the blind updates of a leaf (`commute`): gives them their values along the
    /// chain of each location and, in the hole search, fixes that chain in coherence. Returns
    /// how many coherence orders of the updates the leaf stands for (1 without updates).
    fn chain_updates(&mut self, st: &mut State<'p>) -> crate::count::Count {
        let placed = self.revisits.then_some(&st.co[..]);
        let Some(chains) =
            crate::commute::chains(&st.graph, self.cx.model, self.cx.statics, placed)
        else {
            return 1;
        };
        if chains.entangled {
            self.out.commute_abandoned = true;
            return 1;
        }
        let mut fixed = crate::Relation::new(st.graph.len());
        for chain in &chains.chains {
            let values = crate::commute::values(&st.graph, self.cx.statics, chain);
            for (k, (&e, v)) in chain.iter().zip(values).enumerate() {
                let EventKind::Write {
                    loc, order, scope, ..
                } = st.graph.events[e].kind
                else {
                    unreachable!("an update is a write");
                };
                let kind = EventKind::Write {
                    loc,
                    value: v,
                    order,
                    scope,
                };
                st.graph.set_kind(e, kind);
                let t = st.graph.events[e].thread.expect("a thread's update").0 as usize;
                let i = st.graph.path_index(t, e);
                st.threads[t].trace.events[i].kind = kind;
                for &later in &chain[k + 1..] {
                    fixed.insert(e, later);
                }
            }
        }
        if !self.revisits {
            st.graph.fixed_co = Some(fixed);
        }
        chains.orders
    }

    /// Whether a leaf where some thread spins can be neither a hang nor anything else worth
    /// judging: no thread was cut or faulted, and some spinner reads a write that a later write
    /// of the same thread to the same location follows (so, in every model, in coherence): it
    /// does not read the latest write, and will not spin forever.
    fn cannot_hang(&self, st: &State<'p>) -> bool {
        let cut_or_fault = st.threads.iter().any(|t| {
            t.status == Status::Stopped
                && matches!(t.trace.end, PathEnd::Cut { .. } | PathEnd::Fault { .. })
        });
        !cut_or_fault
            && (self.cx.some_spinner_reads_stale(st)
                || (self.revisits && self.cx.some_spinner_reads_before_latest(st)))
    }

    /// A state where no thread can run and some read waits for a write no one can make now.
    /// Along the path of choices that a consistent execution determines, this happens only when
    /// the waiting reads and what holds up the writes they wait for form a cycle: each link is
    /// a hole, then what its thread cannot do without the value, then the write (or barrier
    /// arrival, or finish before a launch) that another hole needs. The search is complete when
    /// every such cycle breaks an axiom (docs/explore.md); the gate fails when one might not.
    fn dead_end(&mut self, st: &State) {
        let holed: Vec<usize> = (0..st.threads.len())
            .filter(|&t| !st.threads[t].holes.is_empty())
            .collect();
        self.gate.check(&self.cx, st, &holed);
    }
}

/// What stops a search: its budget, and the flag its workers share.
pub(crate) struct Limits<'a> {
    pub budget: Budget,
    /// Set when some worker of the search must stop (a failed gate, a spent budget, a
    /// symmetry reduction abandoned): the others stop too.
    halt: &'a std::sync::atomic::AtomicBool,
    /// Consistent executions handed on.
    pub found: u64,
    /// How often this worker asked whether to stop (the budget reads the clock every so
    /// often).
    checks: u32,
}

impl<'a> Limits<'a> {
    pub fn new(budget: Budget, halt: &'a std::sync::atomic::AtomicBool) -> Self {
        Limits {
            budget,
            halt,
            found: 0,
            checks: 0,
        }
    }

    /// The limits of a worker of the same search: the same budget and flag.
    pub fn worker(&self) -> Self {
        Limits::new(self.budget, self.halt)
    }

    /// Whether the search must stop now: it `must` (and then every worker stops), another
    /// worker stopped, or the budget is spent with what `out` holds (which then says why).
    pub fn stopped(&mut self, must: bool, out: &mut Exploration) -> bool {
        if must {
            self.halt.store(true, std::sync::atomic::Ordering::Relaxed);
            return true;
        }
        if self.halt.load(std::sync::atomic::Ordering::Relaxed) {
            return true;
        }
        self.checks = self.checks.wrapping_add(1);
        let spent = self.budget.spent(out, self.checks);
        if spent {
            self.halt.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        spent
    }
}

/// Where a search stands in the order of the whole search (`Found::key`): the prefix its fork
/// gave it and the states and leaves it met since, in depth-first order.
pub(crate) struct Place {
    prefix: Vec<u64>,
    counter: u64,
    /// How many more levels of choices may be explored in parallel (0: sequentially).
    pub forks_left: usize,
}

impl Place {
    /// The place of what the search meets next.
    fn next_key(&mut self) -> Vec<u64> {
        self.counter += 1;
        let mut key = self.prefix.clone();
        key.push(self.counter);
        key
    }

    /// Takes the places of a fork (and of what follows it): the fork's own, which its
    /// children's places extend ([`Place::child`]).
    pub fn fork(&mut self) -> u64 {
        let at = self.counter + 1;
        self.counter += 2;
        at
    }

    /// The place of child `i` of the fork at `at`, one level of forks fewer left.
    pub fn child(&self, at: u64, i: usize) -> Place {
        let mut prefix = self.prefix.clone();
        prefix.extend([at, i as u64]);
        Place {
            prefix,
            counter: 0,
            forks_left: self.forks_left - 1,
        }
    }
}
