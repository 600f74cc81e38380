//! The integer, logic, warp and conversion instructions.

use scopecheck_ir::ptx::Opcode;
use scopecheck_ir::{BinOp, InstrKind, IntType, Operand, ShflMode, Value, VoteOp, WarpOp};

use crate::ast::{Instruction, Operand as Op, ScalarType, StateSpace};

use super::qualifiers::{
    arith_type, float_error, int_of, mnemonic, no_memory_quals, one_type, only, quals, PRED,
};
use super::{Frame, Lower, LowerError, R};

impl<'a, 'm> Lower<'a, 'm> {
    pub(super) fn mov(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let t = one_type(ins, &q)?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        if t == ScalarType::Pred {
            let d = self.dst(f, ins, d)?;
            let src = match self.src(f, ins, a, PRED)? {
                Operand::Imm(v) => Operand::Imm(Value::from(v != 0)),
                r => r,
            };
            self.emit(InstrKind::Mov { dst: d, src });
            return Ok(());
        }
        let ty = int_of(t, true).expect("not a predicate");
        match (d, a) {
            // Packing (`mov.b64 %rd1, {%r1, %r2}`): the first element in the low bits.
            (d, Op::Vector(parts)) => {
                let d = self.dst(f, ins, d)?;
                let w = self.vector_part(ins, ty, parts.len())?;
                let acc = self.scratch();
                self.emit(InstrKind::Mov {
                    dst: acc,
                    src: Operand::Imm(0),
                });
                for (k, p) in parts.iter().enumerate() {
                    let v = self.src(f, ins, p, w)?;
                    let v = self.wrapped(v, w);
                    let s = self.scratch();
                    self.binary(
                        s,
                        BinOp::Shl,
                        ty,
                        v,
                        Operand::Imm(i64::from(w.bits) * k as i64),
                    );
                    self.binary(acc, BinOp::Or, ty, Operand::Reg(acc), Operand::Reg(s));
                }
                self.emit(InstrKind::Mov {
                    dst: d,
                    src: Operand::Reg(acc),
                });
            }
            // Unpacking (`mov.b64 {%r1, %r2}, %rd1`).
            (Op::Vector(parts), a) => {
                let w = self.vector_part(ins, ty, parts.len())?;
                let v = self.src(f, ins, a, ty)?;
                let src = self.scratch();
                self.emit(InstrKind::Mov { dst: src, src: v });
                for (k, p) in parts.iter().enumerate() {
                    if *p == Op::Sink {
                        continue;
                    }
                    let d = self.dst(f, ins, p)?;
                    let s = self.scratch();
                    let u = IntType::new(ty.bits, false);
                    self.binary(
                        s,
                        BinOp::Shr,
                        u,
                        Operand::Reg(src),
                        Operand::Imm(i64::from(w.bits) * k as i64),
                    );
                    self.wrap(d, Operand::Reg(s), w);
                }
            }
            (d, a) => {
                let d = self.dst(f, ins, d)?;
                let src = self.src(f, ins, a, ty)?;
                self.emit(InstrKind::Mov { dst: d, src });
            }
        }
        Ok(())
    }

    fn vector_part(&self, ins: &Instruction, ty: IntType, n: usize) -> R<IntType> {
        if n == 0
            || !(ty.bits as usize).is_multiple_of(n)
            || !matches!(ty.bits as usize / n, 8 | 16 | 32)
        {
            return Err(LowerError::at(
                ins,
                format!("`{}` cannot pack {n} values", mnemonic(ins)),
            ));
        }
        Ok(IntType::new(ty.bits / n as u8, false))
    }

