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
//!
//! Each register also carries its allocation window (`provenance.rs`), computed by the
//! interpreter's own rule, which depends on the operands' windows alone and so is exact on each
//! path walked: an access through a pointer that leaves its window faults there as it does in
//! the interpreter, and one through a pointer of some value touches only its allocation.

use std::collections::HashSet;

use scopecheck_ir::{Address, BranchCond, InstrKind, IntType, LocId, Operand, Program, Thread};

use crate::provenance::{allocation_count, allocation_locations, step_windows, window_of};

/// Instructions the walk may execute, over all its paths, before the static facts answer
/// instead (a grid-stride loop over 64 elements runs a few hundred).
pub const STEP_LIMIT: usize = 20_000;

/// A register: a known value, or some value (`None`) a read or a barrier gives.
type Abs = Option<scopecheck_ir::Value>;

/// What an access reaches, as the walk resolves its address.
enum Reached {
    /// This location.
    At(LocId),
    /// One of these, the pointer's allocation's locations of the access's width (its value is
    /// some value).
    Within(Vec<LocId>),
    /// Any location the address may name (`Program::possible_locations`): an index or a
    /// pointer of some value derived from no allocation.
    Anywhere,
}

/// The registers of thread `thread` where it stands, as the walk starts from them: values
/// (those `unknown` marks, or `fresh` names, are some value) and allocation windows.
pub struct Start<'r> {
    pub values: &'r [scopecheck_ir::Value],
    pub windows: &'r [u32],
    pub unknown: &'r [bool],
    pub fresh: &'r [scopecheck_ir::RegId],
}

/// The locations a thread may still read and write (each sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accesses {
    pub reads: Vec<LocId>,
    pub writes: Vec<LocId>,
}

/// The locations `thread` may still write from instruction `pc` with registers `start`;
/// `None` when the walk would take more than [`STEP_LIMIT`] steps.
pub fn writes_from(
    program: &Program,
    thread: &Thread,
    pc: usize,
    start: Start,
) -> Option<Vec<LocId>> {
    accesses_from(program, thread, pc, start).map(|a| a.writes)
}

/// The locations `thread` may still read and write from instruction `pc` (as
/// [`writes_from`]).
pub fn accesses_from(
    program: &Program,
    thread: &Thread,
    pc: usize,
    start: Start,
) -> Option<Accesses> {
    let mut values: Vec<Abs> = start
        .values
        .iter()
        .zip(start.unknown)
        .map(|(&v, &u)| (!u).then_some(v))
        .collect();
    let mut windows = start.windows.to_vec();
    for r in start.fresh {
        values[r.0 as usize] = None;
        windows[r.0 as usize] = 0;
    }
    let mut a = Accesses::default();
    // Accesses through a pointer of some value: every location may be read or written.
    let (mut any_read, mut any_write) = (false, false);
    let finished = walk(program, thread, pc, (values, windows), |instr, reached| {
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
            match (on, &reached, kind.address()) {
                (false, _, _) => {}
                (true, Reached::At(l), _) => v.push(*l),
                (true, Reached::Within(ls), _) => v.extend_from_slice(ls),
                (true, Reached::Anywhere, Some(addr @ Address::Loc { .. })) => {
                    v.extend(program.possible_locations(addr))
                }
                (true, Reached::Anywhere, _) => *any = true,
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
    let (regs, windows, _) = run.registers();
    let start: Vec<Abs> = regs.iter().map(|&v| Some(v)).collect();
    let mut out: Vec<Vec<LocId>> = vec![vec![]; thread.code.len()];
    let mut some = vec![false; thread.code.len()];
    let finished = walk(
        program,
        thread,
        0,
        (start, windows.to_vec()),
        |instr, reached| match reached {
            Reached::At(l) => out[instr].push(l),
            Reached::Within(ls) => out[instr].extend(ls),
            Reached::Anywhere => some[instr] = true,
        },
    );
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

/// Runs `thread` forward from instruction `pc` with registers `start` (values and windows)
/// over every path, calling `access(instr, reached)` at each access it makes; false when it
/// would take more than [`STEP_LIMIT`] steps.
fn walk(
    program: &Program,
    thread: &Thread,
    pc: usize,
    start: (Vec<Abs>, Vec<u32>),
    mut access: impl FnMut(usize, Reached),
) -> bool {
    let code = &thread.code;
    let rules = program.arithmetic();
    let allocations = allocation_count(program);
    // States met at branches: a path that comes back to one has nothing new to do.
    let mut seen: HashSet<(usize, Vec<Abs>, Vec<u32>)> = HashSet::new();
    let mut work = vec![(pc, start.0, start.1)];
    let mut steps = 0usize;
    while let Some((mut p, mut at, mut win)) = work.pop() {
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
            if let (Some(addr), Some(ty)) = (instr.kind.address(), access_type(&instr.kind)) {
                match locations(program, (&at, &win), allocations, addr, ty) {
                    Some(reached) => access(here, reached),
                    // A fault: the thread stops there.
                    None => break,
                }
            }
            // Windows from the operands' windows before the instruction (the interpreter's
            // rule, `provenance.rs`).
            step_windows(&instr.kind, &mut win, allocations);
            match &instr.kind {
                InstrKind::Load { .. }
                | InstrKind::Store { .. }
                | InstrKind::Rmw { .. }
                | InstrKind::Fma { .. }
                | InstrKind::Barrier { .. }
                | InstrKind::Warp { .. } => {
                    // What a read, a float unit, a barrier or a collective gives is some value.
                    for d in instr.kind.written_registers() {
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
                InstrKind::Fence { .. } => {}
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
                            let state = (*target, at.clone(), win.clone());
                            if seen.insert(state.clone()) {
                                work.push(state);
                            }
                        }
                    }
                    if !seen.insert((p, at.clone(), win.clone())) {
                        break;
                    }
                }
            }
        }
    }
    true
}

/// The width an access instruction accesses memory with.
fn access_type(kind: &InstrKind) -> Option<IntType> {
    match *kind {
        InstrKind::Load { ty, .. } | InstrKind::Store { ty, .. } | InstrKind::Rmw { ty, .. } => {
            Some(ty)
        }
        _ => None,
    }
}

/// What an access of type `ty` through `addr` reaches, as the interpreter resolves it
/// (`Machine::address`, with provenance): `None` where it faults.
fn locations(
    program: &Program,
    (at, win): (&[Abs], &[u32]),
    allocations: u32,
    addr: &Address,
    ty: IntType,
) -> Option<Reached> {
    let fits = |l: LocId| program.location(l).ty.bits == ty.bits;
    let loc = match *addr {
        Address::Loc { loc, index: None } => loc,
        Address::Loc {
            loc,
            index: Some(r),
        } => match at[r.0 as usize] {
            Some(i) => program.element(loc, i).ok()?,
            None => return Some(Reached::Anywhere),
        },
        Address::Ptr { reg, disp } => {
            let w = win[reg.0 as usize];
            match at[reg.0 as usize] {
                Some(v) => {
                    let target = v.wrapping_add(disp);
                    if w != 0 && window_of(allocations, target) != w {
                        return None;
                    }
                    program.resolve(target, ty).ok()?
                }
                None if w != 0 => {
                    let within = allocation_locations(program, w);
                    return Some(Reached::Within(
                        within.into_iter().filter(|&l| fits(l)).collect(),
                    ));
                }
                None => return Some(Reached::Anywhere),
            }
        }
    };
    fits(loc).then_some(Reached::At(loc))
}
