//! What a thread may still do from where it stands, for the hole search's completeness gate
//! (docs/explore.md, "Completeness of the hole search").
//!
//! The static facts (`statics.rs`) hold from an instruction whatever the registers: an access
//! through a pointer register may then touch every location, and both ways of every branch are
//! open. At a dead end the thread's registers are known, except those computed from a hole, so
//! the gate asks this analysis before it gives up: a constant propagation from the thread's
//! registers (a register holds one known value, some value, or a value computed from a hole),
//! which follows only the way a branch on known values goes and resolves the addresses of
//! known pointers and indices. Every run of the thread from this state, whatever its later
//! reads return, is one of the paths it follows, so the writes it lists are all the thread
//! can still make.
//!
//! Each register also carries the allocation window its value was derived from
//! (`provenance.rs`), which the interpreter computes from the operands' windows alone. An access
//! through a pointer whose value is not known here (an offset read or received: `dst[base +
//! rank]` with `base` shuffled from a leader) then touches only the allocation of that window,
//! since anywhere else it faults.

use std::collections::hash_map::{Entry, HashMap};

use crate::provenance::{
    allocation_count, binary_window, locations_in, operand_window, window_of, TOP,
};

use scopecheck_ir::{
    Address, Arithmetic, BranchCond, InstrKind, IntType, LocId, Operand, Program, RmwKind, Thread,
};

/// What one register holds in the analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Abs {
    /// This value on every path that reaches the instruction.
    Known(scopecheck_ir::Value),
    /// Some value that does not depend on a hole.
    Any,
    /// A value computed from a hole (unknown until the hole is filled).
    Hole,
}

impl Abs {
    /// A value computed from a hole, or some value.
    fn hole_or_any(hole: bool) -> Abs {
        if hole {
            Abs::Hole
        } else {
            Abs::Any
        }
    }

    fn join(self, o: Abs) -> Abs {
        match (self, o) {
            (Abs::Hole, _) | (_, Abs::Hole) => Abs::Hole,
            (Abs::Known(a), Abs::Known(b)) if a == b => Abs::Known(a),
            _ => Abs::Any,
        }
    }
}

/// The allocation window a register holds in the analysis: the interpreter's
/// (`provenance.rs`; 0 for none) on every path that reaches the instruction, or
/// `provenance::TOP` where paths disagree.
type Window = u32;

/// The analysis state at one instruction: the registers and their windows, and whether the
/// path got there through a branch on a hole's value (everything after depends on the hole).
#[derive(Clone, Debug, PartialEq, Eq)]
struct At {
    regs: Vec<Abs>,
    windows: Vec<Window>,
    ctrl_hole: bool,
}

impl At {
    /// The state where the thread stands: its registers' values, but those computed from a
    /// hole; what a round gives is some value, derived from no allocation.
    fn start(regs: &Registers) -> At {
        let mut start = At {
            regs: regs
                .values
                .iter()
                .zip(regs.unknown)
                .map(|(&v, &u)| if u { Abs::Hole } else { Abs::Known(v) })
                .collect(),
            windows: regs.windows.to_vec(),
            ctrl_hole: false,
        };
        for r in regs.fresh {
            if start.regs[r.0 as usize] != Abs::Hole {
                start.set(*r, Abs::Any, 0);
            }
        }
        start
    }

    /// Where a branch at `p` to `target` on condition `cond` may go: the way it goes when its
    /// operands are known, else both ways (and past a branch on a hole's value everything
    /// depends on the hole).
    fn branch(&mut self, p: usize, cond: BranchCond, target: usize) -> Vec<usize> {
        match cond {
            BranchCond::Always => vec![target],
            BranchCond::Eq(a, b) | BranchCond::Ne(a, b) => match (self.operand(a), self.operand(b))
            {
                (Abs::Known(x), Abs::Known(y)) => {
                    let taken = (x == y) == matches!(cond, BranchCond::Eq(..));
                    vec![if taken { target } else { p + 1 }]
                }
                (x, y) => {
                    self.ctrl_hole |= x == Abs::Hole || y == Abs::Hole;
                    vec![target, p + 1]
                }
            },
        }
    }

    /// The taint: which registers hold a hole's value, then whether a branch on one was
    /// passed.
    fn key(&self) -> Vec<bool> {
        let mut k: Vec<bool> = self.regs.iter().map(|&r| r == Abs::Hole).collect();
        k.push(self.ctrl_hole);
        k
    }

