//! Which registers of a test thread the generated code holds in 64 bits.
//!
//! The IR's registers are untyped: each holds a [`Value`], canonical in the type of the
//! instruction that wrote it. The kernel holds most of them in 32-bit PTX registers, the words
//! of those values; a register that ever holds a 64-bit value, or is read by a 64-bit
//! instruction (which computes on the whole value, not its low word), is held in a 64-bit
//! register instead, with exactly the IR's value. Narrow and wide registers meet only through
//! instructions of one width: a 32-bit instruction reads a wide register's low word (the IR
//! wraps every operand to the instruction's type first, [`scopecheck_ir::BinOp::eval`]) and
//! writes a wide register its result extended as the type says; moves and compared registers
//! share a width, so no 32-bit word is ever widened without the type that made it.

use scopecheck_ir::{
    Address, Arch, BinOp, BranchCond, InstrKind, IntType, LocId, MemorySpace, Observable, Operand,
    Placement, Program, RegId, RmwKind, RmwOp, Thread, Value,
};

use crate::GenError;

/// Whether `v` is some 32-bit value: the word the kernel holds stands for it.
pub fn fits32(v: Value) -> bool {
    i32::try_from(v).is_ok() || u32::try_from(v).is_ok()
}

/// Per register of `t`, whether the kernel holds it in 64 bits.
pub fn wide_registers(t: &Thread) -> Vec<bool> {
    let mut wide = vec![false; t.registers.len()];
    let mark = |wide: &mut Vec<bool>, r: RegId| -> bool {
        match wide.get_mut(r.0 as usize) {
            Some(w) if !*w => {
                *w = true;
                true
            }
            _ => false,
        }
    };
    for &(r, v) in &t.init_regs {
        if !fits32(v) {
            mark(&mut wide, r);
        }
    }
    // Each round only adds: iterate to a fixpoint.
    loop {
        let mut changed = false;
        for i in &t.code {
            for r in must_be_wide(&i.kind, &wide) {
                changed |= mark(&mut wide, r);
            }
        }
        if !changed {
            return wide;
        }
    }
}

/// The registers `k` needs in 64 bits, given those already wide.
fn must_be_wide(k: &InstrKind, wide: &[bool]) -> Vec<RegId> {
    let is_wide = |o: Operand| match o {
        Operand::Reg(r) => wide.get(r.0 as usize).copied().unwrap_or(false),
        Operand::Imm(v) => !fits32(v),
    };
    let regs = |ops: &[Operand]| -> Vec<RegId> {
        ops.iter()
            .filter_map(|o| match o {
                Operand::Reg(r) => Some(*r),
                Operand::Imm(_) => None,
            })
            .collect()
    };
    match *k {
        InstrKind::Load { dst, ty, .. } if ty.bits == 64 => vec![dst],
        InstrKind::Store { value, ty, .. } if ty.bits == 64 => regs(&[value]),
        InstrKind::Rmw { dst, kind, ty, .. } if ty.bits == 64 => {
            let mut v = match kind {
                RmwKind::Op(_, x) => regs(&[x]),
                RmwKind::Cas { expected, new } => regs(&[expected, new]),
            };
            v.extend(dst);
            v
        }
        InstrKind::Binary { dst, op, ty, a, b } if ty.bits == 64 => {
            // A shift amount is a 32-bit operand; a comparison's result is 0 or 1.
            let mut v = match op {
                BinOp::Shl | BinOp::Shr => regs(&[a]),
                _ => regs(&[a, b]),
            };
            if !matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le) {
                v.push(dst);
            }
            v
        }
        // A move copies the whole value: both sides one width.
        InstrKind::Mov { dst, src } if is_wide(src) || is_wide(Operand::Reg(dst)) => {
            let mut v = regs(&[src]);
            v.push(dst);
            v
        }
        // Two values compared whole: both sides one width.
        InstrKind::Branch {
            cond: BranchCond::Eq(a, b) | BranchCond::Ne(a, b),
            ..
        } if is_wide(a) || is_wide(b) => regs(&[a, b]),
        _ => Vec::new(),
    }
}

/// Per observable of `program` (in [`Program::observables`]' order), whether its value is 64
/// bits wide: a wide register, or a 64-bit location. The record and the value table hold such a
/// value as two words, low word first.
pub fn wide_observables(program: &Program) -> Vec<bool> {
    let wide: Vec<Vec<bool>> = program.threads.iter().map(wide_registers).collect();
    program
        .observables()
        .into_iter()
        .map(|o| match o {
            Observable::Reg(t, r) => wide
                .get(t.0 as usize)
                .and_then(|w| w.get(r.0 as usize))
                .copied()
                .unwrap_or(false),
            Observable::Loc(l) => program.location(l).ty.bits == 64,
        })
        .collect()
}

