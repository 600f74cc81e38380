//! Execution graphs: events, program order, dependencies, barrier synchronization, launch
//! order, and the reads-from choice. Coherence is chosen by the model.
//!
//! A graph only grows: events are appended (`push`), and every relation the program fixes is
//! extended by the new event's row and column. The graph explorer extends one graph along its
//! search, so relations a model memoises (`memo_pairwise`) are extended, not recomputed; the
//! candidate enumerator builds each graph from whole paths (`Graph::new`).

use std::cell::RefCell;
use std::sync::Arc;

use scopecheck_ir::{BarrierRedOp, LocId, Placement, Program, ThreadId, Value};

use crate::relation::{EventSet, Relation};
use crate::trace::{BarrierName, EventKind, Trace, TraceEvent};

/// An event: `(thread, instruction)` and what it does. Initial writes have no thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub thread: Option<ThreadId>,
    pub instr: Option<usize>,
    pub kind: EventKind,
}

/// One execution graph: events and the relations the program fixes, plus reads-from.
#[derive(Clone, Debug)]
pub struct Graph<'p> {
    pub program: &'p Program,
    /// Initial writes first (one per location, in location order), then events in the order
    /// they were added.
    pub events: Vec<Event>,
    /// The graph index of each thread's events, by position in its path.
    pub thread_events: Vec<Vec<usize>>,
    /// Program order, transitive.
    pub po: Relation,
    /// From the read half of each RMW to its write half.
    pub rmw: Relation,
    /// Data, address and control dependencies, from a read to what depends on it.
    pub dep: Relation,
    /// From each barrier arrival to the waits of the other threads of the same barrier round
    /// (CTA barriers and `__syncwarp`).
    pub barrier_sync: Relation,
    /// The same for warp shuffles and votes, which exchange values but do not order memory:
    /// models never see it; the explorer keeps what a thread received in its causal prefix.
    pub collective: Relation,
    /// From every event of a thread to every event of the threads that start only after it
    /// finished (`Thread::after`: kernel launches on one stream, host code after a
    /// synchronization). Models treat it as synchronization.
    pub launch: Relation,
    /// Memory events on the same location (initial writes included), reflexive.
    pub same_loc: Relation,
    pub reads: EventSet,
    /// Writes, initial writes included.
    pub writes: EventSet,
    /// For each read, the write it reads from. Indexed by event; `None` for other events and
    /// for reads not yet given a write.
    pub rf: Vec<Option<usize>>,
    /// The events of each location.
    at_loc: Vec<EventSet>,
    /// Coherence edges the explorer fixed at a leaf of the hole search: the chain it chose
    /// among the blind updates of each commuting location (`commute`). Models add it to the
    /// coherence they force.
    pub fixed_co: Option<Relation>,
    /// Relations a model derives from the events alone (not from reads-from or values),
    /// extended as events are added. See [`Graph::memo_pairwise`].
    memo: RefCell<Vec<(&'static str, Arc<Relation>)>>,
}

/// Why a choice of paths does not make an execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotAnExecution {
    /// Some participant never arrives at a barrier other threads wait at: those threads block,
    /// each at the path index given.
    BarrierBlocks(Vec<(ThreadId, usize)>),
    /// A `bar.red` result guess differs from the reduction of the predicates.
    WrongReduction,
}

/// The CTA a thread belongs to, as a key for barrier matching; host threads each get their own.
pub(crate) fn cta_key(p: &Placement, t: usize) -> (u32, u32, u32, usize) {
    match p {
        Placement::Device(d) => (d.gpu, d.cluster, d.cta, usize::MAX),
        Placement::Host => (u32::MAX, u32::MAX, u32::MAX, t),
    }
}

/// The threads that meet at one barrier: a CTA (its key), or a warp (its lane 0's thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarrierGroup {
    Cta((u32, u32, u32, usize)),
    Warp(usize),
}

/// The threads that meet thread `t` at `barrier` (`t` among them): its CTA, or the lanes of its
/// warp that a collective's mask names.
pub(crate) fn barrier_members(program: &Program, t: usize, barrier: BarrierName) -> Vec<usize> {
    match barrier {
        BarrierName::Cta(_) => {
            let cta = cta_key(&program.threads[t].placement, t);
            (0..program.threads.len())
                .filter(|&u| cta_key(&program.threads[u].placement, u) == cta)
                .collect()
        }
        BarrierName::Warp { mask, .. } => program
            .warp_members(ThreadId(t as u32), mask)
            .into_iter()
            .map(|u| u.0 as usize)
            .collect(),
    }
}

