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

use scopecheck_ir::{LocId, Program, ThreadId, Value, VoteOp};

use crate::graph::{barrier_members, cta_key};
use crate::interp::{Status, Step, ThreadRun};
use crate::progress::Scheduler;
use crate::statics::ThreadStatics;
use crate::trace::{BarrierName, EventKind, PathEnd, Trace, WarpKind};
use crate::{Budget, Exploration, Graph, Model, OnExecution};

/// Graphs with fewer events than this (initial writes included) are not checked as they grow:
/// their few branches cost less to finish than the check would.
pub const PRUNE_FROM_EVENTS: usize = 12;

/// Where a read's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Init(LocId),
    /// (thread, path index)
    Event(usize, usize),
}

#[derive(Clone)]
pub(crate) struct State<'p> {
    pub threads: Threads,
    /// The execution graph of the threads' paths so far, with reads-from.
    pub graph: Graph<'p>,
    /// Writes not yet offered to the suspended reads.
    pub fresh: Vec<(usize, usize)>,
    /// Under the revisiting search, the coherence order of each location's writes (graph
    /// indices, the initial write first); empty otherwise.
    pub co: Vec<Vec<usize>>,
    /// The CTA barrier rounds formed so far.
    pub rounds: crate::rounds::Rounds,
}

/// The threads of a search state, each shared with the states it was cloned from until it
/// changes: a step changes one thread, so cloning a state copies one thread's run, not all
/// (copying every thread was a tenth of a symmetric search's time). With each run, the digest
/// of its local signature once asked for (`orbits`), shared as long as the run is.
#[derive(Clone)]
pub(crate) struct Threads(Vec<std::sync::Arc<SharedRun>>);

#[derive(Clone)]
pub(crate) struct SharedRun {
    run: ThreadRun,
    signature: std::sync::OnceLock<crate::orbits::Digest>,
    /// The locations the run may still write (`Search::still_writes`), once asked for.
    writes: std::sync::OnceLock<Vec<LocId>>,
}

impl Threads {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &ThreadRun> {
        self.0.iter().map(|t| &t.run)
    }

    /// The digest of thread `t`'s signature, computed by `compute` the first time.
    pub fn signature(
        &self,
        t: usize,
        compute: impl FnOnce(&ThreadRun) -> crate::orbits::Digest,
    ) -> crate::orbits::Digest {
        let shared = &self.0[t];
        *shared.signature.get_or_init(|| compute(&shared.run))
    }

    /// The locations thread `t` may still write, computed by `compute` the first time.
    pub fn writes(&self, t: usize, compute: impl FnOnce(&ThreadRun) -> Vec<LocId>) -> &[LocId] {
        let shared = &self.0[t];
        shared.writes.get_or_init(|| compute(&shared.run))
    }
}

impl FromIterator<ThreadRun> for Threads {
    fn from_iter<I: IntoIterator<Item = ThreadRun>>(iter: I) -> Self {
        let shared = |run| SharedRun {
            run,
            signature: Default::default(),
            writes: Default::default(),
        };
        Threads(
            iter.into_iter()
                .map(|r| std::sync::Arc::new(shared(r)))
                .collect(),
        )
    }
}

impl std::ops::Index<usize> for Threads {
    type Output = ThreadRun;
    fn index(&self, t: usize) -> &ThreadRun {
        &self.0[t].run
    }
}

/// Mutable access copies the thread's run first if another state shares it, and forgets its
/// signature and what it may still write.
impl std::ops::IndexMut<usize> for Threads {
    fn index_mut(&mut self, t: usize) -> &mut ThreadRun {
        let shared = std::sync::Arc::make_mut(&mut self.0[t]);
        shared.signature.take();
        shared.writes.take();
        &mut shared.run
    }
}

/// Why the search cannot vouch for its own completeness on this program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateFailure(pub String);

pub(crate) struct Search<'a, 'f, 'p> {
    pub(crate) program: &'p Program,
    pub(crate) model: &'a dyn Model,
    pub(crate) scheduler: &'a Scheduler,
    pub(crate) statics: &'a [ThreadStatics],
    /// Threads never scheduled (again) in this search: only hangs are looked for.
    pub(crate) starved: Vec<ThreadId>,
    /// Transitive launch successors of each thread.
    pub(crate) successors: &'a [Vec<usize>],
    pub(crate) budget: Budget,
    pub(crate) progress: Option<std::sync::Arc<crate::Counters>>,
    /// Classes of interchangeable threads, explored one state per orbit (`orbits`).
    pub(crate) classes: &'a [Vec<usize>],
    pub gate: Option<GateFailure>,
    /// Some thread was blocked in a pure iteration (the hang search is worth running).
    pub spun: bool,
    pub out: &'a mut Exploration,
    pub(crate) on_execution: &'a OnExecution<'f, 'p>,
    /// Where this search stands in the order of the whole search (`Found::key`): the
    /// prefix its fork gave it and the states and leaves it met since, in depth-first order.
    pub(crate) prefix: Vec<u64>,
    pub(crate) counter: u64,
    /// How many more levels of choices may be explored in parallel (0: sequentially).
    pub(crate) forks_left: usize,
    /// Set when some worker of the search must stop (a failed gate, a spent budget, a
    /// symmetry reduction abandoned): the others stop too.
    pub(crate) halt: &'a std::sync::atomic::AtomicBool,
    /// Consistent executions handed on, for the budget.
    pub(crate) found: u64,
    pub(crate) checks: u32,
    /// Digests of the leaves reached after a choice of barrier rounds (`Rounds::chosen`).
    pub(crate) leaves_seen: crate::orbits::DigestSet,
    /// The program has a CTA barrier (rounds are formed only then).
    pub(crate) cta_barriers: bool,
    /// What each thread could do from where it waits (by thread, instruction, unknown
    /// registers), for the gate.
    pub(crate) after:
        std::collections::HashMap<(usize, usize, Vec<usize>), crate::statics::AfterRead>,
    /// Reads take only writes already in the graph, and each new write is placed in coherence
    /// and revisits earlier reads (`revisit`), instead of reads waiting for writes to come.
    pub(crate) revisits: bool,
    /// Under symmetry reduction (`orbits`): the digests of the states explored and of the
    /// leaves judged, each up to permutations of the classes.
    pub(crate) states_seen: crate::orbits::DigestSet,
    /// Of those, the states whose search is over (`subsumed`).
    pub(crate) states_done: crate::orbits::DigestSet,
    pub(crate) orbits_seen: crate::orbits::DigestSet,
    pub(crate) scratch: crate::orbits::Scratch,
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