/// The word width the runner computes in by default: locations, registers, records and the
/// value table are 32-bit words, and 64-bit locations and registers (see [`wide_registers`])
/// are held whole where the test needs them.
pub const WORD_BITS: u8 = 32;

/// Refuses what the runner cannot run faithfully: a location, an access or an arithmetic
/// instruction of a width other than 32 or 64 bits, 64-bit values where the runner keeps
/// words only (shared memory, warp collectives), an access through a
/// pointer (locations are laid out on lines of their own, not where [`Program::address_of`]
/// puts them), and a branch that compares two values which may differ while sharing their
/// 32-bit word.
pub(crate) fn word_hazard(program: &Program) -> Result<(), GenError> {
    location_hazard(program)?;
    for t in &program.threads {
        thread_hazard(program, t)?;
    }
    Ok(())
}

fn location_hazard(program: &Program) -> Result<(), GenError> {
    let refuse = |why: String| Err(GenError::Unsupported(why));
    let untyped_hint = if program.arch == Arch::Ptx {
        " (a 32-bit suffix such as .s32, .u32 or .b32 on its accesses, or none, makes it 32-bit)"
    } else {
        ""
    };
    // Locations the test never touches or observes are only placed and reset, never read.
    let mut used: Vec<LocId> = program
        .threads
        .iter()
        .flat_map(|t| t.code.iter().filter_map(|i| i.kind.named_loc()))
        .collect();
    let observed: Vec<LocId> = program
        .observables()
        .into_iter()
        .filter_map(|o| match o {
            Observable::Loc(l) => Some(l),
            Observable::Reg(..) => None,
        })
        .collect();
    used.extend(&observed);
    for (i, l) in program.locations.iter().enumerate() {
        let id = LocId(i as u32);
        if !used.contains(&id) || l.ty.bits == WORD_BITS {
            continue;
        }
        let what = format!(
            "location {} holds {}-bit values (.{}, {})",
            l.name,
            l.ty.bits,
            l.ty.ptx_name(),
            l.ty
        );
        if l.ty.bits != 64 {
            return refuse(format!(
                "{what}; the runner computes on 32-bit and 64-bit values only{untyped_hint}"
            ));
        }
        if l.space == MemorySpace::Shared {
            return refuse(format!(
                "{what} in shared memory, where the runner keeps 32-bit words only"
            ));
        }
    }
    Ok(())
}

