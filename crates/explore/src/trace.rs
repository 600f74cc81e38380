//! Thread-local paths.
//!
//! A thread's behaviour depends on the values its reads return. We enumerate each thread's paths
//! with every read returning every value some write could store to that location (the *value
//! domain*); which of these guesses a write really provides is settled later, when reads-from is
//! chosen. The domain is computed as a fixpoint: start from initial values, run every thread,
//! add every value written, repeat until nothing new appears.

use scopecheck_ir::{
    BarrierKind, BarrierRedOp, FenceOrder, FenceSpaces, InstrKind, LocId, Operand, Order, Program,
    Scope, ShflMode, Thread, ThreadId, Value, VoteOp,
};

use crate::machine::Machine;

/// Most distinct values one location may take before exploration gives up as incomplete.
pub const MAX_VALUES_PER_LOCATION: usize = 64;
/// Most paths one thread may have before exploration gives up as incomplete.
pub const MAX_PATHS_PER_THREAD: usize = 200_000;

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

/// Why path enumeration could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceLimit {
    TooManyValues {
        loc: LocId,
    },
    TooManyPaths {
        thread: ThreadId,
    },
    /// A bound of the search (`--timeout`, `--max-memory`) was reached while paths were being
    /// listed: the reason, as the budget words it.
    OutOfBudget {
        reason: String,
    },
    /// An instruction the candidate enumerator cannot follow (a warp collective, or a barrier whose rounds depend on the other threads).
    Unsupported {
        thread: ThreadId,
        instr: usize,
    },
}

/// The values each location may hold, as sorted lists.
pub type Domain = Vec<Vec<Value>>;

/// The paths of every thread.
#[derive(Clone, Debug)]
pub struct Paths {
    pub per_thread: Vec<Vec<Trace>>,
    pub domain: Domain,
}

/// The most write events one execution of `program` can have: per thread, each writing
/// instruction runs at most once plus once per backward branch taken (await loops, explored by
/// their exiting iteration, take none).
fn max_writes_per_execution(program: &Program, unroll: u32) -> usize {
    program
        .threads
        .iter()
        .map(|t| {
            let writers = t
                .code
                .iter()
                .filter(|i| matches!(i.kind, InstrKind::Store { .. } | InstrKind::Rmw { .. }))
                .count();
            // Await loops run their body once per entry; only other loops repeat it.
            let backward: usize = crate::loops::thread_loops(program, t)
                .iter()
                .filter(|l| l.reducible.is_err())
                .map(|l| l.branches.len())
                .sum();
            writers * (1 + backward * unroll as usize)
        })
        .sum()
}

/// Enumerates every path of every thread of `program`, taking each backward branch at most
/// `unroll` times per path.
///
/// The value domain grows by rounds: round `k` reads values of round `k - 1`. A value that first
/// appears in round `k` is only written after a chain of `k` writes, each depending (data,
/// address or control) on a read of the one before; No-Thin-Air makes those writes distinct
/// events of one execution. So once `k` exceeds the number of writes an execution can have, no
/// later value can occur and the rounds stop even when RMWs keep producing new values.
///
/// Listing paths can take long (up to [`MAX_PATHS_PER_THREAD`] per thread and round), so it
/// asks `budget` as it goes and stops with [`TraceLimit::OutOfBudget`] when a bound is reached.
pub fn enumerate_paths(
    program: &Program,
    unroll: u32,
    budget: &crate::Budget,
) -> Result<Paths, TraceLimit> {
    let rounds = max_writes_per_execution(program, unroll);
    let mut domain: Domain = program.locations.iter().map(|l| vec![l.init]).collect();
    for round in 0.. {
        let mut per_thread = Vec::with_capacity(program.threads.len());
        for (t, thread) in program.threads.iter().enumerate() {
            per_thread.push(thread_paths(
                program,
                ThreadId(t as u32),
                thread,
                &domain,
                unroll,
                budget,
            )?);
        }
        if round >= rounds {
            return Ok(Paths { per_thread, domain });
        }
        let mut next = domain.clone();
        for trace in per_thread.iter().flatten() {
            for e in &trace.events {
                if let EventKind::Write { loc, value, .. } = e.kind {
                    let vals = &mut next[loc.0 as usize];
                    if let Err(pos) = vals.binary_search(&value) {
                        vals.insert(pos, value);
                        if vals.len() > MAX_VALUES_PER_LOCATION {
                            return Err(TraceLimit::TooManyValues { loc });
                        }
                    }
                }
            }
        }
        if next == domain {
            return Ok(Paths { per_thread, domain });
        }
        domain = next;
    }
    unreachable!("the loop returns once `round` reaches `rounds`")
}

