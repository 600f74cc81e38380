//! Thread-local paths.
//!
//! A thread's behaviour depends on the values its reads return. We enumerate each thread's paths
//! with every read returning every value some write could store to that location (the *value
//! domain*); which of these guesses a write really provides is settled later, when reads-from is
//! chosen. The domain is computed as a fixpoint: start from initial values, run every thread,
//! add every value written, repeat until nothing new appears.
//!
//! Why this is a second interpreter of the IR beside `interp` (issue 34, deliverable 5): both
//! run instructions through one register machine (`machine`: operands, addresses, arithmetic,
//! branches, RMW values, dependencies), but they differ in what they are for, and merging the
//! two drivers would change what the candidate enumerator explores:
//! - **Values.** Here a read forks the path over every value of its location's domain; in
//!   `interp` a read gets the value of the write the search chose, or becomes a hole that the
//!   thread may run past (unknown registers, replays), which this enumerator never needs.
//! - **Loops.** Here only the static await loops of `loops::thread_loops` are explored by their
//!   exiting iteration (checked per path by `iteration_is_invisible`), and every other backward
//!   branch counts against the unroll bound. `interp` judges every loop by behaviour (a pure
//!   iteration with the same live registers, private locations restored, write-backs morally
//!   strong: `ThreadStatics`). Driving this enumerator with `interp` would stop at the first
//!   failing iteration of loops that are pure but not await loops, which it unrolls now: other
//!   paths for the fallback, against this rule of no behaviour change. As the tests'
//!   differential oracle it is also worth more for reaching the graph explorer's verdicts by
//!   its own loop argument.
//! - **Barriers.** Here the k-th arrival of every thread of a CTA is matched on its own, and
//!   what `interp` handles with the search's rounds (warp collectives, `bar.arrive`, counts in
//!   registers, several barriers in one thread) is refused up front (`TraceLimit::Unsupported`).

use scopecheck_ir::{
    BarrierKind, BarrierRedOp, BranchCond, InstrKind, LocId, Operand, Program, RegId, RmwKind,
    Thread, ThreadId, Value,
};

use crate::machine::{Access, Machine};
use crate::trace::{BarrierName, EventKind, PathEnd, Trace, TraceEvent};

/// Most distinct values one location may take before exploration gives up as incomplete.
pub const MAX_VALUES_PER_LOCATION: usize = 64;
/// Most paths one thread may have before exploration gives up as incomplete.
pub const MAX_PATHS_PER_THREAD: usize = 200_000;

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
        m: Machine::new(program, thread),
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
    let ctx = PathContext {
        program,
        thread,
        domain,
        unroll,
        cta_size,
        awaits: &awaits,
    };
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
        let end = run(&ctx, &mut s, &mut stack);
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

/// What every path of one thread is enumerated against.
struct PathContext<'a> {
    program: &'a Program,
    thread: &'a Thread,
    domain: &'a Domain,
    unroll: u32,
    /// How many threads the thread's CTA has (the values a `bar.red.popc` may return).
    cta_size: Value,
    /// Await loops, by their backward branch: the loop's head.
    awaits: &'a [Option<usize>],
}

/// Runs `s` forward until the path ends (returning how) or branches on a guessed value
/// (pushing every alternative but the first onto `stack` and continuing with the first).
fn run(ctx: &PathContext, s: &mut State, stack: &mut Vec<State>) -> Option<PathEnd> {
    loop {
        let pc = s.pc;
        let Some(instr) = ctx.thread.code.get(pc) else {
            return Some(PathEnd::Finished);
        };
        if ctx.awaits.contains(&Some(pc)) {
            s.iteration_start[pc] = Some(s.events.len());
        }
        s.pc += 1;
        if let Some(end) = s.execute(ctx, stack, pc, &instr.kind) {
            return Some(end);
        }
    }
}

impl State {
    /// Every guess forks the state; the fork continues from the instruction after the guess:
    /// `self` goes on with the first of `values`, and a copy for each other value goes onto
    /// `stack`.
    fn fork(
        &mut self,
        stack: &mut Vec<State>,
        values: &[Value],
        apply: &dyn Fn(&mut State, Value),
    ) {
        for v in values.iter().skip(1).rev() {
            let mut alt = self.clone();
            apply(&mut alt, *v);
            stack.push(alt);
        }
        apply(self, values[0]);
    }

    /// Executes instruction `kind` at `pc` (the program counter is already past it): how the
    /// path ends there, if it does.
    fn execute(
        &mut self,
        ctx: &PathContext,
        stack: &mut Vec<State>,
        pc: usize,
        kind: &InstrKind,
    ) -> Option<PathEnd> {
        let fault = |message| Some(PathEnd::Fault { instr: pc, message });
        match *kind {
            InstrKind::Load {
                dst,
                addr,
                ty,
                order,
                scope,
            } => return self.load(ctx, stack, pc, Access::new(addr, ty, order, scope), dst),
            InstrKind::Store {
                addr,
                value,
                ty,
                order,
                scope,
            } => return self.store(ctx, pc, Access::new(addr, ty, order, scope), value),
            InstrKind::Rmw {
                dst,
                addr,
                kind,
                ty,
                order,
                scope,
            } => {
                let access = Access::new(addr, ty, order, scope);
                return self.rmw(ctx, stack, pc, access, dst, kind);
            }
            InstrKind::Fence {
                order,
                scope,
                spaces,
            } => {
                let fence = EventKind::Fence {
                    order,
                    scope,
                    spaces,
                };
                self.push(pc, fence, &[]);
            }
            InstrKind::Barrier {
                id, kind, count, ..
            } => self.barrier(ctx, stack, pc, id, kind, count),
            InstrKind::Warp { .. } => unreachable!("refused before the paths are enumerated"),
            InstrKind::Mov { dst, src } => {
                let v = self.m.operand(src);
                let d = self.m.operand_deps(src).to_vec();
                let w = self.m.window(src);
                self.m.set(dst, v, d);
                self.m.set_window(dst, w);
            }
            InstrKind::Binary { dst, op, ty, a, b } => {
                match self.m.binary(op, ty, ctx.program.arithmetic(), a, b) {
                    Ok((v, d)) => {
                        let w = self.m.binary_window(op, a, b);
                        self.m.set(dst, v, d);
                        self.m.set_window(dst, w);
                    }
                    Err(why) => return fault(why.to_string()),
                }
            }
            InstrKind::Fma {
                dst,
                ty,
                mode,
                a,
                b,
                c,
            } => match self.m.fma(ty, mode, [a, b, c]) {
                Ok((v, d)) => self.m.set(dst, v, d),
                Err(why) => return fault(why.to_string()),
            },
            InstrKind::Branch { cond, target } => return self.branch(ctx, pc, cond, target),
        }
        None
    }

