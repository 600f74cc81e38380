//! CUDA's warp intrinsics: `__syncwarp`, the `__shfl*_sync` shuffles, the `__ballot_sync` /
//! `__any_sync` / `__all_sync` / `__uni_sync` votes (each a warp collective of the IR:
//! [`InstrKind::Warp`]), and the bit intrinsics warp code computes masks with (`__popc`,
//! `__clz`, `__ffs`, `__brev` and their `ll` forms).
//!
//! The shuffles take `width` as CUDA's headers do: it becomes the ISA's `c` operand, the
//! segment mask `(32 - width) << 8` with the clamp 31 (0 for `__shfl_up_sync`).

use scopecheck_ir::{BinOp, InstrKind, IntType, Operand, RegId, ShflMode, VoteOp, WarpOp};
use tree_sitter::Node;

use super::{err, Lw, Val, R};

impl<'t> Lw<'_, '_, 't> {
    /// A warp or bit intrinsic, if `name` is one; `None` otherwise.
    pub(super) fn warp_call(
        &mut self,
        name: &str,
        args: &[Node<'t>],
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Option<Operand>> {
        // `__shfl_down_sync` is the warp's `shfl_down`, `__ballot_sync` its `ballot`.
        let base = name
            .strip_prefix("__")
            .and_then(|n| n.strip_suffix("_sync"))
            .unwrap_or("");
        let (shfl, vote) = (shfl_mode(base), vote_op(base));
        if let Some(mode) = shfl {
            self.device_only(name, e)?;
            let what = if mode == ShflMode::Idx {
                "mask, value, source lane[, width]"
            } else {
                "mask, value, delta[, width]"
            };
            self.arity(name, args, (3, 4), what, e)?;
            let mask = self.mask(args[0])?;
            let v = self.val(args[1], None)?;
            let lane = self.value(args[2], None)?;
            let clamp = match args.get(3) {
                None => Operand::Imm(if mode == ShflMode::Up { 0 } else { 31 }),
                Some(&w) => {
                    let w = self.val(w, None)?;
                    let w = self.convert(w, IntType::S32, None, e);
                    let seg = self.binary(BinOp::Sub, Val::imm(32, IntType::S32), w, None, e);
                    let seg = self.binary(BinOp::Shl, seg, Val::imm(8, IntType::S32), None, e);
                    let low = if mode == ShflMode::Up { 0 } else { 31 };
                    self.binary(BinOp::Or, seg, Val::imm(low, IntType::S32), None, e)
                        .op
                }
            };
            let dst = self.shfl(WarpOp::Shfl { mode, lane, clamp }, mask, v, hint, e);
            return Ok(Some(Operand::Reg(dst)));
        }
        if let Some(op) = vote {
            self.device_only(name, e)?;
            self.arity(name, args, (2, 2), "mask, predicate", e)?;
            let mask = self.mask(args[0])?;
            let dst = self.vote(op, mask, args[1], hint, e)?;
            return Ok(Some(Operand::Reg(dst)));
        }
        match name {
            "__syncwarp" => {
                self.device_only(name, e)?;
                self.arity(name, args, (0, 1), "[mask]", e)?;
                let mask = match args.first() {
                    Some(&m) => self.mask(m)?,
                    None => Operand::Imm(0xffff_ffff),
                };
                self.emit(
                    InstrKind::Warp {
                        op: WarpOp::Sync,
                        mask,
                        value: Operand::Imm(0),
                        dst: None,
                        pred_dst: None,
                    },
                    e,
                );
                Ok(Some(Operand::Imm(0)))
            }
            "__activemask" => {
                self.device_only(name, e)?;
                self.arity(name, args, (0, 0), "no arguments", e)?;
                let dst = self.build.dst_for(hint, IntType::U32);
                self.emit(
                    InstrKind::Warp {
                        op: WarpOp::ActiveMask,
                        mask: Operand::Imm(0),
                        value: Operand::Imm(0),
                        dst: Some(dst),
                        pred_dst: None,
                    },
                    e,
                );
                Ok(Some(Operand::Reg(dst)))
            }
            "__popc" | "__popcll" | "__clz" | "__clzll" | "__brev" | "__brevll" | "__ffs"
            | "__ffsll" => {
                self.arity(name, args, (1, 1), "one integer", e)?;
                let wide = name.ends_with("ll");
                let ty = if wide { IntType::U64 } else { IntType::U32 };
                let x = self.val(args[0], None)?;
                let x = self.convert(x, ty, None, e);
                let zero = Val::imm(0, ty);
                let bits = |lw: &mut Self, op, v| lw.binary(op, v, zero, None, e);
                let v = match name.trim_end_matches("ll") {
                    "__popc" => bits(self, BinOp::Popc, x),
                    "__clz" => bits(self, BinOp::Clz, x),
                    "__brev" => return Ok(Some(bits(self, BinOp::Brev, x).op)),
                    // The position of the lowest set bit, from 1; 0 when there is none: the
                    // lowest set bit alone, minus one, has that many bits below it set.
                    _ => {
                        let neg = self.binary(BinOp::Sub, zero, x, None, e);
                        let low = self.binary(BinOp::And, x, neg, None, e);
                        let below = self.binary(BinOp::Sub, low, Val::imm(1, ty), None, e);
                        let n = bits(self, BinOp::Popc, below);
                        let n = self.binary(BinOp::Add, n, Val::imm(1, ty), None, e);
                        let some = self.binary(BinOp::Ne, x, zero, None, e);
                        let some = self.convert(some, ty, None, e);
                        self.binary(BinOp::Mul, n, some, None, e)
                    }
                };
                Ok(Some(self.convert(v, IntType::S32, hint, e).op))
            }
            _ => Ok(None),
        }
    }

    /// A member function of a `thread_block_tile<n>` (cooperative groups): the tile is the `n`
    /// consecutive lanes of the thread's warp that hold it (`thread` is its linear index in
    /// the block). `sync()` is `__syncwarp` over those lanes; `shfl*` are the warp shuffles
    /// with width `n`; `any` / `all` / `ballot` the votes over the tile (ballot's bits counted
    /// from the tile's first lane).
    pub(super) fn tile_method(
        &mut self,
        n: u32,
        thread: i64,
        block_size: i64,
        method: &str,
        e: Node<'t>,
    ) -> R<Operand> {
        let n64 = i64::from(n);
        let lane = thread % 32;
        let first = lane - lane % n64;
        let bits: i64 = if n == 32 {
            0xffff_ffff
        } else {
            ((1i64 << n) - 1) << first
        };
        let mask = Operand::Imm(bits);
        let args = self.args(e)?;
        if let Some(mode) = shfl_mode(method) {
            self.device_only(method, e)?;
            self.arity(method, &args, (2, 2), "value, lane or delta", e)?;
            let v = self.val(args[0], None)?;
            let src = self.value(args[1], None)?;
            // The segment of width n: the ISA's c operand, as __shfl*_sync(mask, v, x, n).
            let low = if mode == ShflMode::Up { 0 } else { 31 };
            let clamp = Operand::Imm(((32 - n64) << 8) | low);
            let op = WarpOp::Shfl {
                mode,
                lane: src,
                clamp,
            };
            return Ok(Operand::Reg(self.shfl(op, mask, v, None, e)));
        }
        // A tile has no `uni`.
        if let Some(op) = vote_op(method).filter(|&o| o != VoteOp::Uni) {
            self.device_only(method, e)?;
            self.arity(method, &args, (1, 1), "predicate", e)?;
            let dst = self.vote(op, mask, args[0], None, e)?;
            if op != VoteOp::Ballot || first == 0 {
                return Ok(Operand::Reg(dst));
            }
            let ty = IntType::U32;
            let v = Val {
                op: Operand::Reg(dst),
                ty,
            };
            let shifted = self.binary(BinOp::Shr, v, Val::imm(first, ty), None, e);
            return Ok(shifted.op);
        }
        match method {
            "sync" => {
                self.device_only("thread_block_tile::sync", e)?;
                self.emit(
                    InstrKind::Warp {
                        op: WarpOp::Sync,
                        mask,
                        value: Operand::Imm(0),
                        dst: None,
                        pred_dst: None,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            "thread_rank" => Ok(Operand::Imm(thread % n64)),
            "size" | "num_threads" => Ok(Operand::Imm(n64)),
            "meta_group_rank" => Ok(Operand::Imm(thread / n64)),
            "meta_group_size" => Ok(Operand::Imm((block_size + n64 - 1) / n64)),
            _ => err(
                e,
                format!("not supported: `{method}` of a thread_block_tile (sync, thread_rank, size, num_threads, meta_group_rank, meta_group_size, shfl, shfl_up, shfl_down, shfl_xor, any, all and ballot are)"),
            ),
        }
    }

    /// A warp shuffle `op` (a [`WarpOp::Shfl`]: its mode, source lane and clamp) of `v` over
    /// the lanes `mask` names; its result register.
    fn shfl(
        &mut self,
        op: WarpOp,
        mask: Operand,
        v: Val,
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> RegId {
        let dst = self.build.dst_for(hint, v.ty);
        self.emit(
            InstrKind::Warp {
                op,
                mask,
                value: v.op,
                dst: Some(dst),
                pred_dst: None,
            },
            e,
        );
        dst
    }

    /// A warp vote of predicate `p` over the lanes `mask` names; its result register
    /// (`unsigned` for a ballot, `int` otherwise).
    fn vote(
        &mut self,
        op: VoteOp,
        mask: Operand,
        p: Node<'t>,
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<RegId> {
        let p = self.val(p, None)?;
        let p = self.binary(BinOp::Ne, p, Val::imm(0, IntType::S32), None, e);
        let ty = if op == VoteOp::Ballot {
            IntType::U32
        } else {
            IntType::S32
        };
        let dst = self.build.dst_for(hint, ty);
        self.emit(
            InstrKind::Warp {
                op: WarpOp::Vote(op),
                mask,
                value: p.op,
                dst: Some(dst),
                pred_dst: None,
            },
            e,
        );
        Ok(dst)
    }

    /// A lane mask, as the `unsigned` the intrinsics take.
    fn mask(&mut self, m: Node<'t>) -> R<Operand> {
        let v = self.val(m, None)?;
        Ok(self.convert(v, IntType::U32, None, m).op)
    }
}

/// The shuffle a warp's (or a tile's) `shfl`, `shfl_up`, `shfl_down`, `shfl_xor` is.
fn shfl_mode(base: &str) -> Option<ShflMode> {
    Some(match base {
        "shfl" => ShflMode::Idx,
        "shfl_up" => ShflMode::Up,
        "shfl_down" => ShflMode::Down,
        "shfl_xor" => ShflMode::Bfly,
        _ => return None,
    })
}

/// The vote a warp's (or a tile's) `ballot`, `any`, `all`, `uni` is.
fn vote_op(base: &str) -> Option<VoteOp> {
    Some(match base {
        "ballot" => VoteOp::Ballot,
        "any" => VoteOp::Any,
        "all" => VoteOp::All,
        "uni" => VoteOp::Uni,
        _ => return None,
    })
}
