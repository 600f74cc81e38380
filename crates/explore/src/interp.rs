//! The interpreter: one thread of the IR executed step by step against the execution graph.
//!
//! Registers, branch conditions and addresses are concrete: a read's value is the value of the
//! write the explorer chose for it to read from, so the thread's path is a function of its
//! reads-from choices. The interpreter records the events it emits with the reads each one
//! depends on (data, address, control), as `paths` does for the candidate enumerator, so that
//! both build the same graphs. Why the two interpreters stay two: `paths`'s module doc.
//!
//! Loops are judged by behaviour: when a backward branch closes an iteration that was *pure*
//! (every write it made was a write-back of what its own RMW read, morally strong with every
//! other writer of the location; no barrier; the registers live at the loop head unchanged),
//! repeating it would read the same writes and do the same nothing, so the thread is
//! *blocked* there (docs/explore.md, "Loops by behaviour"). Other backward branches count
//! against the unroll bound.

use scopecheck_ir::{
    Address, Arithmetic, BarrierKind, BarrierRedOp, BinOp, BranchCond, FloatMode, InstrKind,
    IntType, LocId, Operand, Order, Program, RegId, RmwKind, Scope, Thread, Value, WarpOp,
};

use crate::machine::{union, Access, Machine};
use crate::statics::ThreadStatics;
use crate::trace::{BarrierName, EventKind, PathEnd, Trace, WarpKind};

/// A read the thread needs a value for before it can go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadRequest {
    pub instr: usize,
    pub loc: LocId,
    pub order: Order,
    pub scope: Scope,
    /// The read of a `red` (no destination register).
    pub reduction: bool,
    /// Reads the address depends on.
    pub addr_deps: Vec<u32>,
    /// The type of the access.
    pub ty: IntType,
    what: ReadFor,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum ReadFor {
    Load { dst: RegId },
    Rmw { dst: Option<RegId>, kind: RmwKind },
}

/// A barrier wait the thread is held at until its round completes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarrierWait {
    pub instr: usize,
    pub barrier: BarrierName,
    /// Which arrival of this thread at this barrier it waits on (0 for the first).
    pub round: u32,
    pub red: Option<(BarrierRedOp, RegId)>,
    /// What a warp collective gives this thread, once its round is complete.
    pub warp: Option<WarpWait>,
}

/// The destinations of a warp collective and this thread's shuffle operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpWait {
    pub dst: Option<RegId>,
    pub pred_dst: Option<RegId>,
    /// The ISA's `b` and `c` of a shuffle (0 otherwise).
    pub b: Value,
    pub c: Value,
}

/// Where a thread stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// It can execute its next instruction.
    Ready,
    /// Its next instruction reads; the explorer has not yet chosen from what.
    Reads(ReadRequest),
    /// It cannot go on before some read of it that waits for a write not yet in the graph (a
    /// *hole*) gets its value: its next instruction needs that value, or it reached the end.
    Suspended,
    /// It waits at a barrier whose round has not completed.
    Waiting(BarrierWait),
    /// It executes `__activemask()` at instruction `instr`; the explorer has not yet chosen
    /// which lanes run converged with it.
    Converges { instr: usize, dst: Option<RegId> },
    /// It will not execute again (finished, blocked in a pure iteration, cut, faulted).
    Stopped,
}

/// What one step of a thread did.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// It emitted a write (path index), which readers may now read from.
    Wrote(usize),
    /// It emitted an event that is not a write, or only computed in registers.
    Other,
    /// It needs a value: its status is now [`Status::Reads`].
    NeedsValue,
    /// It arrived at a barrier and waits: its status is now [`Status::Waiting`].
    Waits,
    /// It stopped: its trace's `end` says how.
    Stopped,
    /// It needs the value of a hole first: its status is now [`Status::Suspended`].
    Suspended,
    /// It needs a convergence chosen: its status is now [`Status::Converges`].
    Converges,
}

/// Register values and their allocation windows, as a loop head saw them.
type Registers = (std::sync::Arc<[Value]>, std::sync::Arc<[u32]>);

