//! One test instruction as PTX: [`Gen::instr`] picks the method of the instruction's family
//! (loads, stores, read-modify-writes, fences, barriers, integer arithmetic, branches); warp
//! collectives are [`Gen::collective`].

use std::fmt::Write;

use scopecheck_ir::{
    Address, BarrierKind, BarrierRedOp, BinOp, BranchCond, FenceOrder, InstrKind, IntType, Operand,
    Order, RegId, RmwKind, RmwOp, Scope, ThreadId,
};

use super::{imm, imm_in, int32, named, scope, Gen, STATUS_CUT};
use crate::layout::{meets_barriers, Unit, WARP};
use crate::width::{fits32, register_holds};
use crate::GenError;

/// What a memory instruction names besides its registers: the address, the memory order and
/// the scope.
#[derive(Clone, Copy)]
struct Access<'k> {
    addr: &'k Address,
    order: Order,
    scope: Scope,
    /// The type of the access: 32 or 64 bits.
    ty: IntType,
}

impl Gen<'_> {
    /// Instruction `idx` of the `n` of thread `t`.
    pub(super) fn instr(
        &mut self,
        t: ThreadId,
        idx: usize,
        n: usize,
        k: &InstrKind,
    ) -> Result<(), GenError> {
        match *k {
            InstrKind::Load {
                dst,
                ref addr,
                order,
                scope,
                ty,
            } => self.load(
                t,
                dst,
                Access {
                    addr,
                    order,
                    scope,
                    ty,
                },
            ),
            InstrKind::Store {
                ref addr,
                value,
                order,
                scope,
                ty,
            } => self.store(
                t,
                value,
                Access {
                    addr,
                    order,
                    scope,
                    ty,
                },
            ),
            InstrKind::Rmw {
                dst,
                ref addr,
                kind,
                ty,
                order,
                scope,
            } => self.rmw(
                t,
                dst,
                kind,
                Access {
                    addr,
                    order,
                    scope,
                    ty,
                },
            ),
            InstrKind::Fence { order, scope, .. } => {
                self.fence(order, scope);
                Ok(())
            }
            InstrKind::Warp {
                op,
                mask,
                value,
                dst,
                pred_dst,
            } => {
                self.collective(t, op, mask, value, dst, pred_dst);
                Ok(())
            }
            InstrKind::Barrier { kind, .. } => {
                self.barrier(t, k, kind);
                Ok(())
            }
            InstrKind::Mov { dst, src } => {
                let d = Self::reg(t, dst);
                // A move's two sides share a width (width::wide_registers).
                let w = if self.is_wide(t, dst) { 64 } else { 32 };
                match src {
                    Operand::Reg(r) => e!(self, "\tmov.b{w} \t{d}, {};", Self::reg(t, r)),
                    Operand::Imm(v) if w == 64 => e!(self, "\tmov.b64 \t{d}, {v};"),
                    Operand::Imm(v) => e!(self, "\tmov.b32 \t{d}, {};", imm(v)),
                }
                Ok(())
            }
            InstrKind::Fma { .. } => Err(self.unsupported(t, "floating-point arithmetic")),
            InstrKind::Binary { ty, .. } if ty.float => {
                Err(self.unsupported(t, "floating-point arithmetic"))
            }
            InstrKind::Binary { dst, op, ty, a, b } => self.binary(t, dst, op, ty, (a, b)),
            InstrKind::Branch { cond, target } => {
                self.branch(t, idx, n, cond, target);
                Ok(())
            }
        }
    }

    /// The operand as a 64-bit register: a wide register, or an immediate moved into `tmp`.
    fn opnd64(&mut self, t: ThreadId, op: Operand, tmp: &str) -> String {
        match op {
            Operand::Reg(r) if self.is_wide(t, r) => Self::reg(t, r),
            // width::wide_registers makes every register a 64-bit instruction reads wide; a
            // narrow one would be extended as the values it holds say.
            Operand::Reg(r) => {
                let holds = register_holds(&self.p.threads[t.0 as usize])
                    .get(r.0 as usize)
                    .copied()
                    .unwrap_or_default();
                let cvt = if holds.high && !holds.negative {
                    "cvt.u64.u32"
                } else {
                    "cvt.s64.s32"
                };
                e!(self, "\t{cvt} \t{tmp}, {};", Self::reg(t, r));
                tmp.to_string()
            }
            Operand::Imm(v) => {
                e!(self, "\tmov.b64 \t{tmp}, {v};");
                tmp.to_string()
            }
        }
    }

    /// Where a 32-bit instruction writes register `r`: the register, or `%xw` when it is wide
    /// (then [`Gen::widen`] extends the word into it).
    fn dst32(&self, t: ThreadId, r: RegId) -> String {
        if self.is_wide(t, r) {
            "%xw".into()
        } else {
            Self::reg(t, r)
        }
    }

    /// After a 32-bit instruction of type `ty` wrote [`Gen::dst32`] of `r`: a wide register
    /// gets the IR's value, the word sign- or zero-extended as `ty` is signed or not.
    fn widen(&mut self, t: ThreadId, r: RegId, ty: IntType) {
        if self.is_wide(t, r) {
            let cvt = if ty.signed {
                "cvt.s64.s32"
            } else {
                "cvt.u64.u32"
            };
            e!(self, "\t{cvt} \t{}, %xw;", Self::reg(t, r));
        }
    }

    fn unsupported(&self, t: ThreadId, what: &str) -> GenError {
        let name = &self.p.threads[t.0 as usize].name;
        GenError::Unsupported(format!("{name}: {what} has no PTX form"))
    }

    fn load(&mut self, t: ThreadId, dst: RegId, acc: Access) -> Result<(), GenError> {
        let Access {
            addr,
            order,
            scope: s,
            ty,
        } = acc;
        let a = self.addr(t, addr)?;
        let sp = self.space(named(addr)?);
        // A 64-bit load's destination is wide (width::wide_registers).
        let (d, w) = if ty.bits == 64 {
            (Self::reg(t, dst), "u64")
        } else {
            (self.dst32(t, dst), "u32")
        };
        let s = scope(s);
        match order {
            Order::Weak => e!(self, "\tld.{sp}.{w} \t{d}, [{a}];"),
            Order::Volatile => e!(self, "\tld.volatile.{sp}.{w} \t{d}, [{a}];"),
            Order::Relaxed => e!(self, "\tld.relaxed.{s}.{sp}.{w} \t{d}, [{a}];"),
            Order::Acquire | Order::AcqRel => {
                e!(self, "\tld.acquire.{s}.{sp}.{w} \t{d}, [{a}];")
            }
            Order::SeqCst => {
                e!(self, "\tfence.sc.{s};");
                e!(self, "\tld.acquire.{s}.{sp}.{w} \t{d}, [{a}];");
            }
            Order::Release => return Err(self.unsupported(t, "a release load")),
        }
        if ty.bits != 64 {
            self.widen(t, dst, ty);
        }
        Ok(())
    }

    fn store(&mut self, t: ThreadId, value: Operand, acc: Access) -> Result<(), GenError> {
        let Access {
            addr,
            order,
            scope: s,
            ty,
        } = acc;
        let (v, w) = if ty.bits == 64 {
            (self.opnd64(t, value, "%d6"), "u64")
        } else {
            (self.opnd(t, value, "%x12"), "u32")
        };
        let a = self.addr(t, addr)?;
        let sp = self.space(named(addr)?);
        let s = scope(s);
        match order {
            Order::Weak => e!(self, "\tst.{sp}.{w} \t[{a}], {v};"),
            Order::Volatile => e!(self, "\tst.volatile.{sp}.{w} \t[{a}], {v};"),
            Order::Relaxed => e!(self, "\tst.relaxed.{s}.{sp}.{w} \t[{a}], {v};"),
            Order::Release | Order::AcqRel => {
                e!(self, "\tst.release.{s}.{sp}.{w} \t[{a}], {v};")
            }
            Order::SeqCst => {
                e!(self, "\tfence.sc.{s};");
                e!(self, "\tst.relaxed.{s}.{sp}.{w} \t[{a}], {v};");
            }
            Order::Acquire => return Err(self.unsupported(t, "an acquire store")),
        }
        Ok(())
    }

    /// `atom` (or `red` where no result is kept and PTX has one) with the order's semantics,
    /// on 32 or 64 bits as the access's type says.
    fn rmw(
        &mut self,
        t: ThreadId,
        dst: Option<RegId>,
        kind: RmwKind,
        acc: Access,
    ) -> Result<(), GenError> {
        let Access {
            addr,
            order,
            scope: s,
            ty,
        } = acc;
        let s = scope(s);
        let sem = match order {
            Order::Weak | Order::Volatile | Order::Relaxed => "relaxed",
            Order::Acquire => "acquire",
            Order::Release => "release",
            Order::AcqRel => "acq_rel",
            Order::SeqCst => {
                e!(self, "\tfence.sc.{s};");
                "acq_rel"
            }
        };
        let sp = self.space(named(addr)?);
        let wide = ty.bits == 64;
        // A 64-bit RMW's destination is wide (width::wide_registers); a 32-bit one's may be.
        let d = match dst {
            Some(r) if wide => Self::reg(t, r),
            Some(r) => self.dst32(t, r),
            None if wide => "%d4".to_string(),
            None => "%x15".to_string(),
        };
        let (b, u, sg) = if wide {
            ("b64", "u64", if ty.signed { "s64" } else { "u64" })
        } else {
            ("b32", "u32", int32(ty))
        };
        let operand = |g: &mut Self, op: Operand, tmp32: &str, tmp64: &str| {
            if wide {
                g.opnd64(t, op, tmp64)
            } else {
                g.opnd(t, op, tmp32)
            }
        };
        match kind {
            RmwKind::Cas { expected, new } => {
                let ex = operand(self, expected, "%x12", "%d5");
                let nw = operand(self, new, "%x13", "%d6");
                let a = self.addr(t, addr)?;
                e!(
                    self,
                    "\tatom.{sem}.{s}.{sp}.cas.{b} \t{d}, [{a}], {ex}, {nw};"
                );
            }
            RmwKind::Op(op, v) => {
                let mut v = operand(self, v, "%x12", "%d5");
                let (name, ty_name) = match op {
                    RmwOp::Add => ("add", u),
                    RmwOp::Sub => {
                        // PTX has no atom.sub: add the negated operand.
                        if wide {
                            e!(self, "\tneg.s64 \t%d7, {v};");
                            v = "%d7".into();
                        } else {
                            e!(self, "\tneg.s32 \t%x14, {v};");
                            v = "%x14".into();
                        }
                        ("add", u)
                    }
                    // Layout::new refuses them on 64 bits, which PTX does not have.
                    RmwOp::Inc => ("inc", u),
                    RmwOp::Dec => ("dec", u),
                    RmwOp::Exch => ("exch", b),
                    RmwOp::And => ("and", b),
                    RmwOp::Or => ("or", b),
                    RmwOp::Xor => ("xor", b),
                    // The comparison follows the type: signed or unsigned.
                    RmwOp::Min => ("min", sg),
                    RmwOp::Max => ("max", sg),
                };
                let a = self.addr(t, addr)?;
                // `red` exists only for relaxed and release orders and not for exch;
                // otherwise an `atom` into a scratch register does the same.
                let red_ok =
                    dst.is_none() && matches!(sem, "relaxed" | "release") && op != RmwOp::Exch;
                if red_ok {
                    e!(self, "\tred.{sem}.{s}.{sp}.{name}.{ty_name} \t[{a}], {v};");
                } else {
                    e!(
                        self,
                        "\tatom.{sem}.{s}.{sp}.{name}.{ty_name} \t{d}, [{a}], {v};"
                    );
                }
            }
        }
        if let (Some(r), false) = (dst, wide) {
            self.widen(t, r, ty);
        }
        Ok(())
    }

    fn fence(&mut self, order: FenceOrder, s: Scope) {
        let s = scope(s);
        match order {
            FenceOrder::Sc => e!(self, "\tfence.sc.{s};"),
            // PTX has only the acq_rel fence for the weaker orders; it is stronger than
            // either, which only removes behaviours from what the hardware may show.
            FenceOrder::Acquire | FenceOrder::Release | FenceOrder::AcqRel => {
                e!(self, "\tfence.acq_rel.{s};")
            }
        }
    }

    /// `barrier.sync`, `barrier.arrive` or `barrier.red` (`k` is the instruction, `kind` its
    /// barrier kind).
    fn barrier(&mut self, t: ThreadId, k: &InstrKind, kind: BarrierKind) {
        let (id, count) = crate::layout::barrier_immediates(k)
            .expect("layout refuses barriers with register operands");
        let group = self
            .l
            .groups
            .iter()
            .find(|g| g.roles.contains(&t))
            .map_or(1, |g| g.roles.len() as u32);
        // Barriers count threads; each role is a whole warp.
        let threads = count.unwrap_or(group) * WARP;
        match kind {
            BarrierKind::Sync => e!(self, "\tbarrier.sync \t{id}, {threads};"),
            BarrierKind::Arrive => e!(self, "\tbarrier.arrive \t{id}, {threads};"),
            BarrierKind::Red { op, dst, pred } => {
                let pv = self.opnd(t, pred, "%x12");
                let cmp = if op == BarrierRedOp::And { "eq" } else { "ne" };
                e!(self, "\tsetp.{cmp}.s32 \t%p2, {pv}, 0;");
                if let Unit::Warp {
                    lane_instances: false,
                    ..
                } = self.l.unit
                {
                    e!(self, "\tand.pred \t%p2, %p2, %p7;");
                }
                e!(self, "\tbarrier.red.popc.u32 \t%x14, {id}, {threads}, %p2;");
                let d = self.dst32(t, dst);
                match op {
                    BarrierRedOp::Popc => e!(self, "\tmov.b32 \t{d}, %x14;"),
                    BarrierRedOp::Or => {
                        e!(self, "\tsetp.ne.u32 \t%p3, %x14, 0;");
                        e!(self, "\tselp.u32 \t{d}, 1, 0, %p3;");
                    }
                    BarrierRedOp::And => {
                        e!(self, "\tsetp.eq.u32 \t%p3, %x14, 0;");
                        e!(self, "\tselp.u32 \t{d}, 1, 0, %p3;");
                    }
                }
                self.widen(t, dst, IntType::U32);
            }
        }
    }

    /// Integer arithmetic, comparisons and bit operations on 32-bit words.
    fn binary(
        &mut self,
        t: ThreadId,
        dst: RegId,
        op: BinOp,
        ty: IntType,
        (a, b): (Operand, Operand),
    ) -> Result<(), GenError> {
        if ty.bits == 64 {
            return self.binary64(t, dst, op, ty, (a, b));
        }
        let d = self.dst32(t, dst);
        // `xor r, x, x`, `sub r, x, x`, `and r, x, 0`, `mul r, x, 0` are how tests write
        // a dependency that is always 0. ptxas would fold them to a constant and drop the
        // dependency; `and` with a kernel parameter that is 0 at run time keeps it.
        if let Some(x) = zero_of(op, a, b) {
            let x = self.opnd(t, Operand::Reg(x), "%x12");
            e!(self, "\tand.b32 \t{d}, {x}, %zero;");
            self.widen(t, dst, ty);
            return Ok(());
        }
        let a = self.opnd(t, a, "%x12");
        // Layout::new refuses arithmetic of any width but 32 and 64 bits. Where signedness
        // matters (division, remainder, right shift, ordered comparison) the instruction
        // takes it from `ty`; the others compute the same word either way and keep
        // `ty`'s spelling. A shift amount is always a `.u32` operand.
        let sign = int32(ty);
        let b = match b {
            Operand::Reg(_) => self.opnd(t, b, "%x13"),
            Operand::Imm(v) if matches!(op, BinOp::Shl | BinOp::Shr) => imm_in(v, IntType::U32),
            Operand::Imm(v) => imm_in(v, ty),
        };
        let ins = match op {
            BinOp::Add => format!("add.{sign}"),
            BinOp::Sub => format!("sub.{sign}"),
            BinOp::Mul => format!("mul.lo.{sign}"),
            BinOp::Div => format!("div.{sign}"),
            BinOp::Rem => format!("rem.{sign}"),
            BinOp::Shl => "shl.b32".into(),
            // Arithmetic (sign-filling) on a signed type, logical on an unsigned one.
            BinOp::Shr => format!("shr.{sign}"),
            BinOp::And => "and.b32".into(),
            BinOp::Or => "or.b32".into(),
            BinOp::Xor => "xor.b32".into(),
            // Comparisons give 1 or 0: set a predicate, then select.
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le => {
                e!(self, "\tsetp.{}.{sign} \t%p2, {a}, {b};", cmp_name(op));
                e!(self, "\tselp.s32 \t{d}, 1, 0, %p2;");
                self.widen(t, dst, ty);
                return Ok(());
            }
            // Bit operations of `a` alone.
            BinOp::Popc | BinOp::Clz | BinOp::Brev | BinOp::Bfind | BinOp::BfindShift => {
                let ins = match op {
                    BinOp::Popc => "popc.b32".to_string(),
                    BinOp::Clz => "clz.b32".into(),
                    BinOp::Brev => "brev.b32".into(),
                    BinOp::Bfind => format!("bfind.{sign}"),
                    _ => format!("bfind.shiftamt.{sign}"),
                };
                e!(self, "\t{ins} \t{d}, {a};");
                self.widen(t, dst, ty);
                return Ok(());
            }
            // Layout::new refuses floating-point computation in device code.
            BinOp::Float(..) | BinOp::Cvt { .. } => {
                return Err(self.unsupported(t, "floating-point arithmetic"));
            }
            BinOp::Trap => return Err(self.unsupported(t, "a trap")),
            BinOp::Bound => return Err(self.unsupported(t, "an array index check")),
        };
        e!(self, "\t{ins} \t{d}, {a}, {b};");
        self.widen(t, dst, ty);
        Ok(())
    }

    /// Integer arithmetic, comparisons and bit operations on 64-bit values: the operands are
    /// wide registers or immediates (width::wide_registers), as is the destination of all but
    /// a comparison and the counting bit operations, whose results are 32-bit words.
    fn binary64(
        &mut self,
        t: ThreadId,
        dst: RegId,
        op: BinOp,
        ty: IntType,
        (a, b): (Operand, Operand),
    ) -> Result<(), GenError> {
        let sign = if ty.signed { "s64" } else { "u64" };
        if let Some(x) = zero_of(op, a, b) {
            let x = self.opnd64(t, Operand::Reg(x), "%d5");
            e!(self, "\tcvt.u64.u32 \t%d6, %zero;");
            e!(self, "\tand.b64 \t{}, {x}, %d6;", Self::reg(t, dst));
            return Ok(());
        }
        let a = self.opnd64(t, a, "%d5");
        let b = match op {
            BinOp::Shl | BinOp::Shr => match b {
                Operand::Imm(v) => imm_in(v, IntType::U32),
                Operand::Reg(_) => self.opnd(t, b, "%x13"),
            },
            _ => self.opnd64(t, b, "%d6"),
        };
        let ins = match op {
            BinOp::Add => format!("add.{sign}"),
            BinOp::Sub => format!("sub.{sign}"),
            BinOp::Mul => format!("mul.lo.{sign}"),
            BinOp::Div => format!("div.{sign}"),
            BinOp::Rem => format!("rem.{sign}"),
            BinOp::Shl => "shl.b64".into(),
            BinOp::Shr => format!("shr.{sign}"),
            BinOp::And => "and.b64".into(),
            BinOp::Or => "or.b64".into(),
            BinOp::Xor => "xor.b64".into(),
            BinOp::Brev => "brev.b64".into(),
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le => {
                let d = self.dst32(t, dst);
                e!(self, "\tsetp.{}.{sign} \t%p2, {a}, {b};", cmp_name(op));
                e!(self, "\tselp.s32 \t{d}, 1, 0, %p2;");
                self.widen(t, dst, IntType::U32);
                return Ok(());
            }
            // A count of bits is a 32-bit word, widened into the wide destination.
            BinOp::Popc | BinOp::Clz => {
                let name = if op == BinOp::Popc { "popc" } else { "clz" };
                let d = self.dst32(t, dst);
                e!(self, "\t{name}.b64 \t{d}, {a};");
                self.widen(t, dst, IntType::U32);
                return Ok(());
            }
            BinOp::Bfind | BinOp::BfindShift => {
                return Err(self.unsupported(t, "a 64-bit bfind"));
            }
            BinOp::Float(..) | BinOp::Cvt { .. } => {
                return Err(self.unsupported(t, "floating-point arithmetic"));
            }
            BinOp::Trap => return Err(self.unsupported(t, "a trap")),
            BinOp::Bound => return Err(self.unsupported(t, "an array index check")),
        };
        if op == BinOp::Brev {
            e!(self, "\t{ins} \t{}, {a};", Self::reg(t, dst));
        } else {
            e!(self, "\t{ins} \t{}, {a}, {b};", Self::reg(t, dst));
        }
        Ok(())
    }

    /// A branch; a backward one counts the iterations and gives up past the loop cap.
    fn branch(&mut self, t: ThreadId, idx: usize, n: usize, cond: BranchCond, target: usize) {
        let p = self.p;
        let th = &p.threads[t.0 as usize];
        let dest = Self::label(t, target, n);
        let backward = target <= idx;
        // The predicate under which the branch is taken, or None for always.
        let pred = match cond {
            BranchCond::Always => None,
            BranchCond::Eq(a, b) | BranchCond::Ne(a, b) => {
                let cmp = if matches!(cond, BranchCond::Eq(..)) {
                    "eq"
                } else {
                    "ne"
                };
                let wide = |o: Operand| match o {
                    Operand::Reg(r) => self.is_wide(t, r),
                    Operand::Imm(v) => !fits32(v),
                };
                match (a, b) {
                    // Two values compared whole: 64-bit registers (width::wide_registers makes
                    // both sides wide) or a 64-bit immediate.
                    _ if !matches!((a, b), (Operand::Imm(_), Operand::Imm(_)))
                        && (wide(a) || wide(b)) =>
                    {
                        let x = self.opnd64(t, a, "%d5");
                        let y = self.opnd64(t, b, "%d6");
                        e!(self, "\tsetp.{cmp}.s64 \t%p0, {x}, {y};");
                        Some("%p0")
                    }
                    (Operand::Imm(x), Operand::Imm(y)) => {
                        if (x == y) == (cmp == "eq") {
                            None
                        } else {
                            e!(self, "\t// never taken");
                            return;
                        }
                    }
                    (Operand::Imm(x), Operand::Reg(r)) | (Operand::Reg(r), Operand::Imm(x)) => {
                        e!(
                            self,
                            "\tsetp.{cmp}.s32 \t%p0, {}, {};",
                            Self::reg(t, r),
                            imm(x)
                        );
                        Some("%p0")
                    }
                    (Operand::Reg(r), Operand::Reg(q)) => {
                        e!(
                            self,
                            "\tsetp.{cmp}.s32 \t%p0, {}, {};",
                            Self::reg(t, r),
                            Self::reg(t, q)
                        );
                        Some("%p0")
                    }
                }
            }
        };
        if let (Some(p), Unit::Warp { uniform: true, .. }) = (pred, self.l.unit) {
            // The uniform warp layout (layout::divergent_barriers): every lane takes lane 0's
            // way, so the role warp meets its barriers whole.
            e!(self, "\tselp.u32 \t%x14, 1, 0, {p};");
            e!(self, "\tshfl.sync.idx.b32 \t%x14, %x14, 0, 31, 0xffffffff;");
            e!(self, "\tsetp.ne.u32 \t{p}, %x14, 0;");
        }
        if backward {
            let skip = format!("R{}_N{idx}", t.0);
            if let Some(p) = pred {
                e!(self, "\t@!{p} bra \t{skip};");
            }
            e!(self, "\tadd.u32 \t%loops, %loops, 1;");
            e!(self, "\tsetp.gt.u32 \t%p1, %loops, {};", self.opts.loop_cap);
            let barriers = meets_barriers(th);
            if barriers {
                // Cut, it leaves the loop here and still meets every barrier after
                // it (layout::barrier_sequence), so its CTA cannot hang.
                e!(self, "\t@%p1 mov.u32 \t%status, {STATUS_CUT};");
                e!(self, "\t@%p1 bra \t{skip};");
            } else {
                e!(self, "\t@%p1 bra \tR{}_CUT;", t.0);
            }
            e!(self, "\tbra \t{dest};");
            if pred.is_some() || barriers {
                e!(self, "{skip}:");
            }
        } else {
            match pred {
                Some(p) => e!(self, "\t@{p} bra \t{dest};"),
                None => e!(self, "\tbra \t{dest};"),
            }
        }
    }
}

/// The register of `op a, b` when it always computes 0 from it: `xor r, x, x`, `sub r, x, x`,
/// `and r, x, 0`, `mul r, x, 0`, how tests write a dependency that is always 0.
fn zero_of(op: BinOp, a: Operand, b: Operand) -> Option<RegId> {
    match (op, a, b) {
        (BinOp::Xor | BinOp::Sub, Operand::Reg(x), Operand::Reg(y)) if x == y => Some(x),
        (BinOp::And | BinOp::Mul, Operand::Reg(x), Operand::Imm(0))
        | (BinOp::And | BinOp::Mul, Operand::Imm(0), Operand::Reg(x)) => Some(x),
        _ => None,
    }
}

/// The `setp` comparison of a comparing `op`.
fn cmp_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "eq",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        _ => "le",
    }
}