    /// Joins `o`, of the same taint, into `self`; whether `self` changed.
    fn join(&mut self, o: &At) -> bool {
        let mut changed = false;
        for (a, &b) in self.regs.iter_mut().zip(&o.regs) {
            let j = a.join(b);
            changed |= j != *a;
            *a = j;
        }
        for (a, &b) in self.windows.iter_mut().zip(&o.windows) {
            let j = crate::provenance::join_windows(*a, b);
            changed |= j != *a;
            *a = j;
        }
        changed
    }

    fn operand(&self, o: Operand) -> Abs {
        match o {
            Operand::Imm(v) => Abs::Known(v),
            Operand::Reg(r) => self.regs[r.0 as usize],
        }
    }

    /// Sets register `r` to `v`, derived from the allocation of window `w`.
    fn set(&mut self, r: scopecheck_ir::RegId, v: Abs, w: Window) {
        self.regs[r.0 as usize] = v;
        self.windows[r.0 as usize] = w;
    }
}

/// What a thread may still do from where it stands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FromHere {
    /// Every location it may still write (sorted).
    pub writes: Vec<LocId>,
    /// The locations of the writes whose address, value and enclosing branches do not
    /// depend on a hole (sorted).
    pub independent_writes: Vec<LocId>,
    /// A barrier arrival or warp collective is reachable.
    pub reaches_arrive: bool,
}

impl FromHere {
    /// Adds writes to `locs`, independent of the holes or not.
    fn add_writes(&mut self, locs: Vec<LocId>, independent: bool) {
        if independent {
            self.independent_writes.extend_from_slice(&locs);
        }
        self.writes.extend(locs);
    }
}

/// The locations an access of type `ty` through `addr` may touch, given the registers, and
/// whether the address depends on a hole. A known address that names no location of that
/// width is a fault: the thread stops there and touches nothing; so is a pointer that leaves
/// the allocation its window names (`provenance.rs`).
fn locations(
    program: &Program,
    allocations: u32,
    at: &At,
    addr: &Address,
    ty: IntType,
) -> (Vec<LocId>, bool) {
    let Some(r) = addr.reg() else {
        return (program.possible_locations(addr), false);
    };
    let w = at.windows[r.0 as usize];
    let of_width = |locs: Vec<LocId>| -> Vec<LocId> {
        locs.into_iter()
            .filter(|&l| program.location(l).ty.bits == ty.bits)
            .collect()
    };
    let unknown = |hole: bool| (of_width(locations_in(program, addr, w)), hole);
    let loc = match (at.regs[r.0 as usize], *addr) {
        (Abs::Hole, _) => return unknown(true),
        (Abs::Any, _) => return unknown(false),
        (Abs::Known(v), Address::Loc { loc, .. }) => program.element(loc, v).ok(),
        (Abs::Known(v), Address::Ptr { disp, .. }) => {
            let target = v.wrapping_add(disp);
            let left = w != 0 && w != TOP && window_of(allocations, target) != w;
            (!left).then(|| program.resolve(target, ty).ok()).flatten()
        }
    };
    (of_width(loc.into_iter().collect()), false)
}

/// The registers of a thread where it stands: their values, allocation windows
/// (`machine.rs`), which of them hold values computed from holes, and which hold values
/// still to come that no hole decides (what a barrier or warp collective the thread waits at
/// gives).
pub struct Registers<'a> {
    pub values: &'a [scopecheck_ir::Value],
    pub windows: &'a [u32],
    pub unknown: &'a [bool],
    pub fresh: &'a [scopecheck_ir::RegId],
}

/// The analysis of `thread` from instruction `pc` with registers `regs`.
pub fn from_here(program: &Program, thread: &Thread, pc: usize, regs: Registers) -> FromHere {
    let code = &thread.code;
    let n = code.len();
    let analysis = Analysis {
        program,
        rules: program.arithmetic(),
        allocations: allocation_count(program),
    };
    let start = At::start(&regs);
    // States are kept apart by which registers hold a hole's value and whether a branch on
    // one was passed (the taint), and joined only on the known values: a write is independent
    // when some path reaches it untainted, so paths of different taint must not be merged.
    let mut states: HashMap<(usize, Vec<bool>), At> = HashMap::new();
    let mut work = vec![(pc.min(n), start.key())];
    states.insert((pc.min(n), start.key()), start);
    let mut out = FromHere::default();
    while let Some((p, key)) = work.pop() {
        if p >= n {
            continue;
        }
        let mut at = states[&(p, key)].clone();
        let Some(next) = analysis.transfer(&mut at, p, &code[p].kind, &mut out) else {
            continue;
        };
        for s in next {
            let s = s.min(n);
            let key = at.key();
            let changed = match states.entry((s, key.clone())) {
                Entry::Occupied(mut old) => old.get_mut().join(&at),
                Entry::Vacant(slot) => {
                    slot.insert(at.clone());
                    true
                }
            };
            if changed {
                work.push((s, key));
            }
        }
    }
    for v in [&mut out.writes, &mut out.independent_writes] {
        v.sort_unstable();
        v.dedup();
    }
    out
}