/// The state of one thread: its path so far and its registers.
#[derive(Clone, Debug)]
pub struct ThreadRun {
    pub trace: Trace,
    pub status: Status,
    pc: usize,
    /// Registers and their dependencies; `trace.regs` gets their values when the path is
    /// judged ([`ThreadRun::seal_registers`]).
    m: Machine,
    /// Times each backward branch was taken in iterations that were not pure.
    taken: Vec<u32>,
    /// Per loop head (by instruction index): path length, registers and their allocation
    /// windows when control last arrived there.
    heads: Vec<Option<(usize, Registers)>>,
    /// Registers whose value comes from a hole.
    unknown: Vec<bool>,
    /// Reads waiting for a write not yet in the graph: (path index, the request).
    pub holes: Vec<(usize, ReadRequest)>,
    /// Writes (path indices) whose stored value comes from a hole: no read may read from them
    /// before it is known.
    pub value_holes: Vec<usize>,
    /// Whether the thread may run past a hole while nothing it does needs the value (models
    /// with load buffering); otherwise a hole suspends it at once.
    run_ahead: bool,
}

impl ThreadRun {
    pub fn new(program: &Program, thread: &Thread, run_ahead: bool) -> Self {
        let m = Machine::new(program, thread);
        ThreadRun {
            trace: Trace {
                events: vec![],
                rmw: vec![],
                regs: m.regs.clone(),
                end: PathEnd::Finished,
            },
            status: Status::Ready,
            pc: 0,
            m,
            taken: vec![0; thread.code.len()],
            heads: vec![None; thread.code.len()],
            unknown: vec![false; thread.registers.len()],
            holes: vec![],
            value_holes: vec![],
            run_ahead,
        }
    }

    fn is_unknown(&self, o: Operand) -> bool {
        matches!(o, Operand::Reg(r) if self.unknown[r.0 as usize])
    }

    fn addr_unknown(&self, a: &Address) -> bool {
        a.reg().is_some_and(|r| self.unknown[r.0 as usize])
    }

    /// The registers' values, their allocation windows (`machine.rs`), and which of them
    /// come from a hole (their value is not known yet), for the gate's analysis from where
    /// the thread stands (`gate::from_here`).
    pub fn registers(&self) -> (&[Value], &[u32], &[bool]) {
        (&self.m.regs, &self.m.windows, &self.unknown)
    }

