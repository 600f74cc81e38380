//! Execution graphs: the events of one path per thread, program order, dependencies, barrier
//! matching, and the reads-from choice. Coherence is chosen by the model (see `coherence`).

use scopecheck_ir::{BarrierRedOp, Placement, Program, ThreadId, Value};

use crate::relation::{EventSet, Relation};
use crate::trace::{EventKind, Trace};

/// An event: `(thread, instruction)` and what it does. Initial writes have no thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub thread: Option<ThreadId>,
    pub instr: Option<usize>,
    pub kind: EventKind,
}

/// One candidate execution: events and the relations the program fixes, plus reads-from.
#[derive(Clone, Debug)]
pub struct Graph<'p> {
    pub program: &'p Program,
    /// Initial writes first (one per location, in location order), then each thread's events.
    pub events: Vec<Event>,
    /// Index of each thread's first event.
    pub thread_start: Vec<usize>,
    /// Program order, transitive.
    pub po: Relation,
    /// From the read half of each RMW to its write half.
    pub rmw: Relation,
    /// Data, address and control dependencies, from a read to what depends on it.
    pub dep: Relation,
    /// From each barrier arrival to the waits of the other threads of the same barrier instance.
    pub barrier_sync: Relation,
    /// From every event of a thread to every event of the threads that start only after it
    /// finished (`Thread::after`: kernel launches on one stream, host code after a
    /// synchronization). Models treat it as synchronization.
    pub launch: Relation,
    /// Memory events on the same location (initial writes included), reflexive.
    pub same_loc: Relation,
    pub reads: EventSet,
    /// Writes, initial writes included.
    pub writes: EventSet,
    /// For each read, the write it reads from. Indexed by event; `None` for other events.
    pub rf: Vec<Option<usize>>,
    /// Relations a model derives from the events alone (not from reads-from), computed once per
    /// graph however many reads-from choices are tried on it. See [`Graph::memo`].
    memo: std::cell::RefCell<Vec<(&'static str, Relation)>>,
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
fn cta_key(p: &Placement, t: usize) -> (u32, u32, u32, usize) {
    match p {
        Placement::Device(d) => (d.gpu, d.cluster, d.cta, usize::MAX),
        Placement::Host => (u32::MAX, u32::MAX, u32::MAX, t),
    }
}

impl<'p> Graph<'p> {
    /// Builds the graph of one path per thread, with reads-from still unset.
    pub fn new(program: &'p Program, paths: &[&Trace]) -> Result<Self, NotAnExecution> {
        let mut events: Vec<Event> = program
            .locations
            .iter()
            .enumerate()
            .map(|(i, l)| Event {
                thread: None,
                instr: None,
                kind: EventKind::Init {
                    loc: scopecheck_ir::LocId(i as u32),
                    value: l.init,
                },
            })
            .collect();
        let mut starts = Vec::with_capacity(paths.len());
        for (t, tr) in paths.iter().enumerate() {
            starts.push(events.len());
            events.extend(tr.events.iter().map(|e| Event {
                thread: Some(ThreadId(t as u32)),
                instr: Some(e.instr),
                kind: e.kind,
            }));
        }
        let n = events.len();
        let mut po = Relation::new(n);
        let mut rmw = Relation::new(n);
        let mut dep = Relation::new(n);
        for (t, tr) in paths.iter().enumerate() {
            let base = starts[t];
            let len = tr.events.len();
            for i in 0..len {
                po.insert_range(base + i, base + i + 1, base + len);
                for &d in &tr.events[i].deps {
                    dep.insert(base + d as usize, base + i);
                }
            }
            for &(r, w) in &tr.rmw {
                rmw.insert(base + r as usize, base + w as usize);
                // An RMW's write depends on its read (as in the formal PTX model, rmw ⊆ dep).
                dep.insert(base + r as usize, base + w as usize);
            }
        }
        let mut launch = Relation::new(n);
        for (t, th) in program.threads.iter().enumerate().take(paths.len()) {
            let mine = starts[t]..starts[t] + paths[t].events.len();
            for before in &th.after {
                let b = before.0 as usize;
                for i in starts[b]..starts[b] + paths[b].events.len() {
                    launch.insert_range(i, mine.start, mine.end);
                }
            }
        }
        let barrier_sync = match_barriers(program, &events).map_err(|e| match e {
            BarrierError::Wrong => NotAnExecution::WrongReduction,
            BarrierError::Blocks(waits) => NotAnExecution::BarrierBlocks(
                waits
                    .into_iter()
                    .filter_map(|w| {
                        let t = events[w].thread?;
                        Some((t, w - starts[t.0 as usize]))
                    })
                    .collect(),
            ),
        })?;
        let mut reads = EventSet::new(n);
        let mut writes = EventSet::new(n);
        for (i, e) in events.iter().enumerate() {
            if e.kind.is_read() {
                reads.insert(i);
            }
            if e.kind.is_write() {
                writes.insert(i);
            }
        }
        let mut at_loc = vec![EventSet::new(n); program.locations.len()];
        for (i, e) in events.iter().enumerate() {
            if let Some(l) = e.kind.loc() {
                at_loc[l.0 as usize].insert(i);
            }
        }
        let mut same_loc = Relation::new(n);
        for (i, e) in events.iter().enumerate() {
            if let Some(l) = e.kind.loc() {
                same_loc.insert_set(i, &at_loc[l.0 as usize]);
            }
        }
        Ok(Graph {
            program,
            thread_start: starts,
            events,
            po,
            rmw,
            dep,
            barrier_sync,
            launch,
            same_loc,
            reads,
            writes,
            rf: vec![None; n],
            memo: Default::default(),
        })
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// The relation `key` names, computed by `compute` on first use. Only for relations that do
    /// not depend on reads-from (which changes while the graph is reused).
    pub fn memo(&self, key: &'static str, compute: impl FnOnce() -> Relation) -> Relation {
        if let Some((_, r)) = self.memo.borrow().iter().find(|(k, _)| *k == key) {
            return r.clone();
        }
        let r = compute();
        self.memo.borrow_mut().push((key, r.clone()));
        r
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
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

enum BarrierError {
    Wrong,
    /// The waits (event indices) of barrier instances some participant never reaches.
    Blocks(Vec<usize>),
}

/// Matches the k-th arrival of each thread at barrier N of a CTA with the k-th arrivals of the
/// others, and returns arrive → wait pairs across threads.
fn match_barriers(program: &Program, events: &[Event]) -> Result<Relation, BarrierError> {
    struct Instance {
        arrives: Vec<(usize, Option<Value>, Option<u32>)>,
        waits: Vec<(usize, Option<(BarrierRedOp, Value)>)>,
    }
    /// (CTA key, barrier id, arrival number)
    type InstanceKey = ((u32, u32, u32, usize), u32, u32);
    let mut instances: Vec<(InstanceKey, Instance)> = Vec::new();
    let mut seen: Vec<(usize, u32, u32)> = Vec::new(); // (thread, barrier, arrivals so far)
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
        let key = (cta_key(&program.threads[t].placement, t), barrier, k);
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
    for ((cta, _, _), inst) in &instances {
        if inst.waits.is_empty() {
            continue;
        }
        let expected = inst
            .arrives
            .iter()
            .find_map(|a| a.2)
            .map(|c| c as usize)
            .unwrap_or_else(|| {
                program
                    .threads
                    .iter()
                    .enumerate()
                    .filter(|(t, th)| cta_key(&th.placement, *t) == *cta)
                    .count()
            });
        if inst.arrives.len() != expected {
            blocked.extend(inst.waits.iter().map(|w| w.0));
            continue;
        }
        for &(w, red) in &inst.waits {
            if let Some((op, v)) = red {
                let preds = inst.arrives.iter().map(|a| a.1.unwrap_or(0) != 0);
                let got = match op {
                    BarrierRedOp::Popc => preds.filter(|p| *p).count() as Value,
                    BarrierRedOp::And => Value::from(preds.clone().all(|p| p)),
                    BarrierRedOp::Or => Value::from(preds.clone().any(|p| p)),
                };
                if got != v {
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
