//! Which locations a thread may still write, from where it stands: the hole search asks this
//! before a read may wait for a write to come, and when it looks for holes no thread can fill
//! (docs/explore.md, "Threads that share nothing").
//!
//! The static facts (`ThreadStatics::may_write_from`) hold whatever the registers, so an
//! access through a pointer may write every location, and every read of every thread could
//! wait for every other thread: a launch whose threads never share an element then branches
//! at each of its reads, and pays for it until the last thread ends. Here the thread is run
//! forward from its registers instead: what it holds is known except the values its reads
//! (and holes, barrier reductions, warp collectives) will give, which are *some* value; a
//! branch on known values goes one way, one on some value both ways. Every run of the thread
//! from this state, whatever its reads return, follows one of the paths walked, so the writes
//! listed are all it can still make. The walk is bounded ([`STEP_LIMIT`] instructions); past
//! it the static facts answer.

use std::collections::HashSet;

use scopecheck_ir::{Address, BranchCond, InstrKind, IntType, LocId, Operand, Program, Thread};

/// Instructions the walk may execute, over all its paths, before the static facts answer
/// instead (a grid-stride loop over 64 elements runs a few hundred).
pub const STEP_LIMIT: usize = 20_000;

/// A register: a known value, or some value (`None`) a read or a barrier gives.
type Abs = Option<scopecheck_ir::Value>;

/// The locations a thread may still read and write (each sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accesses {
    pub reads: Vec<LocId>,
    pub writes: Vec<LocId>,
}

/// The locations `thread` may still write from instruction `pc` with registers `regs`, of
/// which those `unknown` marks (or `fresh` names) hold some value; `None` when the walk
/// would take more than [`STEP_LIMIT`] steps.
pub fn writes_from(
    program: &Program,
    thread: &Thread,
    pc: usize,
    regs: &[scopecheck_ir::Value],
    unknown: &[bool],
    fresh: &[scopecheck_ir::RegId],
) -> Option<Vec<LocId>> {
    accesses_from(program, thread, pc, regs, unknown, fresh).map(|a| a.writes)
}

/// The locations `thread` may still read and write from instruction `pc` (as
/// [`writes_from`]).
pub fn accesses_from(
    program: &Program,
    thread: &Thread,
    pc: usize,
    regs: &[scopecheck_ir::Value],
    unknown: &[bool],
    fresh: &[scopecheck_ir::RegId],
) -> Option<Accesses> {
    let mut start: Vec<Abs> = regs
        .iter()
        .zip(unknown)
        .map(|(&v, &u)| (!u).then_some(v))
        .collect();
    for r in fresh {
        start[r.0 as usize] = None;
    }
    let mut a = Accesses::default();
    // Accesses through a pointer of some value: every location may be read or written.
    let (mut any_read, mut any_write) = (false, false);
    let finished = walk(program, thread, pc, start, |instr, loc| {
        let kind = &thread.code[instr].kind;
        let (reads, writes) = match kind {
            InstrKind::Load { .. } => (true, false),
            InstrKind::Store { .. } => (false, true),
            _ => (true, true),
        };
        for (on, v, any) in [
            (reads, &mut a.reads, &mut any_read),
            (writes, &mut a.writes, &mut any_write),
        ] {
            match (on, loc, kind.address()) {
                (false, _, _) => {}
                (true, Some(l), _) => v.push(l),
                (true, None, Some(addr @ Address::Loc { .. })) => {
                    v.extend(program.possible_locations(addr))
                }
                (true, None, _) => *any = true,
            }
        }
    });
    if !finished {
        return None;
    }
    let every = || (0..program.locations.len() as u32).map(LocId).collect();
    for (v, any) in [(&mut a.reads, any_read), (&mut a.writes, any_write)] {
        if any {
            *v = every();
        }
        v.sort_unstable();
        v.dedup();
    }
    Some(a)
}

/// Per instruction of `thread`, the locations it may access on any run from the thread's
/// start (each sorted); `None` when the walk would take more than [`STEP_LIMIT`] steps.
pub fn instruction_locations(program: &Program, thread: &Thread) -> Option<Vec<Vec<LocId>>> {
    let run = crate::interp::ThreadRun::new(program, thread, false);
    let (regs, _, _) = run.registers();
    let start: Vec<Abs> = regs.iter().map(|&v| Some(v)).collect();
    let mut out: Vec<Vec<LocId>> = vec![vec![]; thread.code.len()];
    let mut some = vec![false; thread.code.len()];
    let finished = walk(program, thread, 0, start, |instr, loc| match loc {
        Some(l) => out[instr].push(l),
        None => some[instr] = true,
    });
    if !finished {
        return None;
    }
    for (pc, v) in out.iter_mut().enumerate() {
        if some[pc] {
            if let Some(addr) = thread.code[pc].kind.address() {
                *v = program.possible_locations(addr);
            }
        }
        v.sort_unstable();
        v.dedup();
    }
    Some(out)
}

