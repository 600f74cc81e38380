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

use std::collections::hash_map::{Entry, HashMap};

use scopecheck_ir::{
    Address, BranchCond, InstrKind, IntType, LocId, Operand, Program, RmwKind, Thread,
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
    fn join(self, o: Abs) -> Abs {
        match (self, o) {
            (Abs::Hole, _) | (_, Abs::Hole) => Abs::Hole,
            (Abs::Known(a), Abs::Known(b)) if a == b => Abs::Known(a),
            _ => Abs::Any,
        }
    }
}

/// The analysis state at one instruction: the registers, and whether the path got there
/// through a branch on a hole's value (everything after depends on the hole).
#[derive(Clone, Debug, PartialEq, Eq)]
struct At {
    regs: Vec<Abs>,
    ctrl_hole: bool,
}

impl At {
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
        changed
    }

    fn operand(&self, o: Operand) -> Abs {
        match o {
            Operand::Imm(v) => Abs::Known(v),
            Operand::Reg(r) => self.regs[r.0 as usize],
        }
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

/// The locations an access of type `ty` through `addr` may touch, given the registers; `None`
/// when the address depends on a hole. A known address that names no location of that width
/// is a fault: the thread stops there and touches nothing.
fn locations(program: &Program, at: &At, addr: &Address, ty: IntType) -> Option<Vec<LocId>> {
    let Some(r) = addr.reg() else {
        return Some(program.possible_locations(addr));
    };
    let loc = match (at.regs[r.0 as usize], *addr) {
        (Abs::Hole, _) => return None,
        (Abs::Any, _) => return Some(program.possible_locations(addr)),
        (Abs::Known(v), Address::Loc { loc, .. }) => program.element(loc, v).ok(),
        (Abs::Known(v), Address::Ptr { disp, .. }) => {
            program.resolve(v.wrapping_add(disp), ty).ok()
        }
    };
    Some(
        loc.filter(|&l| program.location(l).ty.bits == ty.bits)
            .into_iter()
            .collect(),
    )
}

/// The analysis of `thread` from instruction `pc` with registers `regs`, of which those
/// `unknown` names hold values computed from holes and those `fresh` names values still to
/// come that no hole decides (what a barrier or warp collective the thread waits at gives).
pub fn from_here(
    program: &Program,
    thread: &Thread,
    pc: usize,
    regs: &[scopecheck_ir::Value],
    unknown: &[bool],
    fresh: &[scopecheck_ir::RegId],
) -> FromHere {
    let code = &thread.code;
    let n = code.len();
    let rules = program.arithmetic();
    let start = At {
        regs: regs
            .iter()
            .zip(unknown)
            .map(|(&v, &u)| if u { Abs::Hole } else { Abs::Known(v) })
            .collect(),
        ctrl_hole: false,
    };
    let mut start = start;
    for r in fresh {
        if start.regs[r.0 as usize] != Abs::Hole {
            start.regs[r.0 as usize] = Abs::Any;
        }
    }
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
        let mut next: Vec<usize> = Vec::with_capacity(2);
        let write = |out: &mut FromHere, locs: Option<Vec<LocId>>, independent: bool| match locs {
            Some(locs) => {
                if independent {
                    out.independent_writes.extend_from_slice(&locs);
                }
                out.writes.extend(locs);
            }
            None => out
                .writes
                .extend(program.possible_locations(&addr_of(&code[p].kind))),
        };
        match &code[p].kind {
            InstrKind::Load { dst, addr, ty, .. } => {
                let hole = locations(program, &at, addr, *ty).is_none();
                at.regs[dst.0 as usize] = if hole { Abs::Hole } else { Abs::Any };
                next.push(p + 1);
            }
            InstrKind::Store {
                addr, value, ty, ..
            } => {
                let locs = locations(program, &at, addr, *ty);
                let independent =
                    locs.is_some() && at.operand(*value) != Abs::Hole && !at.ctrl_hole;
                write(&mut out, locs, independent);
                next.push(p + 1);
            }
            InstrKind::Rmw {
                dst,
                addr,
                kind,
                ty,
                ..
            } => {
                let locs = locations(program, &at, addr, *ty);
                let ops_hole = match *kind {
                    RmwKind::Op(_, v) => at.operand(v) == Abs::Hole,
                    RmwKind::Cas { expected, new } => {
                        at.operand(expected) == Abs::Hole || at.operand(new) == Abs::Hole
                    }
                };
                let hole = locs.is_none();
                write(&mut out, locs, !hole && !ops_hole && !at.ctrl_hole);
                if let Some(d) = dst {
                    at.regs[d.0 as usize] = if hole { Abs::Hole } else { Abs::Any };
                }
                next.push(p + 1);
            }
            InstrKind::Mov { dst, src } => {
                at.regs[dst.0 as usize] = at.operand(*src);
                next.push(p + 1);
            }
            InstrKind::Binary { dst, op, ty, a, b } => {
                let v = match (at.operand(*a), at.operand(*b)) {
                    (Abs::Hole, _) | (_, Abs::Hole) => Abs::Hole,
                    // An undefined operation faults: the thread stops there.
                    (Abs::Known(x), Abs::Known(y)) => match op.eval(*ty, rules, x, y) {
                        Ok(v) => Abs::Known(v),
                        Err(_) => continue,
                    },
                    _ => Abs::Any,
                };
                at.regs[dst.0 as usize] = v;
                next.push(p + 1);
            }
            // Some value (not computed here: a fused float operation), or a hole's.
            InstrKind::Fma { dst, a, b, c, .. } => {
                let hole = [a, b, c].iter().any(|&&o| at.operand(o) == Abs::Hole);
                at.regs[dst.0 as usize] = if hole { Abs::Hole } else { Abs::Any };
                next.push(p + 1);
            }
            InstrKind::Fence { .. } => next.push(p + 1),
            kind @ InstrKind::Barrier { .. } => {
                out.reaches_arrive = true;
                if let InstrKind::Barrier {
                    kind: scopecheck_ir::BarrierKind::Red { dst, .. },
                    ..
                } = kind
                {
                    at.regs[dst.0 as usize] = Abs::Any;
                }
                next.push(p + 1);
            }
            kind @ InstrKind::Warp { .. } => {
                out.reaches_arrive = true;
                // A lane waits for its own operands before it arrives, but what it receives
                // carries no dependency (the interpreter records none), so what it does with
                // it does not depend on a hole: some value.
                for d in kind.written_registers() {
                    at.regs[d.0 as usize] = Abs::Any;
                }
                next.push(p + 1);
            }
            InstrKind::Branch { cond, target } => match *cond {
                BranchCond::Always => next.push(*target),
                BranchCond::Eq(a, b) | BranchCond::Ne(a, b) => {
                    match (at.operand(a), at.operand(b)) {
                        (Abs::Known(x), Abs::Known(y)) => {
                            let taken = (x == y) == matches!(cond, BranchCond::Eq(..));
                            next.push(if taken { *target } else { p + 1 });
                        }
                        (x, y) => {
                            at.ctrl_hole |= x == Abs::Hole || y == Abs::Hole;
                            next.extend([*target, p + 1]);
                        }
                    }
                }
            },
        }
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

/// The address of an access instruction.
fn addr_of(kind: &InstrKind) -> Address {
    match kind {
        InstrKind::Load { addr, .. }
        | InstrKind::Store { addr, .. }
        | InstrKind::Rmw { addr, .. } => *addr,
        _ => unreachable!("only accesses have addresses"),
    }
}