#[derive(Clone)]
struct State {
    pc: usize,
    m: Machine,
    events: Vec<TraceEvent>,
    rmw: Vec<(u32, u32)>,
    /// Times each backward branch (by instruction index) was taken.
    taken: Vec<u32>,
    /// For each await loop entered, by head instruction: the path index where the current
    /// iteration's events start.
    iteration_start: Vec<Option<usize>>,
}

impl State {
    fn push(&mut self, instr: usize, kind: EventKind, deps: &[u32]) -> u32 {
        self.m.push(&mut self.events, instr, kind, deps)
    }
}

fn thread_paths(
    program: &Program,
    tid: ThreadId,
    thread: &Thread,
    domain: &Domain,
    unroll: u32,
    budget: &crate::Budget,
) -> Result<Vec<Trace>, TraceLimit> {
    let cta_size = program
        .threads
        .iter()
        .filter(|t| t.placement.same_cta(&thread.placement) || std::ptr::eq(*t, thread))
        .count() as Value;
    // Which lanes meet at a warp collective, and which arrivals form a round of a barrier,
    // depends on the other threads as they run, which paths enumerated one thread at a time
    // cannot know: this enumerator matches the k-th arrival of every thread of the CTA at
    // each barrier on its own. That is the ISA's rounds only when every thread of the CTA
    // takes part and waits (a `bar.arrive` may arrive again before the round completes), and
    // it sees no deadlock across barriers unless each thread uses one barrier.
    let mut first_id = None;
    if let Some(instr) = thread.code.iter().position(|i| match i.kind {
        InstrKind::Warp { .. } => true,
        InstrKind::Barrier {
            id, count, kind, ..
        } => {
            let whole_cta = match count {
                None => true,
                Some(Operand::Imm(c)) => c == cta_size,
                Some(Operand::Reg(_)) => false,
            };
            let one_id = id.imm().is_some() && *first_id.get_or_insert(id) == id;
            !one_id || !whole_cta || kind == BarrierKind::Arrive
        }
        _ => false,
    }) {
        return Err(TraceLimit::Unsupported { thread: tid, instr });
    }
    let start = State {
        pc: 0,
        m: Machine::new(thread),
        events: vec![],
        rmw: vec![],
        taken: vec![0; thread.code.len()],
        iteration_start: vec![None; thread.code.len()],
    };
    let loops = crate::loops::thread_loops(program, thread);
    // Await loops, by their backward branch: explored by their exiting iteration alone.
    let mut awaits = vec![None; thread.code.len()];
    for l in loops.iter().filter(|l| l.reducible.is_ok()) {
        for &b in &l.branches {
            awaits[b] = Some(l.head);
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![start];
    // No executions are handed on yet: only the clock and the memory can stop this.
    let budget = crate::Budget {
        max_executions: None,
        ..*budget
    };
    let mut tick = 0u32;
    while let Some(mut s) = stack.pop() {
        tick = tick.wrapping_add(1);
        if let Some(reason) = budget.exceeded(0, tick) {
            return Err(TraceLimit::OutOfBudget { reason });
        }
        let end = run(
            program, thread, &mut s, domain, unroll, cta_size, &awaits, &mut stack,
        );
        if let Some(end) = end {
            out.push(Trace {
                events: s.events,
                rmw: s.rmw,
                regs: s.m.regs,
                end,
            });
            if out.len() > MAX_PATHS_PER_THREAD {
                return Err(TraceLimit::TooManyPaths { thread: tid });
            }
        }
    }
    // Depth-first order pops the last choice first; reverse for a stable, source-like order.
    out.reverse();
    Ok(out)
}

/// Runs `s` forward until the path ends (returning how) or branches on a guessed value
/// (pushing every alternative but the first onto `stack` and continuing with the first).
#[allow(clippy::too_many_arguments)]
fn run(
    program: &Program,
    thread: &Thread,
    s: &mut State,
    domain: &Domain,
    unroll: u32,
    cta_size: Value,
    awaits: &[Option<usize>],
    stack: &mut Vec<State>,
) -> Option<PathEnd> {
    // Every guess forks the state; the fork continues from the instruction after the guess.
    let mut fork = |s: &mut State, values: &[Value], apply: &dyn Fn(&mut State, Value)| {
        for v in values.iter().skip(1).rev() {
            let mut alt = s.clone();
            apply(&mut alt, *v);
            stack.push(alt);
        }
        apply(s, values[0]);
    };
    loop {
        let pc = s.pc;
        let Some(instr) = thread.code.get(pc) else {
            return Some(PathEnd::Finished);
        };
        if awaits.contains(&Some(pc)) {
            s.iteration_start[pc] = Some(s.events.len());
        }
        s.pc += 1;
        match instr.kind {
            InstrKind::Load {
                dst,
                addr,
                ty,
                order,
                scope,
            } => {
                let (loc, adeps) = match s.m.address(program, addr, ty) {
                    Ok(x) => x,
                    Err(message) => return Some(PathEnd::Fault { instr: pc, message }),
                };
                fork(s, &domain[loc.0 as usize], &|s, v| {
                    let r = s.push(
                        pc,
                        EventKind::Read {
                            loc,
                            value: v,
                            order,
                            scope,
                            reduction: false,
                        },
                        &adeps,
                    );
                    s.m.set(dst, ty.wrap(v), vec![r]);
                });
            }
            InstrKind::Store {
                addr,
                value,
                ty,
                order,
                scope,
            } => {
                let (loc, adeps) = match s.m.address(program, addr, ty) {
                    Ok(x) => x,
                    Err(message) => return Some(PathEnd::Fault { instr: pc, message }),
                };
                let v = ty.wrap(s.m.operand(value));
                let deps = crate::machine::union(&adeps, s.m.operand_deps(value));
                s.push(
                    pc,
                    EventKind::Write {
                        loc,
                        value: v,
                        order,
                        scope,
                    },
                    &deps,
                );
            }
            InstrKind::Rmw {
                dst,
                addr,
                kind,
                ty,
                order,
                scope,
            } => {
                let (loc, adeps) = match s.m.address(program, addr, ty) {
                    Ok(x) => x,
                    Err(message) => return Some(PathEnd::Fault { instr: pc, message }),
                };
                fork(s, &domain[loc.0 as usize], &|s, old| {
                    let r = s.push(
                        pc,
                        EventKind::Read {
                            loc,
                            value: old,
                            order,
                            scope,
                            reduction: dst.is_none(),
                        },
                        &adeps,
                    );
                    let written = s.m.rmw_write(kind, ty, &adeps, old);
                    if let Some((value, deps)) = written {
                        let w = s.push(
                            pc,
                            EventKind::Write {
                                loc,
                                value,
                                order,
                                scope,
                            },
                            &deps,
                        );
                        s.rmw.push((r, w));
                    }
                    if let Some(d) = dst {
                        s.m.set(d, ty.wrap(old), vec![r]);
                    }
                });
            }
            InstrKind::Fence {
                order,
                scope,
                spaces,
            } => {
                s.push(
                    pc,
                    EventKind::Fence {
                        order,
                        scope,
                        spaces,
                    },
                    &[],
                );
            }
            InstrKind::Barrier {
                id, kind, count, ..
            } => {
                let (Operand::Imm(id), count) = (id, count.map(|c| s.m.operand(c) as u32)) else {
                    unreachable!("refused before the paths are enumerated")
                };
                let id = id as u32;
                match kind {
                    BarrierKind::Arrive => {
                        unreachable!("`bar.arrive` is refused before the paths are enumerated")
                    }
                    BarrierKind::Sync => {
                        s.push(
                            pc,
                            EventKind::Arrive {
                                barrier: BarrierName::Cta(id),
                                count,
                                pred: None,
                            },
                            &[],
                        );
                        s.push(
                            pc,
                            EventKind::Wait {
                                barrier: BarrierName::Cta(id),
                                red: None,
                                received: None,
                            },
                            &[],
                        );
                    }
                    BarrierKind::Red { op, dst, pred } => {
                        let p = s.m.operand(pred);
                        let pdeps = s.m.operand_deps(pred).to_vec();
                        s.push(
                            pc,
                            EventKind::Arrive {
                                barrier: BarrierName::Cta(id),
                                count,
                                pred: Some(p),
                            },
                            &pdeps,
                        );
                        let results: Vec<Value> = match op {
                            BarrierRedOp::Popc => (0..=cta_size).collect(),
                            BarrierRedOp::And | BarrierRedOp::Or => vec![0, 1],
                        };
                        fork(s, &results, &|s, v| {
                            s.push(
                                pc,
                                EventKind::Wait {
                                    barrier: BarrierName::Cta(id),
                                    red: Some((op, v)),
                                    received: None,
                                },
                                &[],
                            );
                            s.m.set(dst, v, vec![]);
                        });
                    }
                }
            }
            InstrKind::Warp { .. } => unreachable!("refused before the paths are enumerated"),
            InstrKind::Mov { dst, src } => {
                let v = s.m.operand(src);
                let d = s.m.operand_deps(src).to_vec();
                s.m.set(dst, v, d);
            }
            InstrKind::Binary { dst, op, ty, a, b } => {
                match s.m.binary(op, ty, program.arithmetic(), a, b) {
                    Ok((v, d)) => s.m.set(dst, v, d),
                    Err(why) => {
                        return Some(PathEnd::Fault {
                            instr: pc,
                            message: why.to_string(),
                        })
                    }
                }
            }
            InstrKind::Fma {
                dst,
                ty,
                mode,
                a,
                b,
                c,
            } => match s.m.fma(ty, mode, [a, b, c]) {
                Ok((v, d)) => s.m.set(dst, v, d),
                Err(why) => {
                    return Some(PathEnd::Fault {
                        instr: pc,
                        message: why.to_string(),
                    })
                }
            },
            InstrKind::Branch { cond, target } => {
                if s.m.branch(cond) {
                    if let (Some(head), true) = (awaits[pc], target <= pc) {
                        let start = s.iteration_start[head].unwrap_or(0);
                        if iteration_is_invisible(&s.events[start..]) {
                            return Some(PathEnd::Blocked {
                                instr: pc,
                                iteration: start,
                            });
                        }
                    }
                    if target <= pc {
                        if s.taken[pc] >= unroll {
                            return Some(PathEnd::Cut { instr: pc });
                        }
                        s.taken[pc] += 1;
                    }
                    s.pc = target;
                }
            }
        }
    }
}

/// Whether a failed iteration did nothing another thread can see: every write it made writes
/// back the value its RMW read (a failed CAS writes nothing at all), and it met no barrier.
fn iteration_is_invisible(events: &[TraceEvent]) -> bool {
    events.iter().enumerate().all(|(k, e)| match e.kind {
        EventKind::Write { value, .. } => {
            k > 0 && events[k - 1].kind.is_read() && events[k - 1].kind.value() == Some(value)
        }
        EventKind::Arrive { .. } | EventKind::Wait { .. } => false,
        EventKind::Read { .. } | EventKind::Fence { .. } | EventKind::Init { .. } => true,
    })
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
