//! Loops, and which of them are *await loops* that can be explored by their exiting iteration
//! alone.
//!
//! An await loop spins until it reads the values it waits for: its failing iterations read
//! memory, compute in registers and branch back, and do nothing another thread can see. Take any
//! terminating execution and delete the events of the loop's failing iterations: every relation
//! a model builds from the remaining events is a subset of the old one (nothing reads from a
//! deleted read or fence), so the smaller execution is consistent too, and since each iteration
//! starts from the same registers, the exiting iteration and everything after it behave the same.
//! A deleted write-back of an idempotent RMW may have been read by another thread; that reader
//! then reads the write-back's own source, the same value: since every write to the location is
//! morally strong with the RMW, Atomicity put the write-back immediately after its source in
//! coherence, so the reader's from-reads successors are the same writes as before.
//! So the final states of the program are those of its executions in which every await loop
//! exits in its first iteration; the executions where it never exits are the hangs, found by
//! the liveness check. Exploration of such a loop does not grow with the unroll bound.
//!
//! The conditions, checked here on the code and, for each iteration, on the path:
//! - the loop is a range `head..=branch` whose backward branches all go to `head` (one closes
//!   the body; a test-and-test-and-set loop has a second after the test), with no branch from
//!   outside into its middle, and only exits (forward branches past the loop) as other branches;
//! - the body holds no store and no barrier; an RMW must be an *idempotent await* (it writes back
//!   what it read: `add 0`, `or 0`, `and -1`, `xor 0`, `sub 0`, a CAS whose failure is the failing
//!   case) and every other write to its location must be morally strong with it, so that the
//!   write-back adds nothing another thread could observe as new;
//! - each register the body reads before writing it is not written in the body, and no register
//!   is written after the first exit, so every iteration starts from, and the exiting one leaves,
//!   the same registers;
//! - on the path, a failing iteration wrote nothing but write-backs of the values it read.

use scopecheck_ir::{
    InstrKind, IntType, Operand, Order, Placement, Program, RegId, RmwKind, RmwOp, Scope, Thread,
};

/// A loop: a head and the backward branches to it, and what the explorer may do with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopInfo {
    /// First instruction of the body (the branches' target).
    pub head: usize,
    /// The backward branches to `head`, in order; the last one closes the body. A
    /// test-and-test-and-set loop has two: one after the test, one after the CAS.
    pub branches: Vec<usize>,
    /// `Ok` when the loop is an await loop; otherwise why it must be unrolled.
    pub reducible: Result<(), String>,
}

/// Every loop of `thread`, one per loop head.
pub fn thread_loops(program: &Program, thread: &Thread) -> Vec<LoopInfo> {
    let code = &thread.code;
    let mut loops: Vec<LoopInfo> = Vec::new();
    for (b, i) in code.iter().enumerate() {
        let InstrKind::Branch { target, .. } = i.kind else {
            continue;
        };
        if target > b {
            continue;
        }
        match loops.iter_mut().find(|l| l.head == target) {
            Some(l) => l.branches.push(b),
            None => loops.push(LoopInfo {
                head: target,
                branches: vec![b],
                reducible: Ok(()),
            }),
        }
    }
    for l in &mut loops {
        let last = *l.branches.last().expect("a loop has a backward branch");
        l.reducible = await_loop(program, thread, l.head, last);
    }
    loops
}

pub(crate) fn reads_of(kind: &InstrKind) -> Vec<RegId> {
    kind.read_registers()
}

/// The registers an instruction writes.
pub(crate) fn writes_of(kind: &InstrKind) -> impl Iterator<Item = RegId> {
    kind.written_registers()
}

/// Whether an RMW can write back the value it read: always (`add 0`, `or 0`, ...), or in the
/// iterations where it fails (CAS) or swaps in the same value (exchange), which the path check
/// confirms per iteration.
pub fn is_idempotent_rmw(kind: &RmwKind, ty: IntType) -> bool {
    match *kind {
        // Adding +0.0 turns -0.0 into +0.0 and `atom.add.f32` flushes subnormals: a float RMW
        // may write a new value whatever its operand, but for an exchange.
        RmwKind::Op(op, _) if ty.float => op == RmwOp::Exch,
        RmwKind::Op(op, Operand::Imm(v)) => match op {
            RmwOp::Add | RmwOp::Sub | RmwOp::Or | RmwOp::Xor => v == 0,
            RmwOp::And => v == -1,
            RmwOp::Max => v == i64::MIN,
            RmwOp::Min => v == i64::MAX,
            // An exchange writes back what it read exactly when it swaps in the value already
            // there (a test-and-set spin); the path check decides per iteration.
            RmwOp::Exch => true,
            RmwOp::Inc | RmwOp::Dec => false,
        },
        RmwKind::Op(..) => false,
        // A CAS writes only when it succeeds; the path check rejects an iteration whose CAS
        // succeeded with a new value.
        RmwKind::Cas { .. } => true,
    }
}