/// The group thread `t` meets at `barrier` with.
pub(crate) fn barrier_group(program: &Program, t: usize, barrier: BarrierName) -> BarrierGroup {
    match barrier {
        BarrierName::Cta(_) => BarrierGroup::Cta(cta_key(&program.threads[t].placement, t)),
        BarrierName::Warp { .. } => BarrierGroup::Warp(
            program
                .warp_members(ThreadId(t as u32), u32::MAX)
                .first()
                .map_or(t, |u| u.0 as usize),
        ),
    }
}

impl<'p> Graph<'p> {
    /// The position of graph event `e` in thread `t`'s path.
    pub(crate) fn path_index(&self, t: usize, e: usize) -> usize {
        self.thread_events[t]
            .iter()
            .position(|&x| x == e)
            .expect("an event of the thread")
    }

    /// Event `a` and everything before it in `po ∪ rf`, barrier synchronization, collectives
    /// and launch order: what a revisit by `a` keeps whatever else it deletes, and what must
    /// have happened before `a` in time.
    pub(crate) fn causal_prefix(&self, a: usize) -> EventSet {
        let mut set = EventSet::new(self.len());
        let mut stack = vec![a];
        while let Some(x) = stack.pop() {
            if set.contains(x) {
                continue;
            }
            set.insert(x);
            if let Some(t) = self.events[x].thread {
                let evs = &self.thread_events[t.0 as usize];
                let k = self.path_index(t.0 as usize, x);
                if k > 0 {
                    stack.push(evs[k - 1]);
                }
                for before in &self.program.thread(t).after {
                    stack.extend(self.thread_events[before.0 as usize].last());
                }
            }
            if let Some(w) = self.rf[x] {
                stack.push(w);
            }
            if matches!(self.events[x].kind, EventKind::Wait { .. }) {
                stack.extend((0..self.len()).filter(|&y| {
                    self.barrier_sync.contains(y, x) || self.collective.contains(y, x)
                }));
            }
        }
        set
    }

    /// The graph of the initial writes alone.
    pub fn empty(program: &'p Program) -> Self {
        let n = program.locations.len();
        let mut g = Graph {
            program,
            events: Vec::with_capacity(64),
            thread_events: vec![vec![]; program.threads.len()],
            po: Relation::new(0),
            rmw: Relation::new(0),
            dep: Relation::new(0),
            barrier_sync: Relation::new(0),
            collective: Relation::new(0),
            launch: Relation::new(0),
            same_loc: Relation::new(0),
            reads: EventSet::new(0),
            writes: EventSet::new(0),
            rf: Vec::with_capacity(64),
            at_loc: vec![EventSet::new(n); n],
            fixed_co: None,
            memo: Default::default(),
        };
        for (i, l) in program.locations.iter().enumerate() {
            g.append(Event {
                thread: None,
                instr: None,
                kind: EventKind::Init {
                    loc: LocId(i as u32),
                    value: l.init,
                },
            });
        }
        g
    }

    fn grow(&mut self, n: usize) {
        for r in [
            &mut self.po,
            &mut self.rmw,
            &mut self.dep,
            &mut self.barrier_sync,
            &mut self.collective,
            &mut self.launch,
            &mut self.same_loc,
        ] {
            r.grow(n);
        }
        self.reads.grow(n);
        self.writes.grow(n);
        for s in &mut self.at_loc {
            s.grow(n);
        }
    }

    /// Appends an event: its location, read/write sets and reads-from slot.
    fn append(&mut self, e: Event) -> usize {
        let i = self.events.len();
        self.grow(i + 1);
        self.events.push(e);
        self.rf.push(None);
        if e.kind.is_read() {
            self.reads.insert(i);
        }
        if e.kind.is_write() {
            self.writes.insert(i);
        }
        if let Some(l) = e.kind.loc() {
            let l = l.0 as usize;
            self.at_loc[l].insert(i);
            let same = &self.at_loc[l];
            self.same_loc.insert_set(i, same);
            for x in same.iter() {
                self.same_loc.insert(x, i);
            }
        }
        i
    }