    /// A load: one path per value of its location's domain.
    fn load(
        &mut self,
        ctx: &PathContext,
        stack: &mut Vec<State>,
        pc: usize,
        access: Access,
        dst: RegId,
    ) -> Option<PathEnd> {
        let Access {
            addr,
            ty,
            order,
            scope,
        } = access;
        let (loc, adeps) = match self.m.address(ctx.program, addr, ty) {
            Ok(x) => x,
            Err(message) => return Some(PathEnd::Fault { instr: pc, message }),
        };
        self.fork(stack, &ctx.domain[loc.0 as usize], &|s, v| {
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
        None
    }

    /// A store of `value`.
    fn store(
        &mut self,
        ctx: &PathContext,
        pc: usize,
        access: Access,
        value: Operand,
    ) -> Option<PathEnd> {
        let Access {
            addr,
            ty,
            order,
            scope,
        } = access;
        let (loc, adeps) = match self.m.address(ctx.program, addr, ty) {
            Ok(x) => x,
            Err(message) => return Some(PathEnd::Fault { instr: pc, message }),
        };
        let v = ty.wrap(self.m.operand(value));
        let deps = crate::machine::union(&adeps, self.m.operand_deps(value));
        self.push(
            pc,
            EventKind::Write {
                loc,
                value: v,
                order,
                scope,
            },
            &deps,
        );
        None
    }

    /// An RMW (`atom`, or `red` without `dst`): one path per value of its location's domain
    /// that the read half may return, each with the write that value makes (a failed CAS
    /// writes nothing).
    fn rmw(
        &mut self,
        ctx: &PathContext,
        stack: &mut Vec<State>,
        pc: usize,
        access: Access,
        dst: Option<RegId>,
        kind: RmwKind,
    ) -> Option<PathEnd> {
        let Access {
            addr,
            ty,
            order,
            scope,
        } = access;
        let (loc, adeps) = match self.m.address(ctx.program, addr, ty) {
            Ok(x) => x,
            Err(message) => return Some(PathEnd::Fault { instr: pc, message }),
        };
        self.fork(stack, &ctx.domain[loc.0 as usize], &|s, old| {
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
        None
    }

    /// A CTA barrier of immediate `id` (others are refused before the paths are enumerated):
    /// the arrival and the wait, and for `bar.red` one path per result the round may give.
    fn barrier(
        &mut self,
        ctx: &PathContext,
        stack: &mut Vec<State>,
        pc: usize,
        id: Operand,
        kind: BarrierKind,
        count: Option<Operand>,
    ) {
        let (Operand::Imm(id), count) = (id, count.map(|c| self.m.operand(c) as u32)) else {
            unreachable!("refused before the paths are enumerated")
        };
        let id = id as u32;
        match kind {
            BarrierKind::Arrive => {
                unreachable!("`bar.arrive` is refused before the paths are enumerated")
            }
            BarrierKind::Sync => {
                self.push(
                    pc,
                    EventKind::Arrive {
                        barrier: BarrierName::Cta(id),
                        count,
                        pred: None,
                    },
                    &[],
                );
                self.push(
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
                let p = self.m.operand(pred);
                let pdeps = self.m.operand_deps(pred).to_vec();
                self.push(
                    pc,
                    EventKind::Arrive {
                        barrier: BarrierName::Cta(id),
                        count,
                        pred: Some(p),
                    },
                    &pdeps,
                );
                let results: Vec<Value> = match op {
                    BarrierRedOp::Popc => (0..=ctx.cta_size).collect(),
                    BarrierRedOp::And | BarrierRedOp::Or => vec![0, 1],
                };
                self.fork(stack, &results, &|s, v| {
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

    /// A branch at `pc` to `target`, when its condition holds. An await loop's backward
    /// branch after an invisible iteration blocks the path (the loop is explored by its
    /// exiting iteration); another backward branch taken more often than the unroll bound
    /// cuts it.
    fn branch(
        &mut self,
        ctx: &PathContext,
        pc: usize,
        cond: BranchCond,
        target: usize,
    ) -> Option<PathEnd> {
        if !self.m.branch(cond) {
            return None;
        }
        if let (Some(head), true) = (ctx.awaits[pc], target <= pc) {
            let start = self.iteration_start[head].unwrap_or(0);
            if iteration_is_invisible(&self.events[start..]) {
                return Some(PathEnd::Blocked {
                    instr: pc,
                    iteration: start,
                });
            }
        }
        if target <= pc {
            if self.taken[pc] >= ctx.unroll {
                return Some(PathEnd::Cut { instr: pc });
            }
            self.taken[pc] += 1;
        }
        self.pc = target;
        None
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