/// What the analysis of one thread's instructions reads of the program.
struct Analysis<'a> {
    program: &'a Program,
    rules: Arithmetic,
    /// The number of allocations (`provenance.rs`).
    allocations: u32,
}

impl Analysis<'_> {
    /// Executes instruction `kind` at `p` on `at`, adding the writes it may make to `out`:
    /// the instructions that may follow, or `None` when it faults and the thread stops.
    fn transfer(
        &self,
        at: &mut At,
        p: usize,
        kind: &InstrKind,
        out: &mut FromHere,
    ) -> Option<Vec<usize>> {
        let (program, allocations) = (self.program, self.allocations);
        match kind {
            InstrKind::Load { dst, addr, ty, .. } => {
                let (_, hole) = locations(program, allocations, at, addr, *ty);
                at.set(*dst, Abs::hole_or_any(hole), 0);
            }
            InstrKind::Store {
                addr, value, ty, ..
            } => {
                let (locs, hole) = locations(program, allocations, at, addr, *ty);
                let independent = !hole && at.operand(*value) != Abs::Hole && !at.ctrl_hole;
                out.add_writes(locs, independent);
            }
            InstrKind::Rmw {
                dst,
                addr,
                kind,
                ty,
                ..
            } => {
                let (locs, hole) = locations(program, allocations, at, addr, *ty);
                let ops_hole = match *kind {
                    RmwKind::Op(_, v) => at.operand(v) == Abs::Hole,
                    RmwKind::Cas { expected, new } => {
                        at.operand(expected) == Abs::Hole || at.operand(new) == Abs::Hole
                    }
                };
                out.add_writes(locs, !hole && !ops_hole && !at.ctrl_hole);
                if let Some(d) = dst {
                    at.set(*d, Abs::hole_or_any(hole), 0);
                }
            }
            InstrKind::Mov { dst, src } => {
                let w = operand_window(&at.windows, allocations, *src);
                at.set(*dst, at.operand(*src), w);
            }
            InstrKind::Binary { dst, op, ty, a, b } => {
                let v = match (at.operand(*a), at.operand(*b)) {
                    (Abs::Hole, _) | (_, Abs::Hole) => Abs::Hole,
                    // An undefined operation faults: the thread stops there.
                    (Abs::Known(x), Abs::Known(y)) => {
                        Abs::Known(op.eval(*ty, self.rules, x, y).ok()?)
                    }
                    _ => Abs::Any,
                };
                let w = binary_window(
                    *op,
                    operand_window(&at.windows, allocations, *a),
                    operand_window(&at.windows, allocations, *b),
                );
                at.set(*dst, v, w);
            }
            // Some value (not computed here: a fused float operation), or a hole's.
            InstrKind::Fma { dst, a, b, c, .. } => {
                let hole = [a, b, c].iter().any(|&&o| at.operand(o) == Abs::Hole);
                at.set(*dst, Abs::hole_or_any(hole), 0);
            }
            InstrKind::Fence { .. } => {}
            InstrKind::Barrier { kind, .. } => {
                out.reaches_arrive = true;
                if let scopecheck_ir::BarrierKind::Red { dst, .. } = kind {
                    at.set(*dst, Abs::Any, 0);
                }
            }
            kind @ InstrKind::Warp { .. } => {
                out.reaches_arrive = true;
                // A lane waits for its own operands before it arrives, but what it receives
                // carries no dependency (the interpreter records none), so what it does with
                // it does not depend on a hole: some value.
                for d in kind.written_registers() {
                    at.set(d, Abs::Any, 0);
                }
            }
            InstrKind::Branch { cond, target } => return Some(at.branch(p, *cond, *target)),
        }
        Some(vec![p + 1])
    }
}