    /// Appends the next event of thread `t`, with program order, its dependencies (path
    /// indices of the thread's reads) and launch order; returns its graph index.
    pub fn push(&mut self, t: ThreadId, ev: &TraceEvent) -> usize {
        let ti = t.0 as usize;
        let i = self.append(Event {
            thread: Some(t),
            instr: Some(ev.instr),
            kind: ev.kind,
        });
        for k in 0..self.thread_events[ti].len() {
            let x = self.thread_events[ti][k];
            self.po.insert(x, i);
        }
        for &d in ev.deps.iter() {
            let x = self.thread_events[ti][d as usize];
            self.dep.insert(x, i);
        }
        let program = self.program;
        for before in &program.thread(t).after {
            for k in 0..self.thread_events[before.0 as usize].len() {
                let x = self.thread_events[before.0 as usize][k];
                self.launch.insert(x, i);
            }
        }
        for (s, th) in program.threads.iter().enumerate() {
            if th.after.contains(&t) {
                for k in 0..self.thread_events[s].len() {
                    let x = self.thread_events[s][k];
                    self.launch.insert(i, x);
                }
            }
        }
        self.thread_events[ti].push(i);
        i
    }

    /// Links the read and write halves of an RMW (graph indices); the write depends on the
    /// read (as in the formal PTX model, `rmw ⊆ dep`).
    pub fn add_rmw(&mut self, read: usize, write: usize) {
        self.rmw.insert(read, write);
        self.dep.insert(read, write);
    }

    /// Replaces the value of event `e` (a read whose write was chosen later, or a write whose
    /// value became known).
    pub fn set_kind(&mut self, e: usize, kind: EventKind) {
        debug_assert_eq!(self.events[e].kind.loc(), kind.loc());
        self.events[e].kind = kind;
    }

    /// Builds the graph of one path per thread, with reads-from still unset.
    pub fn new(program: &'p Program, paths: &[&Trace]) -> Result<Self, NotAnExecution> {
        let mut g = Graph::empty(program);
        for (t, tr) in paths.iter().enumerate() {
            for e in &tr.events {
                g.push(ThreadId(t as u32), e);
            }
            for &(r, w) in &tr.rmw {
                let (r, w) = (
                    g.thread_events[t][r as usize],
                    g.thread_events[t][w as usize],
                );
                g.add_rmw(r, w);
            }
        }
        g.barrier_sync = match_barriers(program, &g.events).map_err(|e| match e {
            BarrierError::Wrong => NotAnExecution::WrongReduction,
            BarrierError::Blocks(waits) => NotAnExecution::BarrierBlocks(
                waits
                    .into_iter()
                    .filter_map(|w| {
                        let t = g.events[w].thread?;
                        let k = g.thread_events[t.0 as usize].iter().position(|&x| x == w)?;
                        Some((t, k))
                    })
                    .collect(),
            ),
        })?;
        Ok(g)
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The relation `key` names, holding the pairs `pair` accepts; computed on first use and
    /// extended to the events added since. Only for relations that depend on what each event
    /// is (thread, instruction, kind up to values), not on reads-from or values, and that are
    /// symmetric and irreflexive: `pair` is asked once per two events, lower index first.
    pub fn memo_pairwise(
        &self,
        key: &'static str,
        pair: impl Fn(usize, usize) -> bool,
    ) -> Arc<Relation> {
        let n = self.len();
        let mut memo = self.memo.borrow_mut();
        let k = match memo.iter().position(|(k, _)| *k == key) {
            Some(k) => k,
            None => {
                memo.push((key, Arc::new(Relation::new(0))));
                memo.len() - 1
            }
        };
        let old = memo[k].1.len();
        if old < n {
            // Shared with the graph this one was cloned from until it grows.
            let r = Arc::make_mut(&mut memo[k].1);
            r.grow(n);
            for j in old..n {
                for i in 0..j {
                    if pair(i, j) {
                        r.insert(i, j);
                        r.insert(j, i);
                    }
                }
            }
        }
        Arc::clone(&memo[k].1)
    }

    /// Takes over the memoised relations of `old` for the events this graph kept from it:
    /// `map[x]` is the index here of `old`'s event `x` (`usize::MAX` when deleted). Valid
    /// because a memoised relation depends only on what each event is, and every kept event
    /// is the same here (a read that changed its value keeps its kind).
    pub fn keep_memo_of(&self, old: &Graph, map: &[usize]) {
        let mut here = self.memo.borrow_mut();
        for (key, r) in old.memo.borrow().iter() {
            // Kept events keep their order, so those `r` covers are a prefix of this graph's;
            // the memo extends itself to the others on use.
            let covered = map[..r.len()].iter().filter(|&&m| m != usize::MAX).count();
            let mut kept = Relation::new(covered);
            for (x, &mx) in map[..r.len()].iter().enumerate() {
                if mx != usize::MAX {
                    for y in r.successors(x).filter(|&y| map[y] != usize::MAX) {
                        kept.insert(mx, map[y]);
                    }
                }
            }
            here.push((key, Arc::new(kept)));
        }
    }

    /// Reads-from as a relation (write → read).
    pub fn rf_relation(&self) -> Relation {
        let mut r = Relation::new(self.len());
        for (read, w) in self.rf.iter().enumerate() {
            if let Some(w) = w {
                r.insert(*w, read);
            }
        }
        r
    }

    /// From-reads `rf⁻¹ ; co`: a read precedes every write coherence-after the one it reads.
    pub fn fr_relation(&self, co: &Relation) -> Relation {
        let mut r = Relation::new(self.len());
        for (read, w) in self.rf.iter().enumerate() {
            if let Some(w) = w {
                for later in co.successors(*w) {
                    r.insert(read, later);
                }
            }
        }
        r
    }

    /// Same-thread events, as placed in the test.
    pub fn placement(&self, e: usize) -> Option<&'p Placement> {
        self.events[e]
            .thread
            .map(|t| &self.program.thread(t).placement)
    }
}