/// The `round`-th arrival (from 0) of a path at `barrier`: its path index, count and value.
fn nth_arrival(
    events: &[crate::trace::TraceEvent],
    barrier: BarrierName,
    round: usize,
) -> Option<(usize, Option<u32>, Option<Value>)> {
    events
        .iter()
        .enumerate()
        .filter_map(|(k, e)| match e.kind {
            EventKind::Arrive {
                barrier: b,
                count,
                pred,
            } if b == barrier => Some((k, count, pred)),
            _ => None,
        })
        .nth(round)
}

/// The arrivals (thread, path index) of the round that thread `t`'s last arrival at `barrier`
/// before its path index `i` is in: the CTA round it was formed into, or the same arrival of
/// each lane of a warp collective.
fn round_arrivals(
    threads: &Threads,
    rounds: &crate::rounds::Rounds,
    program: &Program,
    t: usize,
    i: usize,
    barrier: BarrierName,
) -> Vec<(usize, usize)> {
    let events = &threads[t].trace.events[..i];
    match barrier {
        BarrierName::Cta(_) => events
            .iter()
            .rposition(|e| matches!(e.kind, EventKind::Arrive { barrier: b, .. } if b == barrier))
            .and_then(|k| rounds.round_of(t, k))
            .map_or(vec![], |r| r.arrivals.clone()),
        BarrierName::Warp { .. } => {
            let round = crate::trace::arrivals_at(events, barrier).saturating_sub(1);
            barrier_members(program, t, barrier)
                .into_iter()
                .filter_map(|u| {
                    nth_arrival(&threads[u].trace.events, barrier, round).map(|(k, _, _)| (u, k))
                })
                .collect()
        }
    }
}

/// Every lane of a warp, as the members of a collective name them.
pub(crate) const ACTIVE_MASK_ANY: BarrierName = BarrierName::Warp {
    mask: u32::MAX,
    op: WarpKind::ActiveMask,
};