/// Runs `thread` forward from instruction `pc` with registers `start` over every path, calling
/// `access(instr, location)` at each access it makes (`None`: through an address of some
/// value); false when it would take more than [`STEP_LIMIT`] steps.
fn walk(
    program: &Program,
    thread: &Thread,
    pc: usize,
    start: Vec<Abs>,
    mut access: impl FnMut(usize, Option<LocId>),
) -> bool {
    let code = &thread.code;
    let rules = program.arithmetic();
    // States met at branches: a path that comes back to one has nothing new to do.
    let mut seen: HashSet<(usize, Vec<Abs>)> = HashSet::new();
    let mut work = vec![(pc, start)];
    let mut steps = 0usize;
    while let Some((mut p, mut at)) = work.pop() {
        loop {
            steps += 1;
            if steps > STEP_LIMIT {
                return false;
            }
            let Some(instr) = code.get(p) else { break };
            let operand = |at: &[Abs], o: Operand| match o {
                Operand::Imm(v) => Some(v),
                Operand::Reg(r) => at[r.0 as usize],
            };
            let here = p;
            p += 1;
            match &instr.kind {
                InstrKind::Load { dst, addr, ty, .. } => {
                    match locations(program, &at, addr, *ty) {
                        Some(Err(())) => break,
                        Some(Ok(l)) => access(here, Some(l)),
                        None => access(here, None),
                    }
                    at[dst.0 as usize] = None;
                }
                InstrKind::Store { addr, ty, .. } => match locations(program, &at, addr, *ty) {
                    Some(Err(())) => break,
                    Some(Ok(l)) => access(here, Some(l)),
                    None => access(here, None),
                },
                InstrKind::Rmw { dst, addr, ty, .. } => {
                    match locations(program, &at, addr, *ty) {
                        Some(Err(())) => break,
                        Some(Ok(l)) => access(here, Some(l)),
                        None => access(here, None),
                    }
                    if let Some(d) = dst {
                        at[d.0 as usize] = None;
                    }
                }
                InstrKind::Mov { dst, src } => at[dst.0 as usize] = operand(&at, *src),
                InstrKind::Binary { dst, op, ty, a, b } => {
                    at[dst.0 as usize] = match (operand(&at, *a), operand(&at, *b)) {
                        // An undefined operation faults: the thread stops there.
                        (Some(x), Some(y)) => match op.eval(*ty, rules, x, y) {
                            Ok(v) => Some(v),
                            Err(_) => break,
                        },
                        _ => None,
                    }
                }
                InstrKind::Fma { dst, .. } => at[dst.0 as usize] = None,
                InstrKind::Fence { .. } => {}
                kind @ (InstrKind::Barrier { .. } | InstrKind::Warp { .. }) => {
                    for d in kind.written_registers() {
                        at[d.0 as usize] = None;
                    }
                }
                InstrKind::Branch { cond, target } => {
                    let taken = match *cond {
                        BranchCond::Always => Some(true),
                        BranchCond::Eq(a, b) | BranchCond::Ne(a, b) => {
                            match (operand(&at, a), operand(&at, b)) {
                                (Some(x), Some(y)) => {
                                    Some((x == y) == matches!(cond, BranchCond::Eq(..)))
                                }
                                _ => None,
                            }
                        }
                    };
                    match taken {
                        Some(true) => p = *target,
                        Some(false) => {}
                        None => {
                            if seen.insert((*target, at.clone())) {
                                work.push((*target, at.clone()));
                            }
                        }
                    }
                    if !seen.insert((p, at.clone())) {
                        break;
                    }
                }
            }
        }
    }
    true
}

/// The location an access of type `ty` through `addr` touches, as the interpreter resolves
/// it (`Machine::address`): `Some(Err)` where it faults, `None` where the address is some
/// value. The interpreter also faults where a pointer left its allocation (provenance); the
/// walk does not track that and goes on, which only adds paths.
fn locations(
    program: &Program,
    at: &[Abs],
    addr: &Address,
    ty: IntType,
) -> Option<Result<LocId, ()>> {
    let loc = match *addr {
        Address::Loc { loc, index: None } => Ok(loc),
        Address::Loc {
            loc,
            index: Some(r),
        } => program.element(loc, at[r.0 as usize]?).map_err(|_| ()),
        Address::Ptr { reg, disp } => program
            .resolve(at[reg.0 as usize]?.wrapping_add(disp), ty)
            .map_err(|_| ()),
    };
    Some(loc.and_then(|l| {
        if program.location(l).ty.bits == ty.bits {
            Ok(l)
        } else {
            Err(())
        }
    }))
}