pub(crate) enum BarrierError {
    Wrong,
    /// The waits (event indices) of barrier instances some participant never reaches.
    Blocks(Vec<usize>),
}

/// Matches the k-th arrival of each thread at barrier N of a CTA with the k-th arrivals of the
/// others, and returns arrive → wait pairs across threads.
pub(crate) fn match_barriers(
    program: &Program,
    events: &[Event],
) -> Result<Relation, BarrierError> {
    struct Instance {
        arrives: Vec<(usize, Option<Value>, Option<u32>)>,
        waits: Vec<(usize, Option<(BarrierRedOp, Value)>)>,
    }
    /// (barrier group, barrier, arrival number)
    type InstanceKey = (BarrierGroup, BarrierName, u32);
    let mut instances: Vec<(InstanceKey, Instance)> = Vec::new();
    let mut seen: Vec<(usize, BarrierName, u32)> = Vec::new(); // (thread, barrier, arrivals so far)
    for (i, e) in events.iter().enumerate() {
        let Some(t) = e.thread else { continue };
        let t = t.0 as usize;
        let (barrier, is_arrive) = match e.kind {
            EventKind::Arrive { barrier, .. } => (barrier, true),
            EventKind::Wait { barrier, .. } => (barrier, false),
            _ => continue,
        };
        let slot = match seen.iter().position(|s| s.0 == t && s.1 == barrier) {
            Some(p) => p,
            None => {
                seen.push((t, barrier, 0));
                seen.len() - 1
            }
        };
        if is_arrive {
            seen[slot].2 += 1;
        }
        // The wait belongs to the instance of the arrival just before it.
        let k = seen[slot].2.saturating_sub(1);
        let key = (barrier_group(program, t, barrier), barrier, k);
        let inst = match instances.iter().position(|(k2, _)| *k2 == key) {
            Some(p) => &mut instances[p].1,
            None => {
                instances.push((
                    key,
                    Instance {
                        arrives: vec![],
                        waits: vec![],
                    },
                ));
                &mut instances.last_mut().expect("just pushed").1
            }
        };
        match e.kind {
            EventKind::Arrive { pred, count, .. } => inst.arrives.push((i, pred, count)),
            EventKind::Wait { red, .. } => inst.waits.push((i, red)),
            _ => {}
        }
    }
    let mut sync = Relation::new(events.len());
    let mut blocked = Vec::new();
    for ((group, barrier, _), inst) in &instances {
        if inst.waits.is_empty() || !barrier.orders_memory() {
            continue;
        }
        // A CTA round holds its count of threads, or the CTA's; which lanes a warp
        // collective's round holds was settled as the threads ran.
        if let BarrierGroup::Cta(_) = group {
            let expected = inst
                .arrives
                .iter()
                .find_map(|a| a.2)
                .map(|c| c as usize)
                .unwrap_or_else(|| {
                    let t = events[inst.arrives[0].0]
                        .thread
                        .expect("an arrival's thread");
                    barrier_members(program, t.0 as usize, *barrier).len()
                });
            if inst.arrives.len() != expected {
                blocked.extend(inst.waits.iter().map(|w| w.0));
                continue;
            }
        }
        for &(w, red) in &inst.waits {
            if let Some((op, v)) = red {
                if op.reduce(inst.arrives.iter().map(|a| a.1)) != v {
                    return Err(BarrierError::Wrong);
                }
            }
            for &(a, _, _) in &inst.arrives {
                if events[a].thread != events[w].thread {
                    sync.insert(a, w);
                }
            }
        }
    }
    if blocked.is_empty() {
        Ok(sync)
    } else {
        Err(BarrierError::Blocks(blocked))
    }
}