    pub(super) fn arith(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let op = Opcode::from_name(&ins.opcode)
            .and_then(Opcode::binary)
            .expect("`op` sends only binary opcodes here");
        let logic = matches!(op, BinOp::And | BinOp::Or | BinOp::Xor);
        let ty = arith_type(ins, &q, logic)?;
        let [d, a, b] = self.operands(ins, 3)? else {
            unreachable!()
        };
        let promote = ty.bits == 32
            && matches!(op, BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or)
            && (self.is_address(f, a) || self.is_address(f, b));
        if promote {
            let (a, b) = (self.promoted(f, ins, a)?, self.promoted(f, ins, b)?);
            let d = self.dst(f, ins, d)?;
            self.binary(d, op, IntType::S64, a, b);
            return Ok(());
        }
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            return self.shift(f, ins, op, ty);
        }
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let d = self.dst(f, ins, d)?;
        self.binary(d, op, ty, a, b);
        Ok(())
    }

    /// `shl` / `shr`: the amount is a `.u32` whatever the type, clamped to the width (PTX ISA,
    /// "Logic and Shift Instructions"). `BinOp` clamps in its own type, which for 16-bit types
    /// would first cut the amount to 16 bits; those shift in 32 bits instead.
    fn shift(&mut self, f: &mut Frame<'m>, ins: &Instruction, op: BinOp, ty: IntType) -> R<()> {
        let [d, a, b] = self.operands(ins, 3)? else {
            unreachable!()
        };
        let a = self.src(f, ins, a, ty)?;
        let amount = match self.src(f, ins, b, IntType::U32)? {
            Operand::Imm(v) => Operand::Imm(v.min(i64::from(ty.bits))),
            r => r,
        };
        let d = self.dst(f, ins, d)?;
        if ty.bits >= 32 || matches!(amount, Operand::Imm(_)) {
            self.binary(d, op, ty, a, amount);
            return Ok(());
        }
        let wide = IntType::new(32, ty.signed);
        let a = self.wrapped(a, ty);
        let t = self.scratch();
        self.binary(t, op, wide, a, amount);
        self.wrap(d, Operand::Reg(t), ty);
        Ok(())
    }

    /// `mul.{lo,hi,wide}` and `mad.{lo,hi,wide}` (PTX ISA, "Integer Arithmetic").
    pub(super) fn mul(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &["lo", "hi", "wide"])?;
        let ty = arith_type(ins, &q, false)?;
        if q.other.len() > 1 {
            return Err(LowerError::at(
                ins,
                format!("`{}`: one of `.lo`, `.hi`, `.wide`", mnemonic(ins)),
            ));
        }
        let mode = q.other.first().copied().unwrap_or("lo");
        let mad = ins.opcode == "mad";
        let ops = self.operands(ins, if mad { 4 } else { 3 })?;
        if mode == "wide" && !matches!(ty.bits, 16 | 32) {
            return Err(LowerError::at(
                ins,
                format!("`{}`: `.wide` takes a 16- or 32-bit type", mnemonic(ins)),
            ));
        }
        let a = self.src(f, ins, &ops[1], ty)?;
        let b = self.src(f, ins, &ops[2], ty)?;
        let wide = IntType::new(ty.bits.saturating_mul(2).min(64), ty.signed);
        // The product goes to the destination directly for `mul`, through a scratch
        // register for `mad` (the destination may be the addend).
        let p = if mad {
            self.scratch()
        } else {
            self.dst(f, ins, &ops[0])?
        };
        match mode {
            "lo" => self.binary(p, BinOp::Mul, ty, a, b),
            "hi" => self.mul_hi(ins, p, a, b, ty)?,
            _ => self.mul_wide(p, a, b, ty),
        }
        if mad {
            let sum_ty = if mode == "wide" { wide } else { ty };
            let c = &ops[3];
            let d = self.dst(f, ins, &ops[0])?;
            if sum_ty.bits == 32 && mode == "lo" && self.is_address(f, c) {
                let c = self.promoted(f, ins, c)?;
                let p = self.wrapped(Operand::Reg(p), IntType::S32);
                self.binary(d, BinOp::Add, IntType::S64, p, c);
            } else {
                let c = self.src(f, ins, c, sum_ty)?;
                self.binary(d, BinOp::Add, sum_ty, Operand::Reg(p), c);
            }
        }
        Ok(())
    }

    /// `bfi.b32/.b64 d, a, b, pos, len`: `b` with bits `pos..pos+len` taken from the low bits
    /// of `a` (PTX ISA, "bfi"). NVRTC emits it to pack two 32-bit halves into a 64-bit value;
    /// the position and the length must be constants.
    pub(super) fn bfi(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let ty = arith_type(ins, &q, true)?;
        let [d, a, b, pos, len] = self.operands(ins, 5)? else {
            unreachable!()
        };
        let (Op::Int(pos), Op::Int(len)) = (pos, len) else {
            return Err(LowerError::at(
                ins,
                "`bfi` with its position or length in a register is not supported yet",
            ));
        };
        let width = i64::from(ty.bits);
        // The ISA takes both from their low 8 bits; past the msb nothing is inserted.
        let (pos, len) = (
            pos & 0xff,
            (len & 0xff).min(width - (pos & 0xff).min(width)),
        );
        let field: i128 = if len == 0 {
            0
        } else {
            ((1i128 << len) - 1) << pos
        };
        let mask = ty.wrap(field as i64);
        let keep = ty.wrap(!(field as i64));
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let d = self.dst(f, ins, d)?;
        let shifted = self.scratch();
        self.binary(shifted, BinOp::Shl, ty, a, Operand::Imm(pos.min(width)));
        let inserted = self.scratch();
        self.binary(
            inserted,
            BinOp::And,
            ty,
            Operand::Reg(shifted),
            Operand::Imm(mask),
        );
        let kept = self.scratch();
        self.binary(kept, BinOp::And, ty, b, Operand::Imm(keep));
        self.binary(d, BinOp::Or, ty, Operand::Reg(inserted), Operand::Reg(kept));
        Ok(())
    }

    /// `popc`, `clz`, `brev`, `bfind[.shiftamt]`: bit operations of one operand (`popc`,
    /// `clz` and `bfind` give a `.u32` whatever their operand's type).
    pub(super) fn bits(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let shiftamt = ins.opcode == "bfind" && q.other.contains(&"shiftamt");
        only(
            ins,
            &q,
            if ins.opcode == "bfind" {
                &["shiftamt"]
            } else {
                &[]
            },
        )?;
        let ty = arith_type(ins, &q, false)?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let a = self.src(f, ins, a, ty)?;
        let d = self.dst(f, ins, d)?;
        let op = match ins.opcode.as_str() {
            "popc" => BinOp::Popc,
            "clz" => BinOp::Clz,
            "brev" => BinOp::Brev,
            _ if shiftamt => BinOp::BfindShift,
            _ => BinOp::Bfind,
        };
        if op == BinOp::Brev {
            self.binary(d, op, ty, a, Operand::Imm(0));
        } else {
            // The count is a `.u32`, whatever the operand's width (`bfind`'s "none" too).
            let t = self.scratch();
            self.binary(t, op, ty, a, Operand::Imm(0));
            self.binary(
                d,
                BinOp::And,
                IntType::U32,
                Operand::Reg(t),
                Operand::Imm(0xffff_ffff),
            );
        }
        Ok(())
    }

    /// `shfl.sync.MODE.b32 d[|p], a, b, c, membermask`.
    pub(super) fn shfl(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let mode = match q.other.as_slice() {
            ["sync", "up"] => ShflMode::Up,
            ["sync", "down"] => ShflMode::Down,
            ["sync", "bfly"] => ShflMode::Bfly,
            ["sync", "idx"] => ShflMode::Idx,
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: expected `shfl.sync.up`, `.down`, `.bfly` or `.idx` (the `shfl` without `.sync` of sm_6x and before is not supported)",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        let ty = arith_type(ins, &q, false)?;
        let ops = &ins.operands;
        let (d, p, rest) = match ops.len() {
            5 => (&ops[0], None, &ops[1..]),
            6 => (&ops[0], Some(&ops[1]), &ops[2..]),
            n => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}` takes 5 operands (6 with a predicate destination), found {n}",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        let value = self.src(f, ins, &rest[0], ty)?;
        let lane = self.src(f, ins, &rest[1], IntType::U32)?;
        let clamp = self.src(f, ins, &rest[2], IntType::U32)?;
        let mask = self.src(f, ins, &rest[3], IntType::U32)?;
        let dst = Some(self.dst(f, ins, d)?);
        let pred_dst = p.map(|p| self.dst(f, ins, p)).transpose()?;
        self.emit(InstrKind::Warp {
            op: WarpOp::Shfl { mode, lane, clamp },
            mask,
            value,
            dst,
            pred_dst,
        });
        Ok(())
    }

    /// `vote.sync.ballot.b32 d, {!}a, membermask` and `vote.sync.{any,all,uni}.pred d, {!}a,
    /// membermask`.
    pub(super) fn vote(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let op = match q.other.as_slice() {
            ["sync", "ballot"] => VoteOp::Ballot,
            ["sync", "any"] => VoteOp::Any,
            ["sync", "all"] => VoteOp::All,
            ["sync", "uni"] => VoteOp::Uni,
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: expected `vote.sync.ballot`, `.any`, `.all` or `.uni` (the `vote` without `.sync` of sm_6x and before is not supported)",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        let [d, a, m] = self.operands(ins, 3)? else {
            unreachable!()
        };
        let value = self.src(f, ins, a, PRED)?;
        let mask = self.src(f, ins, m, IntType::U32)?;
        let dst = Some(self.dst(f, ins, d)?);
        self.emit(InstrKind::Warp {
            op: WarpOp::Vote(op),
            mask,
            value,
            dst,
            pred_dst: None,
        });
        Ok(())
    }

    /// `activemask.b32 d`: the lanes that run it converged with this thread (the explorer
    /// chooses them, [`WarpOp::ActiveMask`]).
    pub(super) fn activemask(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        if !q.other.is_empty() || q.types.as_slice() != [ScalarType::B(32)] {
            return Err(LowerError::at(
                ins,
                format!("expected `activemask.b32`, found `{}`", mnemonic(ins)),
            ));
        }
        let [d] = self.operands(ins, 1)? else {
            unreachable!()
        };
        let dst = Some(self.dst(f, ins, d)?);
        self.emit(InstrKind::Warp {
            op: WarpOp::ActiveMask,
            mask: Operand::Imm(0),
            value: Operand::Imm(0),
            dst,
            pred_dst: None,
        });
        Ok(())
    }

    /// `bar.warp.sync membermask`: `__syncwarp`.
    pub(super) fn warp_sync(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        if ins
            .modifiers
            .iter()
            .any(|m| !matches!(m.as_str(), "warp" | "sync"))
        {
            return Err(LowerError::at(
                ins,
                format!("expected `bar.warp.sync`, found `{}`", mnemonic(ins)),
            ));
        }
        let [m] = self.operands(ins, 1)? else {
            unreachable!()
        };
        let mask = self.src(f, ins, m, IntType::U32)?;
        self.emit(InstrKind::Warp {
            op: WarpOp::Sync,
            mask,
            value: Operand::Imm(0),
            dst: None,
            pred_dst: None,
        });
        Ok(())
    }

    pub(super) fn unary(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let op = ins.opcode.as_str();
        let ty = arith_type(ins, &q, op == "not")?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let is_pred = one_type(ins, &q)? == ScalarType::Pred;
        let a = self.src(f, ins, a, ty)?;
        let d = self.dst(f, ins, d)?;
        match op {
            "not" if is_pred => self.binary(d, BinOp::Xor, ty, a, Operand::Imm(1)),
            "not" => self.binary(d, BinOp::Xor, ty, a, Operand::Imm(ty.wrap(-1))),
            "cnot" => self.binary(d, BinOp::Eq, ty, a, Operand::Imm(0)),
            "neg" => self.binary(d, BinOp::Sub, ty, Operand::Imm(0), a),
            _ => {
                // abs: PTX gives the most negative value back unchanged, as `0 - x` wraps.
                let neg = self.scratch();
                self.binary(neg, BinOp::Sub, ty, Operand::Imm(0), a);
                let c = self.scratch();
                self.binary(c, BinOp::Lt, ty, a, Operand::Imm(0));
                self.select(d, Operand::Reg(c), Operand::Reg(neg), a, ty);
            }
        }
        Ok(())
    }

    pub(super) fn min_max(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let ty = arith_type(ins, &q, false)?;
        let [d, a, b] = self.operands(ins, 3)? else {
            unreachable!()
        };
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let d = self.dst(f, ins, d)?;
        let c = self.scratch();
        if ins.opcode == "min" {
            self.binary(c, BinOp::Lt, ty, a, b);
        } else {
            self.binary(c, BinOp::Lt, ty, b, a);
        }
        self.select(d, Operand::Reg(c), a, b, ty);
        Ok(())
    }

    /// `setp.CmpOp{.BoolOp}.type p, a, b{, {!}c}` (PTX ISA, "Comparison and Selection").
    pub(super) fn setp(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let t = one_type(ins, &q)?;
        if matches!(t, ScalarType::F(_)) {
            return Err(float_error(ins));
        }
        let ty = arith_type(ins, &q, false)?;
        let unsigned = IntType::new(ty.bits, false);
        let mut cmp = None;
        let mut combine = None;
        for m in &q.other {
            // (operation, swap the operands, compare unsigned)
            let c = match *m {
                "eq" => (BinOp::Eq, false, false),
                "ne" => (BinOp::Ne, false, false),
                "lt" => (BinOp::Lt, false, false),
                "le" => (BinOp::Le, false, false),
                "gt" => (BinOp::Lt, true, false),
                "ge" => (BinOp::Le, true, false),
                "lo" => (BinOp::Lt, false, true),
                "ls" => (BinOp::Le, false, true),
                "hi" => (BinOp::Lt, true, true),
                "hs" => (BinOp::Le, true, true),
                "and" => {
                    combine = Some(BinOp::And);
                    continue;
                }
                "or" => {
                    combine = Some(BinOp::Or);
                    continue;
                }
                "xor" => {
                    combine = Some(BinOp::Xor);
                    continue;
                }
                "equ" | "neu" | "ltu" | "leu" | "gtu" | "geu" | "num" | "nan" | "ftz" => {
                    return Err(float_error(ins))
                }
                other => {
                    return Err(LowerError::at(
                        ins,
                        format!("unknown comparison `.{other}` on `setp`"),
                    ))
                }
            };
            cmp = Some(c);
        }
        let Some((op, swap, force_unsigned)) = cmp else {
            return Err(LowerError::at(
                ins,
                "`setp` needs a comparison (`.eq`, `.lt`, ...)",
            ));
        };
        let cty = if force_unsigned { unsigned } else { ty };
        self.setp_with(f, ins, (op, cty, swap), combine)
    }

    /// The destinations and sources of `setp`: `p{|q}, a, b{, c}`, `p = (a op b) BoolOp c`
    /// computed in `cty`, the operands swapped when `swap` says so.
    pub(super) fn setp_with(
        &mut self,
        f: &mut Frame<'m>,
        ins: &'m Instruction,
        (op, cty, swap): (BinOp, IntType, bool),
        combine: Option<BinOp>,
    ) -> R<()> {
        // `p|q, a, b{, c}`: the parser gives the pair as two operands.
        let single = 3 + usize::from(combine.is_some());
        let pair = ins.operands.len() == single + 1;
        let ops = self.operands(ins, if pair { single + 1 } else { single })?;
        let (dsts, srcs) = ops.split_at(1 + usize::from(pair));
        let a = self.src(f, ins, &srcs[0], cty)?;
        let b = self.src(f, ins, &srcs[1], cty)?;
        let (a, b) = if swap { (b, a) } else { (a, b) };
        let c = match srcs.get(2) {
            Some(c) => Some(self.src(f, ins, c, PRED)?),
            None => None,
        };
        if !pair && c.is_none() {
            let d = self.dst(f, ins, &dsts[0])?;
            self.binary(d, op, cty, a, b);
            return Ok(());
        }
        let t = self.scratch();
        self.binary(t, op, cty, a, b);
        // p = t BoolOp c; q = !t BoolOp c (PTX ISA, "setp").
        for (k, d) in dsts.iter().enumerate() {
            let v = if k == 0 {
                Operand::Reg(t)
            } else {
                let n = self.scratch();
                self.binary(n, BinOp::Xor, PRED, Operand::Reg(t), Operand::Imm(1));
                Operand::Reg(n)
            };
            if *d == Op::Sink {
                continue;
            }
            let d = self.dst(f, ins, d)?;
            match (combine, c) {
                (Some(bool_op), Some(c)) => self.binary(d, bool_op, PRED, v, c),
                _ => self.emit(InstrKind::Mov { dst: d, src: v }),
            }
        }
        Ok(())
    }

    pub(super) fn selp(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let t = one_type(ins, &q)?;
        let ty = int_of(t, true).ok_or_else(|| float_error(ins))?;
        let [d, a, b, c] = self.operands(ins, 4)? else {
            unreachable!()
        };
        if ty.bits == 32 && (self.is_address(f, a) || self.is_address(f, b)) {
            // Choosing between addresses (`p ? smem_a : smem_b`): keep them whole.
            let (a, b) = (self.promoted(f, ins, a)?, self.promoted(f, ins, b)?);
            let c = self.src(f, ins, c, PRED)?;
            let d = self.dst(f, ins, d)?;
            self.select(d, c, a, b, IntType::S64);
            return Ok(());
        }
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let c = self.src(f, ins, c, PRED)?;
        let d = self.dst(f, ins, d)?;
        self.select(d, c, a, b, ty);
        Ok(())
    }

    pub(super) fn cvt(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        if q.types.iter().any(|t| matches!(t, ScalarType::F(_))) {
            return Err(float_error(ins));
        }
        only(ins, &q, &[])?;
        let (to, from) = match q.types.as_slice() {
            [to, from] => (int_of(*to, false), int_of(*from, false)),
            _ => (None, None),
        };
        let (Some(to), Some(from)) = (to, from) else {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` needs two integer types (`cvt.u64.u32`)",
                    mnemonic(ins)
                ),
            ));
        };
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let address = self.is_address(f, a);
        let a = self.src(f, ins, a, from)?;
        let d = self.dst(f, ins, d)?;
        if address {
            // An address keeps its allocation number through width changes (module docs).
            self.emit(InstrKind::Mov { dst: d, src: a });
        } else {
            self.convert(d, a, from, to);
        }
        Ok(())
    }

    /// `cvta{.to}.space.size`: generic and state-space addresses are the same values here.
    pub(super) fn cvta(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, true);
        if q.space == Some(StateSpace::Param) {
            return Err(LowerError::at(
                ins,
                "`cvta.param` (the address of a kernel parameter) is not supported yet",
            ));
        }
        if q.sem.is_some() || q.scope.is_some() || q.vec.is_some() {
            return Err(LowerError::at(
                ins,
                format!("unexpected qualifiers on `{}`", mnemonic(ins)),
            ));
        }
        only(ins, &q, &["to"])?;
        let ty = arith_type(ins, &q, false)?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let a = match a {
            Op::Symbol(_) => self.src(f, ins, a, IntType::U64)?,
            _ => self.src(f, ins, a, ty)?,
        };
        let d = self.dst(f, ins, d)?;
        self.emit(InstrKind::Mov { dst: d, src: a });
        Ok(())
    }
}
