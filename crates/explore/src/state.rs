//! A state of the graph search: the threads' runs, the execution graph they made, the writes
//! still to offer, the coherence placed so far and the barrier rounds formed; and the
//! [`Context`], what every search consults about the program and never changes, with the
//! questions it answers about a state.

use scopecheck_ir::{LocId, Program, ThreadId, Value};

use crate::graph::barrier_members;
use crate::interp::{Status, ThreadRun};
use crate::statics::ThreadStatics;
use crate::trace::{nth_arrival, BarrierName, EventKind, PathEnd};
use crate::{Graph, Model};

/// Where a read's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Init(LocId),
    /// (thread, path index)
    Event(usize, usize),
}

impl Source {
    /// Its index in graph `g`.
    pub fn global(self, g: &Graph) -> usize {
        match self {
            Source::Init(l) => l.0 as usize,
            Source::Event(t, i) => g.thread_events[t][i],
        }
    }
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
    signature: std::sync::OnceLock<crate::digest::Digest>,
    /// The locations the run may still write (`Context::still_writes`), once asked for.
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
        compute: impl FnOnce(&ThreadRun) -> crate::digest::Digest,
    ) -> crate::digest::Digest {
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

/// What a search consults about the program and never changes: the program, the model, each
/// thread's static facts and its transitive launch successors.
#[derive(Clone, Copy)]
pub(crate) struct Context<'a, 'p> {
    pub program: &'p Program,
    pub model: &'a dyn Model,
    pub statics: &'a [ThreadStatics],
    /// Transitive launch successors of each thread.
    pub successors: &'a [Vec<usize>],
}

impl<'p> Context<'_, 'p> {
    /// Whether thread `t` is launched in `st`: every thread it starts after finished.
    pub(crate) fn launched(&self, st: &State, t: usize) -> bool {
        self.program.threads[t].after.iter().all(|a| {
            let a = &st.threads[a.0 as usize];
            a.status == Status::Stopped && a.trace.end == PathEnd::Finished
        })
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