/// The masks a path's `__activemask()` executions at instruction `instr` reported, in order.
pub(crate) fn active_masks(
    events: &[crate::trace::TraceEvent],
    instr: usize,
) -> impl Iterator<Item = u32> + '_ {
    events.iter().filter_map(move |e| match e.kind {
        EventKind::Arrive {
            barrier:
                BarrierName::Warp {
                    mask,
                    op: WarpKind::ActiveMask,
                },
            ..
        } if e.instr == instr => Some(mask),
        _ => None,
    })
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
            program,
            model,
            scheduler,
            statics,
            starved,
            successors,
            budget,
            progress,
            classes,
            gate: None,
            spun: false,
            out,
            on_execution,
            prefix: vec![],
            counter: 0,
            forks_left,
            halt,
            found: 0,
            checks: 0,
            after: Default::default(),
            revisits,
            leaves_seen: Default::default(),
            states_seen: Default::default(),
            states_done: Default::default(),
            orbits_seen: Default::default(),
            scratch: Default::default(),
            cta_barriers,
            frames: Vec::new(),
        }
    }

    pub(crate) fn run(&mut self) {
        let run_ahead = !self.model.porf_acyclic();
        let mut threads: Threads = self
            .program
            .threads
            .iter()
            .map(|t| ThreadRun::new(self.program, t, run_ahead))
            .collect();
        if !self.scheduler.preempts() {
            for t in &self.starved {
                threads[t.0 as usize].starve();
            }
        }
        let co = if self.revisits {
            (0..self.program.locations.len()).map(|l| vec![l]).collect()
        } else {
            vec![]
        };
        self.walk(State {
            threads,
            graph: Graph::empty(self.program),
            fresh: vec![],
            co,
            rounds: Default::default(),
        });
    }

    /// Whether the search must stop now (a failed gate or a spent budget).
    pub(crate) fn stopped(&mut self) -> bool {
        if self.gate.is_some()
            || self.out.cut_short.is_some()
            || self.out.symmetry_abandoned
            || self.out.commute_abandoned
        {
            self.halt.store(true, std::sync::atomic::Ordering::Relaxed);
            return true;
        }
        if self.halt.load(std::sync::atomic::Ordering::Relaxed) {
            return true;
        }
        self.checks = self.checks.wrapping_add(1);
        let spent = self.budget.spent(self.out, self.checks);
        if spent {
            self.halt.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        spent
    }

    /// The place of what the search meets next in the order of the whole search.
    fn next_key(&mut self) -> Vec<u64> {
        self.counter += 1;
        let mut key = self.prefix.clone();
        key.push(self.counter);
        key
    }

    pub(crate) fn launched(&self, st: &State, t: usize) -> bool {
        self.program.threads[t].after.iter().all(|a| {
            let a = &st.threads[a.0 as usize];
            a.status == Status::Stopped && a.trace.end == PathEnd::Finished
        })
    }

    /// The thread to run next: the lowest-numbered one that can run; in the hole search, one
    /// not about to read inside a loop if there is one, in the revisiting search one that would
    /// not block there reading the latest writes (`would_block`). Any choice that depends on
    /// the state alone keeps either search complete (docs/explore.md); running the others first
    /// lets an await read find the writes it waits for already made, instead of waiting for
    /// them in a hole whose branch every later thread's choices multiply, or blocking on a
    /// write that every later write must then revisit or leave stale.
    fn next_thread(&self, st: &State) -> Option<usize> {
        let ready = |t: usize| st.threads[t].status == Status::Ready && self.launched(st, t);
        if !self.revisits {
            let spins = |t: usize| self.statics[t].is_loop_read(st.threads[t].pc());
            if let Some(t) = (0..st.threads.len()).find(|&t| ready(t) && !spins(t)) {
                return Some(t);
            }
        } else if let Some(t) =
            (0..st.threads.len()).find(|&t| ready(t) && !self.would_block(st, t))
        {
            return Some(t);
        }
        (0..st.threads.len()).find(|&t| ready(t))
    }

    /// Brings the graph up to date with thread `t`'s path: new events (with RMW links and the
    /// synchronization of a passed barrier) and values that became known.
    pub(crate) fn sync_graph(&self, st: &mut State<'p>, t: usize) {
        let State {
            threads,
            graph,
            rounds,
            ..
        } = st;
        let trace = &threads[t].trace;
        let known = graph.thread_events[t].len();
        for (i, e) in trace.events.iter().enumerate().take(known) {
            let ge = graph.thread_events[t][i];
            if graph.events[ge].kind != e.kind {
                graph.set_kind(ge, e.kind);
            }
        }
        for (i, e) in trace.events.iter().enumerate().skip(known) {
            let wait = graph.push(ThreadId(t as u32), e);
            let EventKind::Wait { barrier, .. } = e.kind else {
                continue;
            };
            // The round: that of this thread's last arrival at the barrier; every other
            // arrival of the round synchronizes with the wait (or, for a shuffle or a vote,
            // only precedes it).
            for (u, k) in round_arrivals(threads, rounds, self.program, t, i, barrier) {
                if u == t {
                    continue;
                }
                if let Some(&a) = graph.thread_events[u].get(k) {
                    if barrier.orders_memory() {
                        graph.barrier_sync.insert(a, wait);
                    } else {
                        graph.collective.insert(a, wait);
                    }
                }
            }
        }
        for &(r, w) in &trace.rmw {
            if w as usize >= known {
                let (r, w) = (
                    graph.thread_events[t][r as usize],
                    graph.thread_events[t][w as usize],
                );
                graph.add_rmw(r, w);
            }
        }
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
            if !takers.is_empty() && !self.classes.is_empty() {
                let named = Self::referenced(&st, self.statics);
                let digest = self.orbit_digest(&st, &Self::all_kept(&st), &named);
                if !self.states_seen.insert(digest) {
                    return;
                }
            }
            st.fresh.pop();
            if !takers.is_empty() && st.graph.len() >= PRUNE_FROM_EVENTS {
                self.model.extend_memos(&st.graph);
            }
            return self.offer(st, w, takers.into(), 0);
        }
        // A hole no thread can fill any more: no completion of this graph exists, unless the
        // threads that wait on each other in a cycle could break it where the gate cannot
        // vouch that an axiom forbids it (the same rules as at a dead end).
        if let Some(waiting) = self.unfillable_hole(&st) {
            self.out.dead_ends += 1;
            self.gate_check(&st, &waiting);
            return;
        }
        if self.classes.is_empty() {
            return self.run_threads(st, None);
        }
        let named = Self::referenced(&st, self.statics);
        if self.subsumed(&st, &named) {
            return;
        }
        // A state whose image under the classes' permutations was explored: its completions
        // are the images of that one's.
        let digest = self.orbit_digest(&st, &Self::all_kept(&st), &named);
        if !self.states_seen.insert(digest) {
            return;
        }
        // Once the search below it is over (and was not stopped), the state is done.
        self.frames.push(crate::walk::Frame::Done(digest));
        self.run_threads(st, None);
    }

    /// Whether, under symmetry reduction, the completions of `st` are among those of a state
    /// whose search is over: the image of `st` with the threads that wait at a hole they
    /// just made seen as not yet started, where nothing depends on what they did, or else
    /// as not yet at that read (either may make the same choices again, and read the writes
    /// already made as well as those to come; `Search::relaxation`). A thread that waits for
    /// another of its class to write is so seen as the thread that has not run yet
    /// (docs/explore.md, "Symmetry").
    fn subsumed(&mut self, st: &State<'p>, named: &[bool]) -> bool {
        let all = Self::all_kept(st);
        let relax: Vec<Option<(usize, usize)>> = (0..st.threads.len())
            .map(|t| Self::relaxation(st, t, named))
            .collect();
        let relaxed = |pick: fn((usize, usize)) -> usize| -> Vec<usize> {
            (0..st.threads.len())
                .map(|t| relax[t].map_or(all[t], pick))
                .collect()
        };
        // Both relax the same threads (those waiting at a hole); from the start is tried first,
        // as it finds a finished image more often (541 against 155 times on the TTAS lock
        // with 5 threads).
        let from_start = relaxed(|r| r.1);
        if from_start == all {
            return false;
        }
        let by_one = relaxed(|r| r.0);
        let digest = self.orbit_digest(st, &from_start, named);
        if self.states_done.contains(&digest) {
            return true;
        }
        by_one != from_start && {
            let digest = self.orbit_digest(st, &by_one, named);
            self.states_done.contains(&digest)
        }
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
                    self.complete_barriers(&mut st);
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
            let thread = &self.program.threads[t];
            let events = st.threads[t].trace.events.len();
            let step = st.threads[t].step(self.program, thread, &self.statics[t]);
            self.sync_graph(&mut st, t);
            if st.threads[t].trace.events.len() > events {
                if let Some(message) = self.mixed_count(&st, t) {
                    st.threads[t].fault_at_last_event(message);
                    continue;
                }
            }
            match step {
                Step::Wrote(e) if self.revisits => return self.add_write(st, t, e),
                Step::Wrote(e) => {
                    // A write adds coherence edges only into itself: it can make a spinner
                    // stale only at a location some spinner read.
                    if self.spinner_read_loc(&st, t, e) && self.spinner_goes_stale(&st) {
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
                        // Under symmetry its images in the other threads of its class too.
                        let class = self.classes.iter().find(|c| c.contains(&t));
                        for u in class.map_or(vec![t], |c| c.clone()) {
                            let l = (ThreadId(u as u32), last);
                            if !self.out.reduced_loops.contains(&l) {
                                self.out.reduced_loops.push(l);
                            }
                        }
                        if self.revisits && self.spins_on_stale_write(&st, t) {
                            self.out.blocked += 1;
                            return;
                        }
                        if !self.revisits && self.spinner_goes_stale(&st) {
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
        let v = self.value(st, src);
        let readable = st.threads[t].fill_hole(
            self.program,
            &self.program.threads[t],
            &self.statics[t],
            r,
            v,
        );
        self.sync_graph(st, t);
        self.set_rf(st, t, r, src);
        st.fresh.extend(readable.into_iter().map(|w| (t, w)));
        self.check(st, t, r, src, false)
    }

    /// The value of a source in `st`.
    pub(crate) fn value(&self, st: &State, s: Source) -> Value {
        match s {
            Source::Init(l) => self.program.location(l).init,
            Source::Event(t, i) => {
                let e = &st.threads[t].trace.events[i];
                // A blind update holds its operand; what a load of it reads is the final
                // value (every update is made before such a load: `commute`).
                match e.kind {
                    EventKind::Write { loc, .. } if self.statics[t].commutes(e.instr) => {
                        crate::commute::final_value(
                            self.program,
                            self.statics,
                            st.threads.iter().map(|r| &r.trace),
                            loc,
                        )
                    }
                    _ => e.kind.value().expect("a write has a value"),
                }
            }
        }
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
        let v = self.value(st, src);
        let (r, w) = st.threads[t].resolve_read(v);
        self.sync_graph(st, t);
        self.set_rf(st, t, r, src);
        if let Some(w) = w {
            st.fresh.push((t, w));
        }
        self.check(st, t, r, src, judged)
    }

    fn set_rf(&self, st: &mut State<'p>, t: usize, r: usize, src: Source) {
        let read = st.graph.thread_events[t][r];
        st.graph.rf[read] = Some(Self::global(&st.graph, src));
    }

    /// Whether the graph of `st`, where read `r` of thread `t` now reads from `src`, may still
    /// be completed into a consistent execution (`judged`: as far as the model is concerned,
    /// it may).
    fn check(&mut self, st: &State<'p>, t: usize, r: usize, src: Source, judged: bool) -> bool {
        let g = &st.graph;
        let read = g.thread_events[t][r];
        let write = Self::global(g, src);
        if !self.model.may_read_from(g, read, write) {
            return false;
        }
        // Pruning is optional (every complete graph is judged in full): on a small graph the
        // check costs more than the branches it could cut.
        if g.len() < PRUNE_FROM_EVENTS {
            return true;
        }
        self.out.checks += 1;
        (judged || self.model.consistent_so_far(g))
            && (self.revisits
                || !self.read_may_stale_spinner(st, t, r)
                || !self.spinner_goes_stale(st))
    }

    /// Whether giving read `r` of thread `t` its write may have made a spinner stale. Where
    /// nothing follows the read in its thread but its own RMW write half, the coherence edges
    /// every completion has gain only edges between writes of its location
    /// ([`Model::coherence_forced`]), so only a spinner that read that location can go stale.
    /// (On the TTAS lock with 5 threads this asks the model 245 times instead of 8,580, none
    /// of which found a stale spinner.)
    fn read_may_stale_spinner(&self, st: &State<'p>, t: usize, r: usize) -> bool {
        let trace = &st.threads[t].trace;
        let last = (r + 1..trace.events.len()).all(|k| {
            trace
                .rmw
                .iter()
                .any(|&(a, b)| a as usize == r && b as usize == k)
        });
        !last || self.spinner_read_loc(st, t, r)
    }

    pub(crate) fn global(g: &Graph, s: Source) -> usize {
        match s {
            Source::Init(l) => l.0 as usize,
            Source::Event(t, i) => g.thread_events[t][i],
        }
    }

    /// Whether every lane that an `__activemask()` reported as converged ran that execution of
    /// it: a leaf where one did not (it took another path, finished or got stuck first) is no
    /// execution.
    fn convergence_kept(&self, st: &State) -> bool {
        st.threads.iter().enumerate().all(|(t, th)| {
            let mut seen: Vec<usize> = vec![];
            th.trace.events.iter().all(|e| {
                let EventKind::Arrive {
                    barrier:
                        BarrierName::Warp {
                            mask,
                            op: WarpKind::ActiveMask,
                        },
                    ..
                } = e.kind
                else {
                    return true;
                };
                // This is the k-th time `t` runs the instruction.
                let k = seen.iter().filter(|&&i| i == e.instr).count();
                seen.push(e.instr);
                barrier_members(self.program, t, ACTIVE_MASK_ANY)
                    .into_iter()
                    .filter(|&u| {
                        u != t
                            && mask & 1 << self.program.lane(ThreadId(u as u32)).unwrap_or(0) != 0
                    })
                    .all(|u| {
                        active_masks(&st.threads[u].trace.events, e.instr)
                            .nth(k)
                            .is_some()
                    })
            })
        })
    }

    /// Whether a thread other than `t` that may run at the same time as `t` could still write
    /// `loc` (a thread launched after `t` cannot write what `t` reads: causality).
    pub(crate) fn may_still_be_written(&self, st: &State, t: usize, loc: LocId) -> bool {
        (0..st.threads.len()).any(|u| {
            u != t
                && !self.successors[t].contains(&u)
                && self.still_writes(st, u).binary_search(&loc).is_ok()
        })
    }

    /// The locations thread `u` may still write (sorted): run forward from where it stands
    /// (`reach`), or where that walk is too long, every location its code may write from
    /// there; with the writes it made whose value is still to come from a hole. Always among
    /// the static answer (what some path from its instruction writes), so the search only
    /// branches less. Kept with the thread's run until it changes, so a search step asks it
    /// again only of the thread that stepped.
    pub(crate) fn still_writes<'s>(&self, st: &'s State, u: usize) -> &'s [LocId] {
        st.threads.writes(u, |th| {
            let made = th
                .value_holes
                .iter()
                .filter_map(|&w| th.trace.events[w].kind.loc());
            let mut writes: Vec<LocId> = made.collect();
            let mut fresh = Vec::new();
            match &th.status {
                Status::Stopped => {
                    writes.sort_unstable();
                    writes.dedup();
                    return writes;
                }
                Status::Waiting(w) => {
                    fresh.extend(w.red.map(|r| r.1));
                    if let Some(ww) = w.warp {
                        fresh.extend(ww.dst);
                        fresh.extend(ww.pred_dst);
                    }
                }
                Status::Converges { dst, .. } => fresh.extend(*dst),
                _ => {}
            }
            let (values, windows, unknown) = th.registers();
            let start = crate::reach::Start {
                values,
                windows,
                unknown,
                fresh: &fresh,
            };
            let thread = &self.program.threads[u];
            match crate::reach::writes_from(self.program, thread, th.pc(), start) {
                Some(ahead) => writes.extend(ahead),
                None => writes.extend_from_slice(self.statics[u].writes_from(th.pc())),
            }
            writes.sort_unstable();
            writes.dedup();
            writes
        })
    }

    /// When some hole can never be filled (no thread that may still write its location can
    /// still run), the threads with holes that cannot run: they wait on each other in a
    /// cycle, or on threads that stopped. Threads that can run are the least set holding every thread not suspended
    /// and not stopped, and every suspended thread with a hole some thread of the set may fill;
    /// the others wait on each other in a cycle, or on threads that stopped.
    fn unfillable_hole(&self, st: &State<'p>) -> Option<Vec<usize>> {
        if st.threads.iter().all(|t| t.holes.is_empty()) {
            return None;
        }
        let n = st.threads.len();
        let mut live: Vec<bool> = st
            .threads
            .iter()
            .map(|t| !matches!(t.status, Status::Suspended | Status::Stopped))
            .collect();
        // Whether `w` may still make a write of `loc` that thread `t` can read.
        let may_fill = |live: &[bool], w: usize, t: usize, loc: LocId| {
            w != t
                && live[w]
                && !self.successors[t].contains(&w)
                && self.still_writes(st, w).binary_search(&loc).is_ok()
        };
        loop {
            let mut grew = false;
            for t in 0..n {
                if live[t] || st.threads[t].status != Status::Suspended {
                    continue;
                }
                let fillable = st.threads[t]
                    .holes
                    .iter()
                    .any(|h| (0..n).any(|w| may_fill(&live, w, t, h.1.loc)));
                if fillable {
                    live[t] = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let unfillable = st.threads.iter().enumerate().any(|(t, th)| {
            th.holes
                .iter()
                .any(|h| !(0..n).any(|w| may_fill(&live, w, t, h.1.loc)))
        });
        if !unfillable {
            return None;
        }
        // Of the threads that cannot run, those in a cycle: a hole of one that another of them
        // could fill, were it running. A hole whose writers all stopped is dead, no cycle.
        let blocked = |t: usize| !live[t] && st.threads[t].status == Status::Suspended;
        let everyone = vec![true; n];
        let mut cycle: Vec<usize> = Vec::new();
        for t in (0..n).filter(|&t| blocked(t)) {
            for w in (0..n).filter(|&w| blocked(w)) {
                let feeds = st.threads[t]
                    .holes
                    .iter()
                    .any(|h| may_fill(&everyone, w, t, h.1.loc));
                if feeds {
                    cycle.extend([t, w]);
                }
            }
        }
        cycle.sort_unstable();
        cycle.dedup();
        Some(cycle)
    }

    /// Lets every waiting thread whose barrier round is complete through.
    fn complete_barriers(&self, st: &mut State<'p>) {
        loop {
            let mut released = false;
            for t in 0..st.threads.len() {
                let Status::Waiting(w) = &st.threads[t].status else {
                    continue;
                };
                let (barrier, round, red, warp) = (w.barrier, w.round as usize, w.red, w.warp);
                let members = barrier_members(self.program, t, barrier);
                // (lane rank in `members`, value) of each arrival of this round
                let mut arrivals: Vec<(usize, Option<Value>)> = Vec::new();
                match barrier {
                    // A CTA round is complete once it is formed (`rounds`).
                    BarrierName::Cta(_) => {
                        let k = st.threads[t].trace.events.len() - 1;
                        let Some(r) = st.rounds.round_of(t, k) else {
                            continue;
                        };
                        for &(u, k) in &r.arrivals {
                            let EventKind::Arrive { pred, .. } = st.threads[u].trace.events[k].kind
                            else {
                                unreachable!("a round holds arrivals")
                            };
                            arrivals.push((u, pred));
                        }
                    }
                    // A warp collective's round: the k-th arrival of every lane its mask names,
                    // the lanes that exited left out.
                    BarrierName::Warp { .. } => {
                        let mut missing = false;
                        for (rank, &u) in members.iter().enumerate() {
                            let th = &st.threads[u];
                            match nth_arrival(&th.trace.events, barrier, round) {
                                Some((_, _, pred)) => arrivals.push((rank, pred)),
                                None if th.status == Status::Stopped
                                    && th.trace.end == PathEnd::Finished => {}
                                None => missing = true,
                            }
                        }
                        if missing {
                            continue;
                        }
                    }
                }
                let result = match (red, warp, barrier) {
                    (Some((op, _)), _, _) => Ok(Some((op.reduce(arrivals.iter().map(|a| a.1)), 0))),
                    (None, Some(ww), BarrierName::Warp { mask, op }) => {
                        warp_result(self.program, t, mask, op, ww, &members, &arrivals).map(Some)
                    }
                    _ => Ok(None),
                };
                match result {
                    Ok(r) => st.threads[t].pass_barrier(r),
                    Err(message) => st.threads[t].fault_at_barrier(message),
                }
                self.sync_graph(st, t);
                released = true;
            }
            if !released {
                return;
            }
        }
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
            match self.unfillable_hole(&st) {
                Some(cycle) => self.gate_check(&st, &cycle),
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
        if !self.convergence_kept(&st) || !self.first_visit(&st) {
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
        let weight = if self.classes.is_empty() {
            1
        } else {
            let Some((digest, size)) = self.leaf_orbit(&st) else {
                self.out.symmetry_abandoned = true;
                return;
            };
            if !self.orbits_seen.insert(digest) {
                return;
            }
            size
        };
        let weight = weight.saturating_mul(self.chain_updates(&mut st));
        if self.out.commute_abandoned {
            return;
        }
        let key = self.next_key();
        let paths: Vec<&Trace> = st.threads.iter().map(|t| &t.trace).collect();
        let g = &st.graph;
        let finished = paths.iter().all(|p| p.end == PathEnd::Finished);
        if finished {
            self.found += 1;
            self.out.finished += 1;
        } else {
            self.out.blocked += 1;
        }
        if let Some(c) = &self.progress {
            let counter = if finished { &c.executions } else { &c.blocked };
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let mut leaf = crate::Leaf {
            program: self.program,
            model: self.model,
            scheduler: self.scheduler,
            starved: &starved,
            only_hangs: !self.starved.is_empty(),
            out: &mut *self.out,
            on_execution: self.on_execution,
            key: &key,
            budget: &self.budget,
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
        let Some(chains) = crate::commute::chains(&st.graph, self.model, self.statics, placed)
        else {
            return 1;
        };
        if chains.entangled {
            self.out.commute_abandoned = true;
            return 1;
        }
        let mut fixed = crate::Relation::new(st.graph.len());
        for chain in &chains.chains {
            let values = crate::commute::values(&st.graph, self.statics, chain);
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
            && (self.some_spinner_reads_stale(st)
                || (self.revisits && self.some_spinner_reads_before_latest(st)))
    }

    /// Whether some blocked thread's spinning iteration read the location of thread `t`'s
    /// event `e`.
    fn spinner_read_loc(&self, st: &State<'p>, t: usize, e: usize) -> bool {
        let g = &st.graph;
        let loc = st.threads[t].trace.events[e].kind.loc();
        self.spun_writes(st).any(|w| g.events[w].kind.loc() == loc)
    }

    /// The writes that the spinning iterations of blocked threads read.
    fn spun_writes<'s>(&self, st: &'s State<'p>) -> impl Iterator<Item = usize> + 's {
        let g = &st.graph;
        (0..st.threads.len())
            .filter_map(move |t| {
                let from = st.threads[t].trace.spinning_from()?;
                Some(g.thread_events[t][from..].iter().filter_map(|&e| g.rf[e]))
            })
            .flatten()
    }

    /// Whether some thread blocked in a pure iteration read a write that coherence must put
    /// before a *progress write* (`Model::coherence_forced`): one that no pure iteration can
    /// hold, since it is not an RMW's write-back of what it read. No completion of the state
    /// is then a hang (the spinner never reads the latest write), and the branch is dropped
    /// as a whole, cut loops and faults of other threads included: those are reached as well
    /// by a completion in which each such spinner reads a coherence-latest write instead and
    /// goes on (docs/explore.md, "Stale spinners").
    fn spinner_goes_stale(&self, st: &State<'p>) -> bool {
        let g = &st.graph;
        let spun: Vec<usize> = self.spun_writes(st).collect();
        if spun.is_empty() {
            return false;
        }
        let progress = |x: usize| {
            let Some(u) = g.events[x].thread.map(|u| u.0 as usize) else {
                return false;
            };
            let k = g.path_index(u, x);
            let th = &st.threads[u];
            if th.value_holes.contains(&k) || th.trace.spinning_from().is_some_and(|it| k >= it) {
                return false;
            }
            match th.trace.rmw.iter().find(|&&(_, w)| w as usize == k) {
                None => true,
                Some(&(r, _)) => {
                    let r = g.thread_events[u][r as usize];
                    g.rf[r].is_some() && g.events[r].kind.value() != g.events[x].kind.value()
                }
            }
        };
        // Every model orders a write coherence-before the later writes of its thread to its
        // location, and the initial write before every other write of it (both are part of
        // `coherence_forced`): those are looked at first, without asking the model.
        let plainly_before_progress = |w: usize| {
            let same = |x: usize| x != w && g.same_loc.contains(w, x);
            match g.events[w].thread {
                None => g.writes.iter().any(|x| same(x) && progress(x)),
                Some(u) => {
                    let events = &g.thread_events[u.0 as usize];
                    let k = g.path_index(u.0 as usize, w);
                    events[k + 1..]
                        .iter()
                        .any(|&x| g.writes.contains(x) && same(x) && progress(x))
                }
            }
        };
        if spun.iter().any(|&w| plainly_before_progress(w)) {
            return true;
        }
        let forced = self.model.coherence_forced(g).closure();
        spun.into_iter().any(|w| forced.successors(w).any(progress))
    }

    /// Whether, at a leaf, some thread blocked in a pure iteration read a write that a later
    /// write of the same thread to the same location follows (outside that thread's own
    /// spinning iteration), or read the initial write of a location some thread wrote (outside
    /// a spinning iteration): in every model that write follows in coherence, so the spinner
    /// does not read the latest write.
    fn some_spinner_reads_stale(&self, st: &State) -> bool {
        let g = &st.graph;
        st.threads.iter().enumerate().any(|(t, th)| {
            let PathEnd::Blocked { iteration, .. } = th.trace.end else {
                return false;
            };
            (iteration..th.trace.events.len()).any(|i| {
                let Some(w) = g.rf[g.thread_events[t][i]] else {
                    return false;
                };
                let Some(wt) = g.events[w].thread.map(|x| x.0 as usize) else {
                    // The initial write comes first in coherence: any other write of the
                    // location, outside a spinning iteration, follows it.
                    let loc = g.events[w].kind.loc();
                    return st.threads.iter().any(|u| {
                        let spun_from = u.trace.spinning_from().unwrap_or(usize::MAX);
                        u.trace
                            .events
                            .iter()
                            .take(spun_from)
                            .any(|x| x.kind.is_write() && x.kind.loc() == loc)
                    });
                };
                let wi = g.thread_events[wt]
                    .iter()
                    .position(|&x| x == w)
                    .expect("a thread's event");
                let writer = &st.threads[wt].trace;
                let spun_from = writer.spinning_from().unwrap_or(usize::MAX);
                let loc = writer.events[wi].kind.loc();
                (wi + 1..writer.events.len().min(spun_from)).any(|k| {
                    let x = &writer.events[k].kind;
                    x.is_write() && x.loc() == loc
                })
            })
        })
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
        self.gate_check(st, &holed);
    }

    /// The gate's rules for the threads `waiting` that hold holes and cannot go on: first on
    /// the static facts of each thread (`statics`); where those cannot rule out a cycle of
    /// waiting that no axiom forbids, on what the threads may still do from where they stand
    /// (`waiting_cycle`).
    fn gate_check(&mut self, st: &State, waiting: &[usize]) {
        if self.static_gate(st, waiting) {
            if let Some(why) = self.waiting_cycle(st, waiting) {
                self.gate = Some(GateFailure(why));
            }
        }
    }

    /// The gate on static facts: whether some rule may hold for some thread of `waiting`
    /// (docs/explore.md). Cheap, and cached per thread and instruction: most dead ends pass
    /// here.
    fn static_gate(&mut self, st: &State, waiting: &[usize]) -> bool {
        let waits_on = |loc: LocId, me: usize| {
            st.threads
                .iter()
                .enumerate()
                .any(|(v, th)| v != me && th.holes.iter().any(|h| h.1.loc == loc))
        };
        for &u in waiting {
            let th = &st.threads[u];
            let key = (u, th.pc(), th.unknown_registers().collect::<Vec<_>>());
            let after = match self.after.get(&key) {
                Some(a) => a.clone(),
                None => {
                    let a = crate::statics::after_holes(
                        self.program,
                        &self.program.threads[u],
                        key.1,
                        &key.2,
                    );
                    self.after.insert(key, a.clone());
                    a
                }
            };
            if after.reaches_arrive && self.barrier_waits(st, u) {
                return true;
            }
            if self.successors[u]
                .iter()
                .any(|&s| self.statics[s].writes.iter().any(|&l| waits_on(l, u)))
            {
                return true;
            }
            if !self.model.porf_acyclic()
                && after.independent_writes.iter().any(|&l| waits_on(l, u))
            {
                return true;
            }
        }
        false
    }

    /// Whether some thread of `u`'s CTA waits at a barrier or collective.
    fn barrier_waits(&self, st: &State, u: usize) -> bool {
        let cta = cta_key(&self.program.threads[u].placement, u);
        (0..st.threads.len()).any(|w| {
            matches!(st.threads[w].status, Status::Waiting(_))
                && cta_key(&self.program.threads[w].placement, w) == cta
        })
    }

    /// The precise gate, where the static one failed: the threads of `waiting`
    /// are linked `u -> v` when `u`, stuck, may hold up a write that a hole of `v` waits for:
    /// a write `u` may still make from where it stands (which depends on `u`'s holes, unless
    /// it is among its independent writes), a write of a thread held at a barrier or
    /// collective `u` may still reach, or a write of a thread launched after `u`. Along a
    /// consistent execution's path, a dead end needs a cycle of such links, each one real;
    /// a cycle of dependent writes alone is an `rf ∪ dep` cycle, which No-Thin-Air forbids.
    /// So the gate fails only for a cycle through a link of another kind (with its reason).
    fn waiting_cycle(&self, st: &State, waiting: &[usize]) -> Option<String> {
        let k = waiting.len();
        let holes: Vec<Vec<LocId>> = waiting
            .iter()
            .map(|&v| st.threads[v].holes.iter().map(|h| h.1.loc).collect())
            .collect();
        // The threads of `waiting` (by index) other than `writer` with a hole `locs` may fill.
        let fed = |locs: &[LocId], writer: usize| -> Vec<usize> {
            (0..k)
                .filter(|&j| waiting[j] != writer && holes[j].iter().any(|l| locs.contains(l)))
                .collect()
        };
        // What each thread held at a barrier may write once released: from where it waits,
        // and through the threads launched after it. A thread released by an arrival of a
        // stuck thread `u` is one of `u`'s CTA; whatever it then does that another of the
        // CTA waits for at a barrier or collective is covered too, since those wait here as
        // well.
        let held: Vec<(usize, Vec<LocId>)> = (0..st.threads.len())
            .filter(|&w| matches!(st.threads[w].status, Status::Waiting(_)))
            .map(|w| {
                let mut writes = self.may_still_do(st, w).writes;
                for &s in &self.successors[w] {
                    writes.extend_from_slice(&self.statics[s].writes);
                }
                (w, writes)
            })
            .collect();
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); k];
        // (from, to, why) of the links no axiom rules out by themselves
        let mut risky: Vec<(usize, usize, String)> = Vec::new();
        for (i, &u) in waiting.iter().enumerate() {
            let name = &self.program.threads[u].name;
            let here = self.may_still_do(st, u);
            edges[i].extend(fed(&here.writes, u));
            if !self.model.porf_acyclic() {
                for j in fed(&here.independent_writes, u) {
                    risky.push((i, j, format!(
                        "{name} could write, without the value it waits for, what another thread waits for"
                    )));
                }
            }
            for &s in &self.successors[u] {
                for j in fed(&self.statics[s].writes, u) {
                    risky.push((i, j, format!(
                        "{name} waits for a value before threads launched after it write what others wait for"
                    )));
                }
            }
            if here.reaches_arrive && self.barrier_waits(st, u) {
                // Only the rounds of its own CTA (its barriers, its warp's collectives) wait
                // for its arrival: threads held elsewhere wait for someone else.
                let cta = cta_key(&self.program.threads[u].placement, u);
                let mates = held
                    .iter()
                    .filter(|(w, _)| cta_key(&self.program.threads[*w].placement, *w) == cta);
                for (w, writes) in mates {
                    for j in fed(writes, *w) {
                        risky.push((
                            i,
                            j,
                            format!("{name} waits for a value before a barrier others wait at"),
                        ));
                    }
                }
            }
        }
        for &(i, j, _) in &risky {
            edges[i].push(j);
        }
        // A risky link `i -> j` closes a cycle when `j` reaches `i`.
        let reaches = |from: usize, to: usize| {
            let mut seen = vec![false; k];
            let mut stack = vec![from];
            while let Some(x) = stack.pop() {
                if x == to {
                    return true;
                }
                if !std::mem::replace(&mut seen[x], true) {
                    stack.extend(edges[x].iter().copied());
                }
            }
            false
        };
        risky
            .into_iter()
            .find(|&(i, j, _)| reaches(j, i))
            .map(|(_, _, why)| why)
    }

    /// What thread `t` may still do from where it stands (`gate::from_here`), with what a
    /// barrier or collective it waits at will give as values to come.
    fn may_still_do(&self, st: &State, t: usize) -> crate::gate::FromHere {
        let th = &st.threads[t];
        // Stores it made with a value still to come from a hole: writes it may still make
        // readable, each depending on the hole.
        let made: Vec<LocId> = th
            .value_holes
            .iter()
            .filter_map(|&w| th.trace.events[w].kind.loc())
            .collect();
        let (values, windows, unknown) = th.registers();
        let mut fresh = Vec::new();
        if let Status::Waiting(w) = &th.status {
            fresh.extend(w.red.map(|r| r.1));
            if let Some(ww) = w.warp {
                fresh.extend(ww.dst);
                fresh.extend(ww.pred_dst);
            }
        }
        let mut here = crate::gate::from_here(
            self.program,
            &self.program.threads[t],
            th.pc(),
            crate::gate::Registers {
                values,
                windows,
                unknown,
                fresh: &fresh,
            },
        );
        here.writes.extend(made);
        here.writes.sort_unstable();
        here.writes.dedup();
        here
    }
}

/// What a complete round of a warp collective gives thread `t`: the value and predicate for its
/// two destinations, or why the round is undefined (CUDA and the PTX ISA leave it so).
fn warp_result(
    program: &Program,
    t: usize,
    mask: u32,
    op: WarpKind,
    ww: crate::interp::WarpWait,
    members: &[usize],
    arrivals: &[(usize, Option<Value>)],
) -> Result<(Value, Value), String> {
    let lane = program.lane(ThreadId(t as u32)).unwrap_or(0);
    let lane_of = |rank: usize| program.lane(ThreadId(members[rank] as u32)).unwrap_or(0);
    if !members.contains(&t) {
        return Err(format!(
            "lane {lane} meets at a warp collective with mask {mask:#x}, which leaves it out"
        ));
    }
    let truth = |a: &(usize, Option<Value>)| a.1.unwrap_or(0) != 0;
    Ok(match op {
        WarpKind::Sync => (0, 0),
        WarpKind::ActiveMask => unreachable!("`__activemask()` has no wait"),
        WarpKind::Vote(v) => {
            let ballot = arrivals
                .iter()
                .filter(|a| truth(a))
                .fold(0u32, |m, a| m | 1 << lane_of(a.0));
            let value = match v {
                VoteOp::Ballot => Value::from(ballot),
                VoteOp::Any => Value::from(arrivals.iter().any(truth)),
                VoteOp::All => Value::from(arrivals.iter().all(truth)),
                VoteOp::Uni => {
                    Value::from(arrivals.iter().all(truth) || !arrivals.iter().any(truth))
                }
            };
            (value, 0)
        }
        WarpKind::Shfl(mode) => {
            let (j, in_range) = mode.source_lane(lane, ww.b, ww.c);
            let Some(a) = arrivals.iter().find(|a| lane_of(a.0) == j) else {
                return Err(format!(
                    "lane {lane} shuffles from lane {j}, which is not among the lanes that meet (mask {mask:#x}): CUDA leaves the value undefined"
                ));
            };
            (a.1.unwrap_or(0), Value::from(in_range))
        }
    })
}
