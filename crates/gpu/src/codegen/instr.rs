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
use crate::GenError;

/// What a memory instruction names besides its registers: the address, the memory order and
/// the scope.
#[derive(Clone, Copy)]
struct Access<'k> {
    addr: &'k Address,
    order: Order,
    scope: Scope,
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
                ..
            } => self.load(t, dst, Access { addr, order, scope }),
            InstrKind::Store {
                ref addr,
                value,
                order,
                scope,
                ..
            } => self.store(t, value, Access { addr, order, scope }),
            InstrKind::Rmw {
                dst,
                ref addr,
                kind,
                ty,
                order,
                scope,
            } => self.rmw(t, dst, kind, ty, Access { addr, order, scope }),
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
                match src {
                    Operand::Reg(r) => e!(self, "\tmov.b32 \t{d}, {};", Self::reg(t, r)),
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

    fn unsupported(&self, t: ThreadId, what: &str) -> GenError {
        let name = &self.p.threads[t.0 as usize].name;
        GenError::Unsupported(format!("{name}: {what} has no PTX form"))
    }

    fn load(&mut self, t: ThreadId, dst: RegId, acc: Access) -> Result<(), GenError> {
        let Access {
            addr,
            order,
            scope: s,
        } = acc;
        let a = self.addr(t, addr)?;
        let sp = self.space(named(addr)?);
        let d = Self::reg(t, dst);
        let s = scope(s);
        match order {
            Order::Weak => e!(self, "\tld.{sp}.u32 \t{d}, [{a}];"),
            Order::Volatile => e!(self, "\tld.volatile.{sp}.u32 \t{d}, [{a}];"),
            Order::Relaxed => e!(self, "\tld.relaxed.{s}.{sp}.u32 \t{d}, [{a}];"),
            Order::Acquire | Order::AcqRel => {
                e!(self, "\tld.acquire.{s}.{sp}.u32 \t{d}, [{a}];")
            }
            Order::SeqCst => {
                e!(self, "\tfence.sc.{s};");
                e!(self, "\tld.acquire.{s}.{sp}.u32 \t{d}, [{a}];");
            }
            Order::Release => return Err(self.unsupported(t, "a release load")),
        }
        Ok(())
    }

    fn store(&mut self, t: ThreadId, value: Operand, acc: Access) -> Result<(), GenError> {
        let Access {
            addr,
            order,
            scope: s,
        } = acc;
        let v = self.opnd(t, value, "%x12");
        let a = self.addr(t, addr)?;
        let sp = self.space(named(addr)?);
        let s = scope(s);
        match order {
            Order::Weak => e!(self, "\tst.{sp}.u32 \t[{a}], {v};"),
            Order::Volatile => e!(self, "\tst.volatile.{sp}.u32 \t[{a}], {v};"),
            Order::Relaxed => e!(self, "\tst.relaxed.{s}.{sp}.u32 \t[{a}], {v};"),
            Order::Release | Order::AcqRel => {
                e!(self, "\tst.release.{s}.{sp}.u32 \t[{a}], {v};")
            }
            Order::SeqCst => {
                e!(self, "\tfence.sc.{s};");
                e!(self, "\tst.relaxed.{s}.{sp}.u32 \t[{a}], {v};");
            }
            Order::Acquire => return Err(self.unsupported(t, "an acquire store")),
        }
        Ok(())
    }

    /// `atom` (or `red` where no result is kept and PTX has one) with the order's semantics.
    fn rmw(
        &mut self,
        t: ThreadId,
        dst: Option<RegId>,
        kind: RmwKind,
        ty: IntType,
        acc: Access,
    ) -> Result<(), GenError> {
        let Access {
            addr,
            order,
            scope: s,
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
        let d = dst.map_or_else(|| "%x15".to_string(), |r| Self::reg(t, r));
        match kind {
            RmwKind::Cas { expected, new } => {
                let ex = self.opnd(t, expected, "%x12");
                let nw = self.opnd(t, new, "%x13");
                let a = self.addr(t, addr)?;
                e!(
                    self,
                    "\tatom.{sem}.{s}.{sp}.cas.b32 \t{d}, [{a}], {ex}, {nw};"
                );
            }
            RmwKind::Op(op, v) => {
                let mut v = self.opnd(t, v, "%x12");
                let (name, ty) = match op {
                    RmwOp::Add => ("add", "u32"),
                    RmwOp::Sub => {
                        // PTX has no atom.sub: add the negated operand.
                        e!(self, "\tneg.s32 \t%x14, {v};");
                        v = "%x14".into();
                        ("add", "u32")
                    }
                    RmwOp::Inc => ("inc", "u32"),
                    RmwOp::Dec => ("dec", "u32"),
                    RmwOp::Exch => ("exch", "b32"),
                    RmwOp::And => ("and", "b32"),
                    RmwOp::Or => ("or", "b32"),
                    RmwOp::Xor => ("xor", "b32"),
                    // The comparison follows the type: `.s32` or `.u32`.
                    RmwOp::Min => ("min", int32(ty)),
                    RmwOp::Max => ("max", int32(ty)),
                };
                let a = self.addr(t, addr)?;
                // `red` exists only for relaxed and release orders and not for exch;
                // otherwise an `atom` into a scratch register does the same.
                let red_ok =
                    dst.is_none() && matches!(sem, "relaxed" | "release") && op != RmwOp::Exch;
                if red_ok {
                    e!(self, "\tred.{sem}.{s}.{sp}.{name}.{ty} \t[{a}], {v};");
                } else {
                    e!(self, "\tatom.{sem}.{s}.{sp}.{name}.{ty} \t{d}, [{a}], {v};");
                }
            }
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
                } = self.l.unit
                {
                    e!(self, "\tand.pred \t%p2, %p2, %p7;");
                }
                e!(self, "\tbarrier.red.popc.u32 \t%x14, {id}, {threads}, %p2;");
                let d = Self::reg(t, dst);
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
        // `xor r, x, x`, `sub r, x, x`, `and r, x, 0`, `mul r, x, 0` are how tests write
        // a dependency that is always 0. ptxas would fold them to a constant and drop the
        // dependency; `and` with a kernel parameter that is 0 at run time keeps it.
        let zero_of = match (op, a, b) {
            (BinOp::Xor | BinOp::Sub, Operand::Reg(x), Operand::Reg(y)) if x == y => Some(x),
            (BinOp::And | BinOp::Mul, Operand::Reg(x), Operand::Imm(0))
            | (BinOp::And | BinOp::Mul, Operand::Imm(0), Operand::Reg(x)) => Some(x),
            _ => None,
        };
        if let Some(x) = zero_of {
            e!(
                self,
                "\tand.b32 \t{}, {}, %zero;",
                Self::reg(t, dst),
                Self::reg(t, x)
            );
            return Ok(());
        }
        let a = self.opnd(t, a, "%x12");
        // Layout::new refuses arithmetic of any width but 32 bits. Where signedness
        // matters (division, remainder, right shift, ordered comparison) the instruction
        // takes it from `ty`; the others compute the same word either way and keep
        // `ty`'s spelling. A shift amount is always a `.u32` operand.
        let sign = int32(ty);
        let b = match b {
            Operand::Reg(r) => Self::reg(t, r),
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
                let cmp = match op {
                    BinOp::Eq => "eq",
                    BinOp::Ne => "ne",
                    BinOp::Lt => "lt",
                    _ => "le",
                };
                e!(self, "\tsetp.{cmp}.{sign} \t%p2, {a}, {b};");
                e!(self, "\tselp.s32 \t{}, 1, 0, %p2;", Self::reg(t, dst));
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
                e!(self, "\t{ins} \t{}, {a};", Self::reg(t, dst));
                return Ok(());
            }
            // Layout::new refuses floating-point computation in device code.
            BinOp::Float(..) | BinOp::Cvt { .. } => {
                return Err(self.unsupported(t, "floating-point arithmetic"));
            }
            BinOp::Trap => return Err(self.unsupported(t, "a trap")),
            BinOp::Bound => return Err(self.unsupported(t, "an array index check")),
        };
        e!(self, "\t{ins} \t{}, {a}, {b};", Self::reg(t, dst));
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
                match (a, b) {
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
