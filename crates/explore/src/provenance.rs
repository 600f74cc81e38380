//! Provenance: which allocation a register's value was derived from.
//!
//! C and CUDA leave pointer arithmetic undefined when its result leaves the allocation the
//! pointer points into (C17 6.5.6p8); scopecheck's memory layout (allocation `k` at
//! `(k + 1) * 2^32`, `Program::address_of`) is its own, so no program can rely on reaching one
//! allocation from another by arithmetic. Each register therefore carries the allocation its
//! value was derived from, as a window number (`k + 1`, the address's bits 32 and up; 0 for
//! none), and an access through a pointer register whose target lies outside that allocation
//! is a fault at its line (`machine.rs`), not an access to whatever lies there.
//!
//! The window is a function of the operands' windows alone, never of a value read, so it can
//! be computed without running the thread: from its start (`access_locations`, for the static
//! facts) or from where it stands (`gate.rs`). A value written into a register from a constant
//! or a parameter takes the window its value lies in (if that names an allocation); a value
//! read from memory or received at a barrier or collective has none (it is then resolved by
//! its value, as any integer); `mov` keeps it; `add`, `and` and `or` keep the one window of
//! their operands (a pointer plus an offset, an alignment mask, the PTX lowering's width wraps)
//! and give none when both or neither have one; `sub` keeps the first operand's window when the
//! second has none (a pointer minus an offset; a difference of two pointers is an integer);
//! every other operation gives none.

use scopecheck_ir::{Address, BinOp, InstrKind, LocId, Operand, Program, Thread, Value};

/// The number of allocations of `program` (arrays, and locations in no array).
pub(crate) fn allocation_count(program: &Program) -> u32 {
    let in_arrays: u32 = program.arrays.iter().map(|a| a.len.saturating_sub(1)).sum();
    (program.locations.len() as u32).saturating_sub(in_arrays)
}

/// The window of the allocation value `v` lies in as an address, or 0 when it names none of
/// the `allocations`.
pub(crate) fn window_of(allocations: u32, v: Value) -> u32 {
    let w = (v as u64) / scopecheck_ir::ALLOCATION_STRIDE;
    if (1..=u64::from(allocations)).contains(&w) {
        w as u32
    } else {
        0
    }
}

/// The window of `a op b` from the windows of `a` and `b` (module documentation): an offset
/// added to, masked into or subtracted from a pointer keeps its allocation; nothing else has
/// one.
pub(crate) fn combine_windows(op: BinOp, a: u32, b: u32) -> u32 {
    match op {
        BinOp::Add | BinOp::And | BinOp::Or if a == 0 || b == 0 => a.max(b),
        BinOp::Sub if b == 0 => a,
        _ => 0,
    }
}

/// The locations of the allocation with window `w` (empty when it names none).
pub(crate) fn allocation_locations(program: &Program, w: u32) -> Vec<LocId> {
    let mut number = 0;
    let mut l = 0;
    while (l as usize) < program.locations.len() {
        let (first, len) = program.allocation_of(LocId(l));
        number += 1;
        if number == w {
            return (first.0..first.0 + len).map(LocId).collect();
        }
        l = first.0 + len;
    }
    vec![]
}

/// A window in a static analysis: one the interpreter computes on every path, or `TOP` where
/// paths disagree.
pub(crate) const TOP: u32 = u32::MAX;

/// The join of two windows of the static analyses.
pub(crate) fn join_windows(a: u32, b: u32) -> u32 {
    if a == b {
        a
    } else {
        TOP
    }
}

/// The window of `a op b` in the static analyses: the interpreter's rule where both windows
/// are known; where one is not (`TOP`), either of its values might be the one.
pub(crate) fn binary_window(op: BinOp, a: u32, b: u32) -> u32 {
    if a != TOP && b != TOP {
        return combine_windows(op, a, b);
    }
    // The rule only ever keeps an operand's window or gives none: with an unknown one it gives
    // that one (unknown) or none, unless it gives none whatever the unknown one is (1 stands
    // for every window that is not 0).
    let any = |x: u32| if x == TOP { vec![0, 1] } else { vec![x] };
    let none = any(a)
        .iter()
        .all(|&x| any(b).iter().all(|&y| combine_windows(op, x, y) == 0));
    if none {
        0
    } else {
        TOP
    }
}

/// The static window of an operand, given the windows of the registers.
pub(crate) fn operand_window(windows: &[u32], allocations: u32, o: Operand) -> u32 {
    match o {
        Operand::Imm(v) => window_of(allocations, v),
        Operand::Reg(r) => windows[r.0 as usize],
    }
}

/// The windows of the registers an instruction writes, given those before it.
pub(crate) fn step_windows(kind: &InstrKind, windows: &mut [u32], allocations: u32) {
    match *kind {
        InstrKind::Mov { dst, src } => {
            windows[dst.0 as usize] = operand_window(windows, allocations, src);
        }
        InstrKind::Binary { dst, op, a, b, .. } => {
            windows[dst.0 as usize] = binary_window(
                op,
                operand_window(windows, allocations, a),
                operand_window(windows, allocations, b),
            );
        }
        // Values read, received or computed by a float unit: derived from no allocation.
        _ => {
            for d in kind.written_registers() {
                windows[d.0 as usize] = 0;
            }
        }
    }
}

/// The locations an access through `addr` may touch when its register holds window `w`
/// (`TOP`: not known): the allocation's, for a pointer; otherwise what the address names.
pub(crate) fn locations_in(program: &Program, addr: &Address, w: u32) -> Vec<LocId> {
    match *addr {
        Address::Ptr { .. } if w != 0 && w != TOP => allocation_locations(program, w),
        _ => program.possible_locations(addr),
    }
}

/// Per instruction of `thread`, the locations its access may touch (empty for an instruction
/// that accesses nothing), with the windows of its pointer registers computed from the
/// thread's start along every path (a forward analysis over both ways of every branch).
pub(crate) fn access_locations(program: &Program, thread: &Thread) -> Vec<Vec<LocId>> {
    let code = &thread.code;
    let n = code.len();
    let allocations = allocation_count(program);
    let mut start = vec![0; thread.registers.len()];
    for (r, v) in &thread.init_regs {
        start[r.0 as usize] = window_of(allocations, *v);
    }
    let mut at: Vec<Option<Vec<u32>>> = vec![None; n + 1];
    at[0] = Some(start);
    let mut work = vec![0];
    while let Some(pc) = work.pop() {
        if pc >= n {
            continue;
        }
        let mut w = at[pc].clone().expect("a reached instruction has windows");
        step_windows(&code[pc].kind, &mut w, allocations);
        for s in code[pc].successors(pc) {
            let s = s.min(n);
            let changed = match &mut at[s] {
                Some(old) => {
                    let mut changed = false;
                    for (a, &b) in old.iter_mut().zip(&w) {
                        let j = join_windows(*a, b);
                        changed |= j != *a;
                        *a = j;
                    }
                    changed
                }
                slot @ None => {
                    *slot = Some(w.clone());
                    true
                }
            };
            if changed {
                work.push(s);
            }
        }
    }
    code.iter()
        .zip(&at)
        .map(|(i, w)| match i.kind.address() {
            None => vec![],
            Some(addr) => {
                let win = match (addr.reg(), w) {
                    (Some(r), Some(w)) => w[r.0 as usize],
                    // Unreachable from the start: nothing to say, so everything.
                    _ => TOP,
                };
                locations_in(program, addr, win)
            }
        })
        .collect()
}