    /// The registers whose value is not known yet.
    pub fn unknown_registers(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.unknown.len()).filter(|&r| self.unknown[r])
    }

    /// Whether instruction `kind` cannot run before the holes are filled: it needs an unknown
    /// value for an address, a stored value, a branch, or a check of undefined behaviour.
    fn needs_unknown(&self, kind: &InstrKind, rules: Arithmetic) -> bool {
        match kind {
            InstrKind::Load { addr, .. } => self.addr_unknown(addr),
            // A store of an unknown value is made with its value to come (see `value_holes`).
            InstrKind::Store { addr, .. } => self.addr_unknown(addr),
            InstrKind::Rmw { addr, kind, .. } => {
                self.addr_unknown(addr)
                    || match *kind {
                        RmwKind::Op(_, v) => self.is_unknown(v),
                        RmwKind::Cas { expected, new } => {
                            self.is_unknown(expected) || self.is_unknown(new)
                        }
                    }
            }
            InstrKind::Barrier { .. } | InstrKind::Warp { .. } => crate::loops::reads_of(kind)
                .iter()
                .any(|r| self.unknown[r.0 as usize]),
            // Whether the result is defined may depend on either operand.
            InstrKind::Binary { op, a, b, ty, .. } => {
                (self.is_unknown(*a) || self.is_unknown(*b)) && op.can_be_undefined(*ty, rules)
            }
            InstrKind::Branch {
                cond: BranchCond::Eq(a, b) | BranchCond::Ne(a, b),
                ..
            } => self.is_unknown(*a) || self.is_unknown(*b),
            InstrKind::Mov { .. }
            | InstrKind::Fma { .. }
            | InstrKind::Fence { .. }
            | InstrKind::Branch { .. } => false,
        }
    }

    fn suspend(&mut self) -> Step {
        self.status = Status::Suspended;
        Step::Suspended
    }

    /// The instruction the thread is at.
    pub fn pc(&self) -> usize {
        self.pc
    }

    fn operand(&self, o: Operand) -> Value {
        self.m.operand(o)
    }

    fn operand_deps(&self, o: Operand) -> &[u32] {
        self.m.operand_deps(o)
    }

    /// Sets a register to a known value.
    fn set(&mut self, r: RegId, v: Value, deps: Vec<u32>) {
        self.m.set(r, v, deps);
        self.unknown[r.0 as usize] = false;
    }

    fn push(&mut self, instr: usize, kind: EventKind, deps: &[u32]) -> u32 {
        self.m.push(&mut self.trace.events, instr, kind, deps)
    }

    fn stop(&mut self, end: PathEnd) -> Step {
        self.trace.end = end;
        self.status = Status::Stopped;
        Step::Stopped
    }

    /// Asks for the value of the read `access` at instruction `pc` makes for `what`, or faults
    /// on its address.
    fn request(&mut self, pc: usize, program: &Program, access: Access, what: ReadFor) -> Step {
        let Access {
            addr,
            ty,
            order,
            scope,
        } = access;
        let (loc, addr_deps) = match self.m.address(program, addr, ty) {
            Ok(x) => x,
            Err(message) => return self.fault(pc, message),
        };
        self.status = Status::Reads(ReadRequest {
            instr: pc,
            loc,
            order,
            scope,
            // The read of a `red` (an RMW without a destination).
            reduction: matches!(what, ReadFor::Rmw { dst: None, .. }),
            addr_deps,
            ty,
            what,
        });
        Step::NeedsValue
    }

    /// Gives the path its registers' values, for the judge.
    pub fn seal_registers(&mut self) {
        self.trace.regs.clone_from(&self.m.regs);
    }

    /// Executes instructions until one emits an event, needs a value, waits or stops.
    pub fn step(&mut self, program: &Program, thread: &Thread, statics: &ThreadStatics) -> Step {
        debug_assert_eq!(self.status, Status::Ready);
        loop {
            let pc = self.pc;
            let Some(instr) = thread.code.get(pc) else {
                // The final registers may still depend on a hole.
                if !self.holes.is_empty() {
                    return self.suspend();
                }
                return self.stop(PathEnd::Finished);
            };
            if self.needs_unknown(&instr.kind, program.arithmetic()) {
                return self.suspend();
            }
            if statics.is_loop_head(pc) {
                self.heads[pc] = Some((
                    self.trace.events.len(),
                    (
                        self.m.regs.as_slice().into(),
                        self.m.windows.as_slice().into(),
                    ),
                ));
            }
            self.pc += 1;
            if let Some(step) = self.execute(pc, &instr.kind, program, thread, statics) {
                return step;
            }
        }
    }

    /// Executes instruction `kind` at `pc` (the program counter is already past it): the step
    /// it ends with, or `None` when it only computed in registers or branched and the thread
    /// goes on.
    fn execute(
        &mut self,
        pc: usize,
        kind: &InstrKind,
        program: &Program,
        thread: &Thread,
        statics: &ThreadStatics,
    ) -> Option<Step> {
        let step = match *kind {
            InstrKind::Load {
                dst,
                addr,
                ty,
                order,
                scope,
            } => {
                let access = Access::new(addr, ty, order, scope);
                self.request(pc, program, access, ReadFor::Load { dst })
            }
            InstrKind::Rmw {
                dst,
                addr,
                kind: RmwKind::Op(_, operand),
                ty,
                order,
                scope,
            } if statics.commutes(pc) => {
                let access = Access::new(addr, ty, order, scope);
                self.blind_update(pc, program, access, dst, operand)
            }
            InstrKind::Rmw {
                dst,
                addr,
                kind,
                ty,
                order,
                scope,
            } => {
                let access = Access::new(addr, ty, order, scope);
                self.request(pc, program, access, ReadFor::Rmw { dst, kind })
            }
            InstrKind::Store {
                addr,
                value,
                ty,
                order,
                scope,
            } => self.store(pc, program, Access::new(addr, ty, order, scope), value),
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
                Step::Other
            }
            InstrKind::Barrier {
                id, kind, count, ..
            } => self.barrier(pc, id, kind, count),
            InstrKind::Warp {
                op: WarpOp::ActiveMask,
                dst,
                ..
            } => {
                self.status = Status::Converges { instr: pc, dst };
                Step::Converges
            }
            InstrKind::Warp {
                op,
                mask,
                value,
                dst,
                pred_dst,
            } => self.warp_collective(pc, op, mask, value, dst, pred_dst),
            InstrKind::Mov { dst, src } => {
                self.mov(dst, src);
                return None;
            }
            InstrKind::Binary { dst, op, ty, a, b } => {
                let done = self.binary(program.arithmetic(), dst, op, ty, a, b);
                return done.err().map(|message| self.fault(pc, message));
            }
            InstrKind::Fma {
                dst,
                ty,
                mode,
                a,
                b,
                c,
            } => {
                let done = self.fma(dst, ty, mode, [a, b, c]);
                return done.err().map(|message| self.fault(pc, message));
            }
            InstrKind::Branch { cond, target } => {
                return self.branch(pc, cond, target, program, thread, statics)
            }
        };
        Some(step)
    }

    /// Stops the path with a fault of the instruction at `pc`.
    fn fault(&mut self, pc: usize, message: String) -> Step {
        self.stop(PathEnd::Fault { instr: pc, message })
    }

    /// A blind update of a commuting location (`commute`): a write holding its operand until
    /// the leaf chains the updates and computes their values. Its result register is dead; it
    /// holds 0.
    fn blind_update(
        &mut self,
        pc: usize,
        program: &Program,
        access: Access,
        dst: Option<RegId>,
        operand: Operand,
    ) -> Step {
        let Access {
            addr,
            ty,
            order,
            scope,
        } = access;
        let (loc, addr_deps) = match self.m.address(program, addr, ty) {
            Ok(x) => x,
            Err(message) => return self.fault(pc, message),
        };
        let deps = union(&addr_deps, self.operand_deps(operand));
        let e = self.push(
            pc,
            EventKind::Write {
                loc,
                value: ty.wrap(self.operand(operand)),
                order,
                scope,
            },
            &deps,
        );
        if let Some(d) = dst {
            self.set(d, 0, vec![]);
        }
        Step::Wrote(e as usize)
    }

    /// A store of `value`; one whose value comes from a hole is a value hole
    /// (`value_holes`), which no read may read from yet.
    fn store(&mut self, pc: usize, program: &Program, access: Access, value: Operand) -> Step {
        let Access {
            addr,
            ty,
            order,
            scope,
        } = access;
        let (loc, addr_deps) = match self.m.address(program, addr, ty) {
            Ok(x) => x,
            Err(message) => return self.fault(pc, message),
        };
        let v = ty.wrap(self.operand(value));
        let deps = union(&addr_deps, self.operand_deps(value));
        let e = self.push(
            pc,
            EventKind::Write {
                loc,
                value: v,
                order,
                scope,
            },
            &deps,
        );
        if self.is_unknown(value) {
            self.value_holes.push(e as usize);
            return Step::Other;
        }
        Step::Wrote(e as usize)
    }

    /// A CTA barrier: the arrival, then (but for `bar.arrive`) the wait for its round.
    fn barrier(
        &mut self,
        pc: usize,
        id: Operand,
        kind: BarrierKind,
        count: Option<Operand>,
    ) -> Step {
        let (pred, pdeps, red) = match kind {
            BarrierKind::Red { op, dst, pred } => (
                Some(self.operand(pred)),
                self.operand_deps(pred).to_vec(),
                Some((op, dst)),
            ),
            BarrierKind::Sync | BarrierKind::Arrive => (None, vec![], None),
        };
        let (id, count) = match self.barrier_operands(id, count, kind) {
            Ok(x) => x,
            Err(message) => return self.fault(pc, message),
        };
        let barrier = BarrierName::Cta(id);
        let round = self.arrivals_at(barrier);
        self.push(
            pc,
            EventKind::Arrive {
                barrier,
                count,
                pred,
            },
            &pdeps,
        );
        if kind == BarrierKind::Arrive {
            return Step::Other;
        }
        self.status = Status::Waiting(BarrierWait {
            instr: pc,
            barrier,
            round,
            red,
            warp: None,
        });
        Step::Waits
    }

    /// A warp collective other than `activemask`: the arrival with this lane's `value`, then
    /// the wait for the lanes of `mask`.
    fn warp_collective(
        &mut self,
        pc: usize,
        op: WarpOp,
        mask: Operand,
        value: Operand,
        dst: Option<RegId>,
        pred_dst: Option<RegId>,
    ) -> Step {
        let (kind, b, c) = match op {
            WarpOp::ActiveMask => unreachable!("`activemask` converges, it does not wait"),
            WarpOp::Sync => (WarpKind::Sync, 0, 0),
            WarpOp::Vote(v) => (WarpKind::Vote(v), 0, 0),
            WarpOp::Shfl { mode, lane, clamp } => (
                WarpKind::Shfl(mode),
                self.operand(lane),
                self.operand(clamp),
            ),
        };
        let barrier = BarrierName::Warp {
            mask: self.operand(mask) as u32,
            op: kind,
        };
        let round = self.arrivals_at(barrier);
        let v = self.operand(value);
        let vdeps = self.operand_deps(value).to_vec();
        self.push(
            pc,
            EventKind::Arrive {
                barrier,
                count: None,
                pred: Some(v),
            },
            &vdeps,
        );
        self.status = Status::Waiting(BarrierWait {
            instr: pc,
            barrier,
            round,
            red: None,
            warp: Some(WarpWait {
                dst,
                pred_dst,
                b,
                c,
            }),
        });
        Step::Waits
    }

    /// `mov`: the value, its dependencies and its allocation window, and whether it comes
    /// from a hole.
    fn mov(&mut self, dst: RegId, src: Operand) {
        let v = self.operand(src);
        let d = self.operand_deps(src).to_vec();
        let unknown = self.is_unknown(src);
        let w = self.m.window(src);
        self.set(dst, v, d);
        self.m.set_window(dst, w);
        self.unknown[dst.0 as usize] = unknown;
    }

    /// A binary operation into `dst`, or why it is undefined (a fault).
    fn binary(
        &mut self,
        rules: Arithmetic,
        dst: RegId,
        op: BinOp,
        ty: IntType,
        a: Operand,
        b: Operand,
    ) -> Result<(), String> {
        let (v, d) = self
            .m
            .binary(op, ty, rules, a, b)
            .map_err(|why| why.to_string())?;
        let unknown = self.is_unknown(a) || self.is_unknown(b);
        let w = self.m.binary_window(op, a, b);
        self.set(dst, v, d);
        self.m.set_window(dst, w);
        self.unknown[dst.0 as usize] = unknown;
        Ok(())
    }

    /// A fused multiply-add into `dst`, or why it is undefined (a fault).
    fn fma(
        &mut self,
        dst: RegId,
        ty: IntType,
        mode: FloatMode,
        operands: [Operand; 3],
    ) -> Result<(), String> {
        let (v, d) = self
            .m
            .fma(ty, mode, operands)
            .map_err(|why| why.to_string())?;
        let unknown = operands.iter().any(|&o| self.is_unknown(o));
        self.set(dst, v, d);
        self.unknown[dst.0 as usize] = unknown;
        Ok(())
    }

    /// A branch at `pc` to `target`, when `cond` holds. Taking a backward branch that closes a
    /// pure iteration blocks the thread; taking one more often than the unroll bound cuts the
    /// path.
    fn branch(
        &mut self,
        pc: usize,
        cond: BranchCond,
        target: usize,
        program: &Program,
        thread: &Thread,
        statics: &ThreadStatics,
    ) -> Option<Step> {
        if !self.m.branch(cond) {
            return None;
        }
        if target <= pc {
            if let Some(start) = self.pure_iteration(program, thread, statics, target) {
                return Some(self.stop(PathEnd::Blocked {
                    instr: pc,
                    iteration: start,
                }));
            }
            if self.taken[pc] >= statics.unroll {
                return Some(self.stop(PathEnd::Cut { instr: pc }));
            }
            self.taken[pc] += 1;
        }
        self.pc = target;
        None
    }

    /// When the iteration that a backward branch to `head` closes was pure, the path index
    /// where it started.
    fn pure_iteration(
        &self,
        program: &Program,
        thread: &Thread,
        statics: &ThreadStatics,
        head: usize,
    ) -> Option<usize> {
        let (start, (regs, windows)) = self.heads[head].as_ref()?;
        let events = &self.trace.events[*start..];
        let invisible = events.iter().enumerate().all(|(k, e)| match e.kind {
            // A write no other thread can see: its location is this thread's alone and the
            // iteration leaves it holding what it held before (`restores_private`).
            EventKind::Write { loc, .. } if statics.is_private(loc) => {
                !self.value_holes.contains(&(start + k))
            }
            // A write-back: the write half of an RMW that wrote what it read, and every other
            // writer of the location is morally strong with it.
            EventKind::Write { value, .. } => {
                k > 0
                    && events[k - 1].kind.is_read()
                    && events[k - 1].instr == e.instr
                    && events[k - 1].kind.value() == Some(value)
                    && statics.write_back_ok(program, thread, e.instr)
            }
            EventKind::Arrive { .. } | EventKind::Wait { .. } => false,
            EventKind::Read { .. } | EventKind::Fence { .. } | EventKind::Init { .. } => true,
        });
        let same_registers = statics
            .live_at(head)
            .all(|r| regs[r] == self.m.regs[r] && windows[r] == self.m.windows[r]);
        (invisible && same_registers && self.restores_private(program, statics, *start))
            .then_some(*start)
    }

    /// Whether every private location (`ThreadStatics::is_private`) the events from path index
    /// `start` on write ends holding the value it held at `start`: the thread's last write to
    /// it before, or its initial value (no other thread writes it, and coherence follows this
    /// thread's program order). A body that writes and undoes (`add 1 … add -1` on a counter
    /// of its own) then leaves memory as it found it, and deleting the iteration deletes
    /// nothing another thread could have read.
    fn restores_private(&self, program: &Program, statics: &ThreadStatics, start: usize) -> bool {
        let events = &self.trace.events;
        let last_before = |loc, end: usize| {
            events[..end].iter().rev().find_map(|e| match e.kind {
                EventKind::Write { loc: l, value, .. } if l == loc => Some(value),
                _ => None,
            })
        };
        events[start..].iter().all(|e| match e.kind {
            EventKind::Write { loc, .. } if statics.is_private(loc) => {
                let before = last_before(loc, start).unwrap_or(program.location(loc).init);
                last_before(loc, events.len()) == Some(before)
            }
            _ => true,
        })
    }

    /// Gives a requested read its value, emitting the read (and an RMW's write); returns the
    /// path index of the read, and that of the write when one was emitted.
    pub fn resolve_read(&mut self, value: Value) -> (usize, Option<usize>) {
        let req = match std::mem::replace(&mut self.status, Status::Ready) {
            Status::Reads(r) => r,
            other => unreachable!("resolve_read on a thread that does not read: {other:?}"),
        };
        let r = self.push_read(&req, value);
        (r, self.complete_read(&req, r, value))
    }

    fn push_read(&mut self, req: &ReadRequest, value: Value) -> usize {
        self.push(
            req.instr,
            EventKind::Read {
                loc: req.loc,
                value,
                order: req.order,
                scope: req.scope,
                reduction: req.reduction,
            },
            &req.addr_deps,
        ) as usize
    }

    /// What a read at path index `r` that got `value` does next: set its register, and for an
    /// RMW emit the write (returned).
    fn complete_read(&mut self, req: &ReadRequest, r: usize, value: Value) -> Option<usize> {
        let r32 = r as u32;
        match req.what {
            ReadFor::Load { dst } => {
                self.set(dst, req.ty.wrap(value), vec![r32]);
                None
            }
            ReadFor::Rmw { dst, kind } => {
                let written = self.m.rmw_write(kind, req.ty, &req.addr_deps, value);
                let mut w = None;
                if let Some((v, deps)) = written {
                    let e = self.push(
                        req.instr,
                        EventKind::Write {
                            loc: req.loc,
                            value: v,
                            order: req.order,
                            scope: req.scope,
                        },
                        &deps,
                    );
                    self.trace.rmw.push((r32, e));
                    w = Some(e as usize);
                }
                if let Some(d) = dst {
                    self.set(d, req.ty.wrap(value), vec![r32]);
                }
                w
            }
        }
    }

    /// Turns the requested read into a hole: it reads from a write not yet in the graph. A load
    /// lets the thread run on (when it may); an RMW's write needs the value, so it waits.
    pub fn make_hole(&mut self) -> usize {
        let req = match std::mem::replace(&mut self.status, Status::Ready) {
            Status::Reads(r) => r,
            other => unreachable!("make_hole on a thread that does not read: {other:?}"),
        };
        let r = self.push_read(&req, 0);
        let run_on = match req.what {
            ReadFor::Load { dst } => {
                self.m.set_deps(dst, r as u32);
                self.unknown[dst.0 as usize] = true;
                self.run_ahead
            }
            ReadFor::Rmw { dst, .. } => {
                if let Some(d) = dst {
                    self.unknown[d.0 as usize] = true;
                }
                false
            }
        };
        self.holes.push((r, req));
        if !run_on {
            self.status = Status::Suspended;
        }
        r
    }

    /// Fills the hole at path index `r` with `value`; returns the writes that readers may now
    /// read from (an RMW's write, stores whose value is now known). A thread that ran past the hole is replayed with the value: nothing it did
    /// after the hole depended on it, so the replay emits the same events, and registers
    /// computed from the hole get their values.
    pub fn fill_hole(
        &mut self,
        program: &Program,
        thread: &Thread,
        statics: &ThreadStatics,
        r: usize,
        value: Value,
    ) -> Vec<usize> {
        let k = self
            .holes
            .iter()
            .position(|h| h.0 == r)
            .expect("a hole of this thread");
        let (_, req) = self.holes.remove(k);
        if let EventKind::Read { value: v, .. } = &mut self.trace.events[r].kind {
            *v = value;
        }
        if r + 1 == self.trace.events.len() && self.pc == req.instr + 1 {
            // Nothing ran after the hole: go on from it.
            self.status = Status::Ready;
            return self.complete_read(&req, r, value).into_iter().collect();
        }
        let before = std::mem::take(&mut self.value_holes);
        *self = self.replayed(program, thread, statics, &before, self.trace.events.len());
        before
            .into_iter()
            .filter(|w| !self.value_holes.contains(w))
            .collect()
    }

    /// The thread cut back to its first `len` events: re-run from its start, reading the
    /// values its path recorded. The revisiting search deletes the events after a read it
    /// gives another write; `len` never splits an RMW's read from its write.
    pub fn truncated(
        &self,
        program: &Program,
        thread: &Thread,
        statics: &ThreadStatics,
        len: usize,
    ) -> ThreadRun {
        debug_assert!(
            self.holes.is_empty(),
            "the revisiting search makes no holes"
        );
        self.replayed(program, thread, statics, &[], len)
    }

    /// The thread re-run from its start, reading the values its path recorded (holes stay
    /// holes), up to `len` events of its path.
    fn replayed(
        &self,
        program: &Program,
        thread: &Thread,
        statics: &ThreadStatics,
        value_holes: &[usize],
        len: usize,
    ) -> ThreadRun {
        let mut t = ThreadRun::new(program, thread, self.run_ahead);
        let recorded = &self.trace.events[..len];
        while t.trace.events.len() < recorded.len() {
            let at = t.trace.events.len();
            match t.step(program, thread, statics) {
                Step::NeedsValue => {
                    if self.holes.iter().any(|h| h.0 == at) {
                        t.make_hole();
                    } else {
                        let v = recorded[at].kind.value().expect("a read has a value");
                        t.resolve_read(v);
                    }
                }
                Step::Waits => {
                    let result = match recorded.get(at + 1).map(|e| e.kind) {
                        Some(EventKind::Wait { red, received, .. }) => {
                            red.map(|r| (r.1, 0)).or(received)
                        }
                        // The recorded path stops at the arrival: it still waits.
                        _ => break,
                    };
                    t.pass_barrier(result);
                }
                Step::Converges => match recorded[at].kind {
                    EventKind::Arrive {
                        pred: Some(mask), ..
                    } => t.converge(mask as u32),
                    _ => unreachable!("a recorded convergence"),
                },
                Step::Wrote(_) | Step::Other => {}
                Step::Stopped | Step::Suspended => break,
            }
        }
        debug_assert!(
            t.trace.events.len() == recorded.len()
                && t.trace
                    .events
                    .iter()
                    .zip(recorded)
                    .enumerate()
                    .all(|(i, (a, b))| {
                        a.kind == b.kind
                            || (value_holes.contains(&i) && a.kind.loc() == b.kind.loc())
                    }),
            "a replay past a hole emits the same events"
        );
        t
    }

    /// A CTA barrier's id and thread count as this thread gives them, checked against the
    /// ISA (`barrier{.cta}`): ids 0..15, a count that is not zero, and one for `arrive`.
    fn barrier_operands(
        &self,
        id: Operand,
        count: Option<Operand>,
        kind: BarrierKind,
    ) -> Result<(u32, Option<u32>), String> {
        let id = self.operand(id);
        if !(0..Value::from(scopecheck_ir::BARRIER_IDS)).contains(&id) {
            return Err(format!(
                "barrier {id} does not exist: a CTA has barriers 0 to {}",
                scopecheck_ir::BARRIER_IDS - 1
            ));
        }
        let count = count.map(|c| self.operand(c));
        match count {
            Some(c) if c <= 0 || c > Value::from(u32::MAX) => Err(format!(
                "a barrier's thread count must be positive, and {c} is not"
            )),
            None if kind == BarrierKind::Arrive => Err("`bar.arrive` needs a thread count".into()),
            _ => Ok((id as u32, count.map(|c| c as u32))),
        }
    }

    /// The arrivals this thread made at `barrier` so far.
    fn arrivals_at(&self, barrier: BarrierName) -> u32 {
        crate::trace::arrivals_at(&self.trace.events, barrier) as u32
    }

    /// Lets a waiting thread through its barrier, with what the round gives it: the reduction
    /// of a `bar.red`, or a warp collective's values for its two destinations.
    pub fn pass_barrier(&mut self, result: Option<(Value, Value)>) {
        let Status::Waiting(w) = std::mem::replace(&mut self.status, Status::Ready) else {
            unreachable!("pass_barrier on a thread that does not wait");
        };
        let red = w.red.map(|(op, dst)| {
            let v = result.expect("a bar.red round has a reduction").0;
            self.set(dst, v, vec![]);
            (op, v)
        });
        let received = w.warp.map(|ww| {
            let (d, p) = result.expect("a warp collective's round has its values");
            if let Some(r) = ww.dst {
                self.set(r, d, vec![]);
            }
            if let Some(r) = ww.pred_dst {
                self.set(r, p, vec![]);
            }
            (d, p)
        });
        self.push(
            w.instr,
            EventKind::Wait {
                barrier: w.barrier,
                red,
                received,
            },
            &[],
        );
    }

    /// Gives `__activemask()` its convergence: the lanes of `mask` run it together with this
    /// thread. The arrival records the choice, for replays and for the lanes that must agree.
    pub fn converge(&mut self, mask: u32) {
        let Status::Converges { instr, dst } = std::mem::replace(&mut self.status, Status::Ready)
        else {
            unreachable!("converge on a thread that does not converge");
        };
        self.push(
            instr,
            EventKind::Arrive {
                barrier: BarrierName::Warp {
                    mask,
                    op: WarpKind::ActiveMask,
                },
                count: None,
                pred: Some(Value::from(mask)),
            },
            &[],
        );
        if let Some(r) = dst {
            self.set(r, Value::from(mask), vec![]);
        }
    }

    /// Stops a waiting thread whose round makes its collective undefined (a fault of the test).
    pub fn fault_at_barrier(&mut self, message: String) {
        if let Status::Waiting(w) = &self.status {
            let instr = w.instr;
            self.trace.end = PathEnd::Fault { instr, message };
            self.status = Status::Stopped;
        }
    }

    /// Ends the path with a fault at the instruction of its last event.
    pub fn fault_at_last_event(&mut self, message: String) {
        let instr = self.trace.events.last().map_or(self.pc, |e| e.instr);
        self.trace.end = PathEnd::Fault { instr, message };
        self.status = Status::Stopped;
    }

    /// Marks the thread as never scheduled again from here (a starved thread).
    pub fn starve(&mut self) {
        self.trace.end = PathEnd::Starved;
        self.status = Status::Stopped;
    }

    /// Ends the path of a thread that waits forever at a barrier.
    pub fn stuck_at_barrier(&mut self) {
        if let Status::Waiting(w) = &self.status {
            self.trace.end = PathEnd::AtBarrier { instr: w.instr };
        }
    }
}