fn scope_of_write(kind: &InstrKind) -> Option<(Order, Scope)> {
    match *kind {
        InstrKind::Store { order, scope, .. } | InstrKind::Rmw { order, scope, .. } => {
            Some((order, scope))
        }
        _ => None,
    }
}

/// Every write to `addr`'s location in the program is strong and mutually in scope with an RMW
/// of `scope` by a thread at `at`.
pub(crate) fn writes_morally_strong_with(
    program: &Program,
    me: &Thread,
    loc: scopecheck_ir::LocId,
    scope: Scope,
) -> bool {
    let at: &Placement = &me.placement;
    let me_id = program.threads.iter().position(|t| std::ptr::eq(t, me));
    program.threads.iter().enumerate().all(|(ti, t)| {
        let same_thread = std::ptr::eq(t, me);
        // A thread that finishes before this one starts, or starts after it finishes (launch
        // order), never writes while the loop spins: its writes need not be morally strong.
        if me_id.is_some_and(|m| launch_ordered(program, m, ti)) {
            return true;
        }
        t.code.iter().all(|i| {
            let addr = match &i.kind {
                InstrKind::Store { addr, .. } | InstrKind::Rmw { addr, .. } => addr,
                _ => return true,
            };
            if same_thread || !program.possible_locations(addr).contains(&loc) {
                return true;
            }
            match scope_of_write(&i.kind) {
                Some((order, s)) => {
                    order.is_strong()
                        && at.scope_includes(scope, &t.placement)
                        && t.placement.scope_includes(s, at)
                }
                None => true,
            }
        })
    })
}

/// Whether threads `a` and `b` never run at the same time: one starts only after the other
/// finished (`Thread::after`, followed transitively).
fn launch_ordered(program: &Program, a: usize, b: usize) -> bool {
    let reaches = |from: usize, to: usize| {
        let mut seen = vec![false; program.threads.len()];
        let mut stack = vec![from];
        while let Some(t) = stack.pop() {
            for w in &program.threads[t].after {
                let w = w.0 as usize;
                if w == to {
                    return true;
                }
                if !std::mem::replace(&mut seen[w], true) {
                    stack.push(w);
                }
            }
        }
        false
    };
    a != b && (reaches(a, b) || reaches(b, a))
}

fn await_loop(
    program: &Program,
    thread: &Thread,
    head: usize,
    branch: usize,
) -> Result<(), String> {
    let code = &thread.code;
    for (pc, i) in code.iter().enumerate() {
        if let InstrKind::Branch { target, .. } = i.kind {
            let inside = (head..=branch).contains(&pc);
            if inside && target != head && target <= branch {
                return Err("the body branches inside the loop".into());
            }
            if !inside && target > head && target <= branch {
                return Err("a branch enters the loop's middle".into());
            }
        }
    }
    let mut written: Vec<RegId> = Vec::new();
    let mut exited = false;
    for i in &code[head..=branch] {
        match &i.kind {
            InstrKind::Store { .. } => return Err("the body stores".into()),
            InstrKind::Barrier { .. } => return Err("the body waits at a barrier".into()),
            InstrKind::Warp { .. } => {
                return Err("the body meets other lanes at a warp collective".into())
            }
            InstrKind::Rmw {
                kind,
                addr,
                scope,
                ty,
                ..
            } => {
                if !is_idempotent_rmw(kind, *ty) {
                    return Err("the body's RMW writes a new value".into());
                }
                if !program
                    .possible_locations(addr)
                    .iter()
                    .all(|&l| writes_morally_strong_with(program, thread, l, *scope))
                {
                    return Err("the body's RMW is not morally strong with every other write to its location".into());
                }
            }
            InstrKind::Load { .. }
            | InstrKind::Fence { .. }
            | InstrKind::Mov { .. }
            | InstrKind::Binary { .. }
            | InstrKind::Fma { .. }
            | InstrKind::Branch { .. } => {}
        }
        for r in reads_of(&i.kind) {
            let later_write = code[head..=branch]
                .iter()
                .any(|j| writes_of(&j.kind).any(|w| w == r));
            if later_write && !written.contains(&r) {
                return Err(format!(
                    "register {} carries a value from one iteration to the next",
                    thread.registers[r.0 as usize]
                ));
            }
        }
        for w in writes_of(&i.kind) {
            if exited {
                return Err("a register is written after the loop's exit".into());
            }
            written.push(w);
        }
        if matches!(i.kind, InstrKind::Branch { target, .. } if target > branch) {
            exited = true;
        }
    }
    Ok(())
}