/// What thread `t` does that the runner cannot: see [`word_hazard`].
fn thread_hazard(program: &Program, t: &Thread) -> Result<(), GenError> {
    let refuse = |why: String| Err(GenError::Unsupported(why));
    let holds = register_holds(t);
    let wide = wide_registers(t);
    let is_wide = |o: Operand| match o {
        Operand::Reg(r) => wide.get(r.0 as usize).copied().unwrap_or(false),
        Operand::Imm(v) => !fits32(v),
    };
    let host = t.placement == Placement::Host;
    for i in &t.code {
        let text = i.text.replace('\n', " ");
        let text = text.trim();
        if let InstrKind::Rmw {
            kind: RmwKind::Op(op, _),
            ty,
            ..
        } = i.kind
        {
            if ty.float && op != RmwOp::Exch && !host {
                return refuse(format!(
                    "{}: `{text}` is a floating-point atomic; the runner generates integer \
                     atomics only",
                    t.name
                ));
            }
            if ty.bits == 64 && matches!(op, RmwOp::Inc | RmwOp::Dec) {
                return refuse(format!(
                    "{}: `{text}` is a 64-bit atomic increment or decrement, which PTX does \
                     not have",
                    t.name
                ));
            }
        }
        match i.kind {
            InstrKind::Load { ref addr, ty, .. }
            | InstrKind::Store { ref addr, ty, .. }
            | InstrKind::Rmw { ref addr, ty, .. } => {
                match *addr {
                    Address::Ptr { .. } => {
                        return refuse(format!(
                            "{}: `{text}` accesses memory through a pointer held in a \
                             register; the runner lays locations out on lines of their own \
                             and does not run pointer accesses",
                            t.name
                        ))
                    }
                    // An index into an array moves by whole elements, which the layout
                    // keeps in order (see `codegen::Gen::addr`).
                    Address::Loc { .. } => {}
                }
                if ty.bits != WORD_BITS && ty.bits != 64 {
                    return refuse(format!(
                        "{}: `{text}` is a {}-bit access (.{}); the runner computes on \
                         32-bit and 64-bit values only",
                        t.name,
                        ty.bits,
                        ty.ptx_name()
                    ));
                }
                // The layout gives a location the bytes of its own type.
                let loc_bits = addr.named_loc().map(|l| program.location(l).ty.bits);
                if loc_bits.is_some_and(|b| b != ty.bits) {
                    return refuse(format!(
                        "{}: `{text}` is a {}-bit access (.{}) to a location of another width; \
                         the runner lays each location out at its own width",
                        t.name,
                        ty.bits,
                        ty.ptx_name()
                    ));
                }
            }
            // Device code computes in integer instructions only: a float's arithmetic,
            // conversion or atomic add would be integer arithmetic on its bits there.
            // Host threads run `host::run_role`, which computes them as the IR does.
            InstrKind::Binary {
                op: BinOp::Trap, ..
            } => {
                return refuse(format!(
                    "{}: `{text}` traps; the runner does not run tests that abort a kernel",
                    t.name
                ));
            }
            InstrKind::Binary { op, ty, .. }
                if !host && (ty.float || matches!(op, BinOp::Float(..) | BinOp::Cvt { .. })) =>
            {
                return refuse(format!(
                    "{}: `{text}` computes on floating-point values; the runner generates \
                     integer arithmetic only",
                    t.name
                ));
            }
            InstrKind::Fma { .. } if !host => {
                return refuse(format!(
                    "{}: `{text}` computes on floating-point values; the runner generates \
                     integer arithmetic only",
                    t.name
                ));
            }
            InstrKind::Binary { ty, .. } if ty.bits != WORD_BITS && ty.bits != 64 => {
                return refuse(format!(
                    "{}: `{text}` computes in {}-bit arithmetic (.{}, {}); the runner \
                     computes on 32-bit and 64-bit values only",
                    t.name,
                    ty.bits,
                    ty.ptx_name(),
                    ty,
                ));
            }
            InstrKind::Warp {
                mask, value, dst, ..
            } if is_wide(mask)
                || is_wide(value)
                || dst.is_some_and(|d| is_wide(Operand::Reg(d))) =>
            {
                return refuse(format!(
                    "{}: `{text}` is a warp collective on a 64-bit value; the runner's \
                     collectives exchange 32-bit words",
                    t.name
                ));
            }
            InstrKind::Branch {
                cond: BranchCond::Eq(a, b) | BranchCond::Ne(a, b),
                ..
            } if !is_wide(a) && !is_wide(b) => {
                let (ha, hb) = (operand_holds(&holds, a), operand_holds(&holds, b));
                if a != b && ((ha.negative && hb.high) || (ha.high && hb.negative)) {
                    return refuse(format!(
                        "{}: `{text}` compares a value that may be negative with one that may \
                         be 2^31 or more: two such values can differ and still be the same \
                         32-bit word, which the GPU cannot tell apart",
                        t.name
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Which values a 32-bit word may stand for: a value is held canonically in its type, so the
/// same word is a negative value in a signed type and a value of 2^31 or more in an unsigned
/// one. Words decode unambiguously unless both kinds can meet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Holds {
    /// The register may hold a negative value.
    pub negative: bool,
    /// The register may hold a value of 2^31 or more.
    pub high: bool,
}

impl Holds {
    fn of_value(v: Value) -> Holds {
        Holds {
            negative: v < 0,
            high: v > Value::from(i32::MAX),
        }
    }

    /// What a value of type `ty` may be.
    pub fn of_type(ty: IntType) -> Holds {
        Holds {
            negative: ty.signed,
            high: !ty.signed,
        }
    }

    fn union(self, o: Holds) -> Holds {
        Holds {
            negative: self.negative || o.negative,
            high: self.high || o.high,
        }
    }

    /// The value the 32-bit word `w` stands for in a register that holds these values: zero
    /// extended when it never holds a negative value but may hold a large one, sign extended
    /// otherwise.
    pub fn decode(self, w: u32) -> Value {
        if self.high && !self.negative {
            Value::from(w)
        } else {
            Value::from(w as i32)
        }
    }
}

fn operand_holds(regs: &[Holds], op: Operand) -> Holds {
    match op {
        Operand::Reg(r) => regs.get(r.0 as usize).copied().unwrap_or_default(),
        Operand::Imm(v) => Holds::of_value(v),
    }
}

/// What each register of `t` may hold, from the types of the instructions that write it (a
/// load, an RMW and arithmetic hold values of their type; comparisons and barrier reductions
/// small non-negative ones; a move what it copies) and its initial value.
pub fn register_holds(t: &Thread) -> Vec<Holds> {
    let mut regs = vec![Holds::default(); t.registers.len()];
    for &(r, v) in &t.init_regs {
        if let Some(h) = regs.get_mut(r.0 as usize) {
            *h = h.union(Holds::of_value(v));
        }
    }
    // Moves copy what their source holds: iterate to a fixpoint (each round only adds).
    loop {
        let mut changed = false;
        for i in &t.code {
            let (dst, h) = match i.kind {
                InstrKind::Load { dst, ty, .. }
                | InstrKind::Rmw {
                    dst: Some(dst), ty, ..
                } => (dst, Holds::of_type(ty)),
                InstrKind::Binary { dst, op, ty, .. } => {
                    let h = match op {
                        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le => Holds::default(),
                        _ => Holds::of_type(ty),
                    };
                    (dst, h)
                }
                InstrKind::Mov { dst, src } => (dst, operand_holds(&regs, src)),
                _ => continue,
            };
            if let Some(slot) = regs.get_mut(dst.0 as usize) {
                let new = slot.union(h);
                if new != *slot {
                    *slot = new;
                    changed = true;
                }
            }
        }
        if !changed {
            return regs;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopecheck_ir::Instr;

    fn thread(code: Vec<InstrKind>, regs: usize) -> Thread {
        Thread {
            name: "P0".into(),
            placement: Placement::Host,
            span: None,
            registers: (0..regs).map(|i| format!("r{i}")).collect(),
            init_regs: vec![],
            code: code
                .into_iter()
                .map(|kind| Instr {
                    kind,
                    span: Default::default(),
                    text: String::new(),
                })
                .collect(),
            after: vec![],
        }
    }

    const U32: IntType = IntType::U32;
    const U64: IntType = IntType::U64;

    #[test]
    fn a_register_is_wide_where_a_64_bit_value_reaches_it() {
        // r0 = 2^32 (a pointer value of the PTX view); r1 = r0 moved: both wide. r2 is the
        // 32-bit operand of a 64-bit add (mul.wide's source): wide, so the add reads the IR's
        // whole value of it. r3 is a 32-bit sum of narrow registers and r4 the result of a
        // 64-bit comparison (0 or 1): both narrow. r5 is the amount of a 64-bit shift: narrow.
        let t = thread(
            vec![
                InstrKind::Mov {
                    dst: RegId(0),
                    src: Operand::Imm(1 << 32),
                },
                InstrKind::Mov {
                    dst: RegId(1),
                    src: Operand::Reg(RegId(0)),
                },
                InstrKind::Binary {
                    dst: RegId(1),
                    op: BinOp::Add,
                    ty: U64,
                    a: Operand::Reg(RegId(1)),
                    b: Operand::Reg(RegId(2)),
                },
                InstrKind::Binary {
                    dst: RegId(3),
                    op: BinOp::Add,
                    ty: U32,
                    a: Operand::Reg(RegId(5)),
                    b: Operand::Imm(1),
                },
                InstrKind::Binary {
                    dst: RegId(4),
                    op: BinOp::Lt,
                    ty: U64,
                    a: Operand::Reg(RegId(1)),
                    b: Operand::Imm(3),
                },
                InstrKind::Binary {
                    dst: RegId(1),
                    op: BinOp::Shl,
                    ty: U64,
                    a: Operand::Reg(RegId(1)),
                    b: Operand::Reg(RegId(5)),
                },
            ],
            6,
        );
        assert_eq!(
            wide_registers(&t),
            vec![true, true, true, false, false, false]
        );
    }

    #[test]
    fn compared_registers_share_a_width() {
        // r0 holds a 64-bit load; the branch compares r1 with it, so r1 is wide too, and r2,
        // moved into r1, with it.
        let t = thread(
            vec![
                InstrKind::Load {
                    dst: RegId(0),
                    addr: Address::loc(scopecheck_ir::LocId(0)),
                    ty: U64,
                    order: scopecheck_ir::Order::Weak,
                    scope: scopecheck_ir::Scope::Sys,
                },
                InstrKind::Mov {
                    dst: RegId(1),
                    src: Operand::Reg(RegId(2)),
                },
                InstrKind::Branch {
                    cond: BranchCond::Ne(Operand::Reg(RegId(0)), Operand::Reg(RegId(1))),
                    target: 0,
                },
            ],
            3,
        );
        assert_eq!(wide_registers(&t), vec![true, true, true]);
    }
}
