//! A thread's path: the events it emitted (each with the reads it depends on), how it ended
//! and its final registers. The vocabulary both interpreters write in, the graph explorer's
//! (`interp`) and the candidate enumerator's (`paths`), and every model reads.

use scopecheck_ir::{
    BarrierRedOp, FenceOrder, FenceSpaces, LocId, Order, Scope, ShflMode, Value, VoteOp,
};

/// What an event does. One exhaustive list, matched by every model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The initial write of a location: before every other write to it, in no thread.
    Init { loc: LocId, value: Value },
    Read {
        loc: LocId,
        value: Value,
        order: Order,
        scope: Scope,
        /// The read half of a `red`: strong, but never part of an acquire pattern (PTX ISA,
        /// "Release and Acquire Patterns": reductions do not form acquire patterns).
        reduction: bool,
    },
    Write {
        loc: LocId,
        value: Value,
        order: Order,
        scope: Scope,
    },
    Fence {
        order: FenceOrder,
        scope: Scope,
        /// The memory spaces the fence orders (all, for PTX).
        spaces: FenceSpaces,
    },
    /// Arrival at barrier `barrier`; `pred` is the predicate a `bar.red` contributes, or the
    /// value a warp collective contributes.
    Arrive {
        barrier: BarrierName,
        count: Option<u32>,
        pred: Option<Value>,
    },
    /// Waiting at barrier `barrier` until every participant arrived; `red` is the reduction
    /// a `bar.red` receives (a guess, checked when the barrier is matched), `received` what a
    /// warp collective gives its two destinations.
    Wait {
        barrier: BarrierName,
        red: Option<(BarrierRedOp, Value)>,
        received: Option<(Value, Value)>,
    },
}

/// Which barrier an arrival is at: one of its CTA's 16, or a warp collective of a kind and a
/// lane mask (rounds of a collective are counted per kind and mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierName {
    Cta(u32),
    Warp { mask: u32, op: WarpKind },
}

/// The kind of a warp collective, which the lanes that meet must share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpKind {
    /// `__syncwarp`: orders memory among the lanes that meet.
    Sync,
    Shfl(ShflMode),
    Vote(VoteOp),
    /// `__activemask()`: an arrival whose mask is the convergence the explorer chose, and no
    /// wait (the lanes that run converged need not wait for each other).
    ActiveMask,
}

/// How many arrivals at `barrier` a path's `events` hold.
pub(crate) fn arrivals_at(events: &[TraceEvent], barrier: BarrierName) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Arrive { barrier: b, .. } if b == barrier))
        .count()
}

impl BarrierName {
    /// Whether passing it orders memory (a CTA barrier, `__syncwarp`); a shuffle or a vote only
    /// exchanges values.
    pub fn orders_memory(self) -> bool {
        !matches!(
            self,
            BarrierName::Warp {
                op: WarpKind::Shfl(_) | WarpKind::Vote(_) | WarpKind::ActiveMask,
                ..
            }
        )
    }
}

impl EventKind {
    pub fn loc(&self) -> Option<LocId> {
        match *self {
            EventKind::Init { loc, .. }
            | EventKind::Read { loc, .. }
            | EventKind::Write { loc, .. } => Some(loc),
            EventKind::Fence { .. } | EventKind::Arrive { .. } | EventKind::Wait { .. } => None,
        }
    }

    pub fn value(&self) -> Option<Value> {
        match *self {
            EventKind::Init { value, .. }
            | EventKind::Read { value, .. }
            | EventKind::Write { value, .. } => Some(value),
            EventKind::Fence { .. } | EventKind::Arrive { .. } | EventKind::Wait { .. } => None,
        }
    }

    pub fn is_read(&self) -> bool {
        matches!(self, EventKind::Read { .. })
    }

    /// Writes, the initial writes included.
    pub fn is_write(&self) -> bool {
        matches!(self, EventKind::Write { .. } | EventKind::Init { .. })
    }

    pub fn is_memory(&self) -> bool {
        self.loc().is_some()
    }
}

/// One event of a path, with the path-local indices of the reads it depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Index of the instruction in the thread's code.
    pub instr: usize,
    pub kind: EventKind,
    /// Reads (path-local event indices) whose values flowed into this event's data or address,
    /// or into a branch that decided whether it happens. Shared, so that copying a search
    /// state does not copy every event's list.
    pub deps: std::sync::Arc<[u32]>,
}

/// How a path ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathEnd {
    /// The thread ran to the end of its code.
    Finished,
    /// A backward branch at instruction `instr` would be taken more often than the unroll bound.
    Cut { instr: usize },
    /// An await loop closed by the branch at `instr` failed its first iteration, whose events
    /// start at path index `iteration`: the thread spins on the values that iteration read.
    Blocked { instr: usize, iteration: usize },
    /// The scheduler never ran the thread (used when looking for hangs).
    Starved,
    /// The thread waits forever at the barrier of instruction `instr`, which some participant
    /// never reaches (the path is cut just before the wait).
    AtBarrier { instr: usize },
    /// The test did something undefined at instruction `instr`.
    Fault { instr: usize, message: String },
}

/// One path of one thread, with every read's value fixed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
    /// `(read, write)` path-local indices of each RMW's two halves.
    pub rmw: Vec<(u32, u32)>,
    /// Final register values.
    pub regs: Vec<Value>,
    pub end: PathEnd,
}

impl Trace {
    /// Where the spinning iteration starts (a path index), for a path blocked in one.
    pub fn spinning_from(&self) -> Option<usize> {
        match self.end {
            PathEnd::Blocked { iteration, .. } => Some(iteration),
            _ => None,
        }
    }

    /// The path's first `k` events (and the RMW pairs among them), ended by `end`, with
    /// registers `regs`.
    pub fn prefix(&self, k: usize, regs: Vec<Value>, end: PathEnd) -> Trace {
        Trace {
            events: self.events[..k].to_vec(),
            rmw: self
                .rmw
                .iter()
                .copied()
                .filter(|&(_, w)| (w as usize) < k)
                .collect(),
            regs,
            end,
        }
    }

    /// The path up to (not including) event `k`, a barrier wait that never completes.
    pub fn stopped_at_barrier(&self, k: usize) -> Trace {
        let end = PathEnd::AtBarrier {
            instr: self.events[k].instr,
        };
        self.prefix(k, self.regs.clone(), end)
    }
}

/// The `round`-th arrival (from 0) of a path at `barrier`: its path index, count and value.
pub(crate) fn nth_arrival(
    events: &[TraceEvent],
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
