//! Names, registers, labels and emission: the scopes a thread's names live in, its registers
//! and their C types, labels and branches, and the conversions and binary operations every
//! other part emits through.

use scopecheck_ir::{Arithmetic, BinOp, BranchCond, InstrKind, IntType, Operand, RegId, Scope};
use tree_sitter::Node;

use super::{cvt_c, err, Lw, Val, R};
use crate::span_of;
use scopecheck_litmus::vocab::op_types;

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// An operand with its type: a register's, or a constant's as C types a literal (`int`
    /// when it fits, else `long long`).
    pub(super) fn typed(&self, o: Operand) -> Val {
        let ty = self.build.operand_ty(o);
        Val { op: o, ty }
    }

    /// Appends an instruction whose span and text are those of `n`.
    pub(super) fn emit(&mut self, kind: InstrKind, n: Node<'t>) {
        let source = self.text(n);
        self.build.emit(kind, span_of(n), source);
    }

    pub(super) fn branch(&mut self, cond: BranchCond, label: usize, n: Node<'t>) {
        let source = self.text(n);
        self.build.branch(cond, label, span_of(n), source);
    }

    /// The instruction `dst = v`, converted to `ty` (the type of `dst`) as C converts on
    /// assignment: wrapping to the width (conversion to a signed type is two's complement in
    /// CUDA and OpenCL C), emitted as `v | 0` computed in `ty`.
    pub(super) fn conversion(&self, dst: RegId, v: Operand, ty: IntType) -> InstrKind {
        self.conversion_of(dst, self.typed(v), ty)
    }

    /// [`Self::conversion`] of a value of known type: between integers and floats, and
    /// between float widths, a [`BinOp::Cvt`] (a constant folded when defined).
    pub(super) fn conversion_of(&self, dst: RegId, v: Val, ty: IntType) -> InstrKind {
        let float = v.ty.float || ty.float;
        if float && v.ty != ty {
            let op = cvt_c(v.ty, ty);
            if let Operand::Imm(x) = v.op {
                if let Ok(c) = op.eval(ty, Arithmetic::C, x, 0) {
                    return InstrKind::Mov {
                        dst,
                        src: Operand::Imm(c),
                    };
                }
            }
            return InstrKind::Binary {
                dst,
                op,
                ty,
                a: v.op,
                b: Operand::Imm(0),
            };
        }
        match v.op {
            Operand::Imm(x) => InstrKind::Mov {
                dst,
                src: Operand::Imm(ty.wrap(x)),
            },
            Operand::Reg(r) if self.build.reg_ty(r) == ty => InstrKind::Mov { dst, src: v.op },
            Operand::Reg(_) => InstrKind::Binary {
                dst,
                op: BinOp::Or,
                ty,
                a: v.op,
                b: Operand::Imm(0),
            },
        }
    }

    /// `dst = v`, converted to `dst`'s type from `v`'s.
    pub(super) fn mov_val(&mut self, dst: RegId, v: Val, n: Node<'t>) {
        if v.op != Operand::Reg(dst) {
            let kind = self.conversion_of(dst, v, self.build.reg_ty(dst));
            self.emit(kind, n);
        }
    }

    /// The value of `e` as an operand of type `ty`: converted where a float is involved (an
    /// integer constant to a float's bits, ...); other values as [`Self::value`] gives them,
    /// their consumer wrapping them to `ty`.
    pub(super) fn value_as(&mut self, e: Node<'t>, ty: IntType, hint: Option<RegId>) -> R<Operand> {
        let v = self.val(e, hint)?;
        Ok(self.float_conv(v, ty, hint, e).op)
    }

    /// `v` converted to `ty` where a float is involved; unchanged otherwise.
    pub(super) fn float_conv(
        &mut self,
        v: Val,
        ty: IntType,
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Val {
        if v.ty.float || ty.float {
            self.convert(v, ty, hint, n)
        } else {
            v
        }
    }

    /// `dst = v`, converted to `dst`'s type.
    pub(super) fn mov(&mut self, dst: RegId, v: Operand, n: Node<'t>) {
        if v != Operand::Reg(dst) {
            let kind = self.conversion(dst, v, self.build.reg_ty(dst));
            self.emit(kind, n);
        }
    }

    /// `v` converted to `ty` (a cast, a parameter, a value stored).
    pub(super) fn convert(&mut self, v: Val, ty: IntType, hint: Option<RegId>, n: Node<'t>) -> Val {
        let float = (v.ty.float || ty.float) && v.ty != ty;
        match v.op {
            Operand::Imm(x) if float => match cvt_c(v.ty, ty).eval(ty, Arithmetic::C, x, 0) {
                Ok(c) => Val::imm(c, ty),
                // No defined value (a NaN to an integer): converted when it runs, which
                // faults at its line.
                Err(_) => {
                    let dst = self.build.dst_for(hint, ty);
                    let kind = self.conversion_of(dst, v, ty);
                    self.emit(kind, n);
                    Val {
                        op: Operand::Reg(dst),
                        ty,
                    }
                }
            },
            Operand::Imm(x) => Val::imm(x, ty),
            _ if v.ty == ty => v,
            Operand::Reg(_) => {
                let dst = self.build.dst_for(hint, ty);
                let kind = self.conversion_of(dst, v, ty);
                self.emit(kind, n);
                Val {
                    op: Operand::Reg(dst),
                    ty,
                }
            }
        }
    }

    /// `a op b` in C's types: both operands are promoted to at least `int` and converted to
    /// their common type (a shift has the promoted type of its left operand); a comparison
    /// gives an `int`. Constants fold; a constant operation with no defined value (a division
    /// by zero in one thread, say) is emitted as it is, so that it faults at its line when it
    /// runs, with a warning.
    pub(super) fn binary(
        &mut self,
        op: BinOp,
        a: Val,
        b: Val,
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Val {
        let (ty, result) = op_types(op, a.ty, b.ty);
        // Floats compute on values of the common type: an integer operand is converted
        // (integers wrap to it in the operation itself).
        let (a, b) = if ty.float {
            (self.convert(a, ty, None, n), self.convert(b, ty, None, n))
        } else {
            (a, b)
        };
        if let (Operand::Imm(x), Operand::Imm(y)) = (a.op, b.op) {
            match op.eval(ty, Arithmetic::C, x, y) {
                Ok(v) => return Val::imm(v, result),
                Err(why) => {
                    let message = format!(
                        "this expression has no defined value here ({why}): it faults when it runs"
                    );
                    // A folded condition may be lowered twice; say it once.
                    let said = self
                        .cx
                        .warnings
                        .last()
                        .is_some_and(|w| w.span == Some(span_of(n)) && w.message == message);
                    if !said {
                        self.cx.warn(n, message);
                    }
                }
            }
        }
        let dst = self.build.dst_for(hint, result);
        self.emit(
            InstrKind::Binary {
                dst,
                op,
                ty,
                a: a.op,
                b: b.op,
            },
            n,
        );
        Val {
            op: Operand::Reg(dst),
            ty: result,
        }
    }

    /// The scope of an operation: host threads always operate at system scope.
    pub(super) fn scope(&mut self, scope: Scope, explicit: Option<Node>) -> Scope {
        if self.host() {
            if let Some(n) = explicit {
                if scope != Scope::Sys {
                    self.cx.warn(
                        n,
                        format!(
                            "a host thread operates at system scope; scope {scope} treated as sys"
                        ),
                    );
                }
            }
            return Scope::Sys;
        }
        scope
    }

    pub(super) fn device_only(&self, name: &str, n: Node<'t>) -> R<()> {
        if self.host() {
            return err(
                n,
                format!("`{name}` is a device function; host code cannot call it"),
            );
        }
        Ok(())
    }
}
