//! Expressions: conditions lowered to branches, constant folding, names, operators,
//! assignments and increments.

use scopecheck_ir::{
    Arithmetic, BinOp, BranchCond, Diagnostic, FloatMode, FloatOp, InstrKind, IntType, Operand,
    Order, RegId, RmwKind, RmwOp,
};
use tree_sitter::Node;

use super::{bin_op, err, field, first_line, only_child, opencl, Access, Binding, Lw, Ty, Val, R};
use crate::span_of;
use scopecheck_litmus::vocab::{common_type, promote};

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// Emits code that jumps to `label` when `e` is `when` and falls through otherwise.
    pub(super) fn branch_if(&mut self, e: Node<'t>, when: bool, label: usize) -> R<()> {
        match e.kind() {
            "parenthesized_expression" | "condition_clause" => {
                let inner = e
                    .child_by_field_name("value")
                    .map_or_else(|| only_child(e), Ok)?;
                self.branch_if(inner, when, label)
            }
            "unary_expression" if self.op(e) == "!" => {
                self.branch_if(field(e, "argument")?, !when, label)
            }
            // A chain `a && b && ...` (or of `||`) by a loop: when every operand must hold
            // (`both`) the first that fails skips the branch, else each may take it.
            "binary_expression" if matches!(self.op(e), "&&" | "||") => {
                let (first, ops) = crate::nesting::chain_of(e);
                let mut operands = vec![first];
                for o in &ops {
                    operands.push(field(*o, "right")?);
                }
                let last = operands.pop().unwrap_or(first);
                let both = (self.op(e) == "&&") == when;
                if both {
                    let skip = self.build.new_label();
                    for a in operands {
                        self.branch_if(a, !when, skip)?;
                    }
                    self.branch_if(last, when, label)?;
                    self.build.set_label(skip);
                } else {
                    for a in operands {
                        self.branch_if(a, when, label)?;
                    }
                    self.branch_if(last, when, label)?;
                }
                Ok(())
            }
            "binary_expression" if matches!(self.op(e), "==" | "!=") => {
                let va = self.val(field(e, "left")?, None)?;
                let vb = self.val(field(e, "right")?, None)?;
                let eq = (self.op(e) == "==") == when;
                self.cond_branch(eq, va, vb, label, e);
                Ok(())
            }
            _ => {
                let v = self.val(e, None)?;
                self.cond_branch(!when, v, Val::imm(0, IntType::S32), label, e);
                Ok(())
            }
        }
    }

    /// Branches to `label` when `a == b` (`eq`) or `a != b` (`!eq`) in C's types, folding
    /// constants.
    pub(super) fn cond_branch(&mut self, eq: bool, a: Val, b: Val, label: usize, n: Node<'t>) {
        let ty = common_type(a.ty, b.ty);
        let (a, b) = if ty.float {
            (self.convert(a, ty, None, n), self.convert(b, ty, None, n))
        } else {
            (a, b)
        };
        if let (Operand::Imm(x), Operand::Imm(y)) = (a.op, b.op) {
            // Equality of constants never has undefined behaviour.
            let same = BinOp::Eq.eval(ty, Arithmetic::C, x, y) == Ok(1);
            if same == eq {
                self.branch(BranchCond::Always, label, n);
            }
            return;
        }
        let source = self.text(n);
        self.build
            .branch_eq(eq, (a.op, a.ty), (b.op, b.ty), label, (span_of(n), source));
    }

    /// Whether `e` only computes registers (so `&&` may evaluate both sides).
    /// Whether `e` folds to a constant without emitting code: literals, `sizeof`, constants,
    /// thread and block indices, and operators on them.
    pub(super) fn foldable(&self, e: Node<'t>) -> bool {
        match e.kind() {
            "number_literal" | "true" | "false" | "sizeof_expression" => true,
            "identifier" => matches!(self.build.lookup(self.text(e)), Some(Binding::Const(..))),
            "field_expression" => e.child_by_field_name("argument").is_some_and(|a| {
                let on = self.text(a);
                matches!(self.build.lookup(on), Some(Binding::Dim3(_)))
                    || (!self.host()
                        && matches!(on, "threadIdx" | "blockIdx" | "blockDim" | "gridDim"))
            }),
            "parenthesized_expression" => only_child(e).is_ok_and(|c| self.foldable(c)),
            "call_expression" => {
                !self.host()
                    && e.child_by_field_name("function")
                        .is_some_and(|f| opencl::WORK_ITEM_FNS.contains(&self.text(f)))
                    && e.child_by_field_name("arguments").is_some_and(|a| {
                        let mut c = a.walk();
                        let all = a.named_children(&mut c).all(|x| self.foldable(x));
                        all
                    })
            }
            "cast_expression" => e
                .child_by_field_name("value")
                .is_some_and(|v| self.foldable(v)),
            "unary_expression" => {
                matches!(self.op(e), "-" | "+" | "!" | "~")
                    && e.child_by_field_name("argument")
                        .is_some_and(|a| self.foldable(a))
            }
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(e);
                self.foldable(first)
                    && ops.iter().all(|o| {
                        o.child_by_field_name("right")
                            .is_some_and(|a| self.foldable(a))
                    })
            }
            "conditional_expression" => ["condition", "consequence", "alternative"]
                .iter()
                .all(|f| e.child_by_field_name(f).is_some_and(|a| self.foldable(a))),
            _ => false,
        }
    }

    pub(super) fn is_pure(&self, e: Node<'t>) -> bool {
        match e.kind() {
            "number_literal" | "true" | "false" | "field_expression" => true,
            "identifier" => matches!(
                self.build.lookup(self.text(e)),
                Some(Binding::Reg(..) | Binding::Const(..))
            ),
            "parenthesized_expression" => only_child(e).is_ok_and(|c| self.is_pure(c)),
            "unary_expression" => e
                .child_by_field_name("argument")
                .is_some_and(|a| self.is_pure(a)),
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(e);
                self.is_pure(first)
                    && ops.iter().all(|o| {
                        o.child_by_field_name("right")
                            .is_some_and(|a| self.is_pure(a))
                    })
            }
            _ => false,
        }
    }

    pub(super) fn reg_of(&self, name: &str, n: Node<'t>) -> R<Option<RegId>> {
        match self.build.lookup(name) {
            Some(Binding::Reg(r, seg, _)) => {
                if seg != self.seg {
                    return err(n, format!("not supported: the host local `{name}` is used across a kernel launch or synchronization (host code there runs as separate host threads); read it again after the launch"));
                }
                Ok(Some(r))
            }
            _ => Ok(None),
        }
    }

    /// Evaluates `e`; the result goes to `hint` when an instruction computes it.
    pub(super) fn value(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Operand> {
        Ok(self.val(e, hint)?.op)
    }

    /// The C type a cast names, `None` for a cast to a pointer or to a type that is not an
    /// integer or floating type (the value then passes unchanged).
    pub(super) fn cast_type(&self, e: Node<'t>) -> Option<IntType> {
        let t = e.child_by_field_name("type")?;
        if t.child_by_field_name("declarator").is_some() {
            return None;
        }
        let inner = t.child_by_field_name("type")?;
        // `(void)v` discards the value: no conversion (and no 8-bit arithmetic).
        if self.text(inner).trim() == "void" {
            return None;
        }
        let mut ty = Ty::int();
        self.cx.base_type(inner, &mut ty).ok()?;
        let scalar = !(ty.pointer || ty.dim3 || ty.stream || ty.cl_kernel || ty.strukt.is_some());
        scalar.then_some(ty.int)
    }

    /// The value of the variable `name` (an identifier, or `p.f` of a struct held by value).
    pub(super) fn val_named(&mut self, name: &str, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let typed = |me: &Self, o: R<Operand>| o.map(|o| me.typed(o));
        if let Some(r) = self.reg_of(name, e)? {
            return Ok(self.typed(Operand::Reg(r)));
        }
        match self.build.lookup(name) {
            Some(Binding::Const(v, ty)) => return Ok(Val::imm(v, ty)),
            Some(Binding::Ptr(_) | Binding::PtrUnset(..)) => {
                return err(
                    e,
                    format!("`{name}` is a pointer: read the memory with `*{name}`"),
                )
            }
            Some(Binding::Dim3(_) | Binding::Stream(_)) => {
                return err(e, format!("`{name}` is not a number"))
            }
            Some(Binding::HostArr(_)) => return err(e, format!("`{name}` is an array: index it")),
            _ => {}
        }
        match self.object(name, e)? {
            Some((p, 1)) => {
                let v = self.load(p, hint, e);
                typed(self, v)
            }
            Some(_) => err(e, format!("`{name}` is an array: index it")),
            // Every runtime call of the harness succeeds.
            None if name == "cudaSuccess" => Ok(Val::imm(0, IntType::S32)),
            None if matches!(name, "threadIdx" | "blockIdx" | "blockDim" | "gridDim") => {
                err(e, format!("`{name}` needs a member: `{name}.x`"))
            }
            None => self.unknown(name, e),
        }
    }

    /// Evaluates `e` with its C type; the result goes to `hint` when an instruction computes
    /// it and it has the hint's type (the caller moves it there otherwise).
    pub(super) fn val(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let typed = |me: &Self, o: R<Operand>| o.map(|o| me.typed(o));
        match e.kind() {
            "number_literal" => {
                let (v, ty, _) = self.cx.literal(e)?;
                Ok(Val::imm(v, ty))
            }
            // `bool` promotes to `int`.
            "true" => Ok(Val::imm(1, IntType::S32)),
            "false" | "null" | "nullptr" => Ok(Val::imm(0, IntType::S32)),
            "char_literal" => err(e, "not supported: character constants"),
            "sizeof_expression" => {
                let size = match self.local_size(e) {
                    Some(n) => n,
                    None => self.cx.sizeof(e)?,
                };
                Ok(Val::imm(size, IntType::U64))
            }
            "parenthesized_expression" => self.val(only_child(e)?, hint),
            "cast_expression" => {
                let v = self.val(field(e, "value")?, None)?;
                Ok(match self.cast_type(e) {
                    Some(ty) => self.convert(v, ty, hint, e),
                    None => v,
                })
            }
            "identifier" => self.val_named(self.text(e), e, hint),
            "field_expression" if self.flat_field(e).is_some() => {
                let key = self.flat_field(e).unwrap_or_default();
                self.val_named(&key, e, hint)
            }
            "field_expression" => {
                let obj = field(e, "argument")?;
                let f = self.text(field(e, "field")?);
                let on = self.text(obj);
                let dims = matches!(self.build.lookup(on), Some(Binding::Dim3(_)))
                    || matches!(on, "threadIdx" | "blockIdx" | "blockDim" | "gridDim");
                if !dims {
                    // A struct field: `s.a`, `p->flag`, `a[1].flag`.
                    return match self.place(e)? {
                        Some(p) => {
                            let v = self.load(p, hint, e);
                            typed(self, v)
                        }
                        None => err(e, format!("not supported: the member `{}`", self.text(e))),
                    };
                }
                let k = match f {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return err(e, format!("`{on}` has members x, y and z")),
                };
                // The members of `dim3` and `uint3` are `unsigned int`.
                if let Some(Binding::Dim3(v)) = self.build.lookup(on) {
                    return Ok(Val::imm(v[k], IntType::U32));
                }
                if self.host() && matches!(on, "threadIdx" | "blockIdx" | "blockDim" | "gridDim") {
                    return err(e, format!("`{on}` exists only in device code"));
                }
                let Some(v) = self.dims.member(on, k) else {
                    return err(e, format!("not supported: the member `{}`", self.text(e)));
                };
                Ok(Val::imm(v, IntType::U32))
            }
            "pointer_expression" => match self.op(e) {
                "*" => {
                    let p = self.pointer(field(e, "argument")?)?;
                    let v = self.load(p, hint, e);
                    typed(self, v)
                }
                _ => err(e, "not supported: an address as a value (pass addresses to atomic functions and kernels only)"),
            },
            "subscript_expression" => {
                let p = self.place(e)?.ok_or_else(|| Diagnostic::error("expected `a[i]`").at(span_of(e)))?;
                let v = self.load(p, hint, e);
                typed(self, v)
            }
            "unary_expression" => {
                let a = self.val(field(e, "argument")?, None)?;
                let int = |v| Val::imm(v, IntType::S32);
                match self.op(e) {
                    // `+a` promotes.
                    "+" => Ok(self.convert(a, promote(a.ty), hint, e)),
                    // `-x` of a float flips the sign (`-0.0` from `0.0`, unlike `0 - x`).
                    "-" if a.ty.float => {
                        let neg = BinOp::Float(FloatOp::Neg, FloatMode::default());
                        Ok(self.binary(neg, a, a, hint, e))
                    }
                    "-" => Ok(self.binary(BinOp::Sub, int(0), a, hint, e)),
                    "!" => Ok(self.binary(BinOp::Eq, a, int(0), hint, e)),
                    "~" => Ok(self.binary(BinOp::Xor, a, int(-1), hint, e)),
                    op => err(e, format!("not supported: operator `{op}`")),
                }
            }
            "binary_expression" => self.binary_expr(e, hint),
            "conditional_expression" => {
                // The result has the arms' common type; each arm's move is written once both
                // types are known.
                let t = self.build.temp(IntType::S32);
                let els = self.build.new_label();
                let end = self.build.new_label();
                let (c, a, b) = (field(e, "condition")?, field(e, "consequence")?, field(e, "alternative")?);
                self.branch_if(c, false, els)?;
                let va = self.val(a, None)?;
                let at_a = self.build.code.len();
                self.emit(InstrKind::Mov { dst: t, src: va.op }, a);
                self.branch(BranchCond::Always, end, e);
                self.build.set_label(els);
                let vb = self.val(b, None)?;
                let at_b = self.build.code.len();
                self.emit(InstrKind::Mov { dst: t, src: vb.op }, b);
                self.build.set_label(end);
                let ty = common_type(va.ty, vb.ty);
                self.build.reg_types[t.0 as usize] = ty;
                self.build.code[at_a].kind = self.conversion_of(t, va, ty);
                self.build.code[at_b].kind = self.conversion_of(t, vb, ty);
                Ok(Val { op: Operand::Reg(t), ty })
            }
            "assignment_expression" => {
                let v = self.assign(e);
                typed(self, v)
            }
            "update_expression" => {
                let v = self.update(e);
                typed(self, v)
            }
            "call_expression" => self.call(e, hint),
            "comma_expression" => {
                self.value(field(e, "left")?, None)?;
                self.val(field(e, "right")?, hint)
            }
            k => err(e, format!("not supported: `{}` ({k})", first_line(self.text(e)))),
        }
    }

    pub(super) fn binary_expr(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let op = self.op(e);
        let (a, b) = (field(e, "left")?, field(e, "right")?);
        let zero = Val::imm(0, IntType::S32);
        let (first, ops) = crate::nesting::chain_of(e);
        if matches!(op, "&&" | "||") {
            if self.is_pure(a) && self.is_pure(b) {
                // Each link of the chain as `(left != 0) op (right != 0)`, left to right.
                let bop = if op == "&&" { BinOp::And } else { BinOp::Or };
                let mut v = self.val(first, None)?;
                let last = ops.len() - 1;
                for (k, o) in ops.into_iter().enumerate() {
                    let na = self.binary(BinOp::Ne, v, zero, None, o);
                    let vb = self.val(field(o, "right")?, None)?;
                    let nb = self.binary(BinOp::Ne, vb, zero, None, o);
                    v = self.binary(bop, na, nb, if k == last { hint } else { None }, o);
                }
                return Ok(v);
            }
            let t = self.build.temp(IntType::S32);
            let f = self.build.new_label();
            let end = self.build.new_label();
            self.branch_if(e, false, f)?;
            self.emit(
                InstrKind::Mov {
                    dst: t,
                    src: Operand::Imm(1),
                },
                e,
            );
            self.branch(BranchCond::Always, end, e);
            self.build.set_label(f);
            self.emit(
                InstrKind::Mov {
                    dst: t,
                    src: Operand::Imm(0),
                },
                e,
            );
            self.build.set_label(end);
            return Ok(Val {
                op: Operand::Reg(t),
                ty: IntType::S32,
            });
        }
        // A chain `a + b * c - d ...` by a loop, left to right.
        let mut v = self.val(first, None)?;
        let last = ops.len() - 1;
        for (k, o) in ops.into_iter().enumerate() {
            let vb = self.val(field(o, "right")?, None)?;
            let op = self.op(o);
            let Some((bop, swap)) = bin_op(op) else {
                return err(o, format!("not supported: `{op}` on values known only at run time (the IR has no such operation; it folds on constants)"));
            };
            let (x, y) = if swap { (vb, v) } else { (v, vb) };
            v = self.binary(bop, x, y, if k == last { hint } else { None }, o);
        }
        Ok(v)
    }

    pub(super) fn assign(&mut self, e: Node<'t>) -> R<Operand> {
        let target = field(e, "left")?;
        let value = field(e, "right")?;
        let op = self.op(e);
        let bin = match op {
            "=" => None,
            "+=" => Some((BinOp::Add, Some(RmwOp::Add))),
            "-=" => Some((BinOp::Sub, Some(RmwOp::Sub))),
            "*=" => Some((BinOp::Mul, None)),
            "/=" => Some((BinOp::Div, None)),
            "%=" => Some((BinOp::Rem, None)),
            "<<=" => Some((BinOp::Shl, None)),
            ">>=" => Some((BinOp::Shr, None)),
            "&=" => Some((BinOp::And, Some(RmwOp::And))),
            "|=" => Some((BinOp::Or, Some(RmwOp::Or))),
            "^=" => Some((BinOp::Xor, Some(RmwOp::Xor))),
            _ => return err(e, format!("not supported: `{op}`")),
        };
        let flat = self.flat_field(target);
        if target.kind() == "identifier" || flat.is_some() {
            let name = flat.as_deref().unwrap_or(self.text(target));
            // `x = e;` on the host overwrites `x`: a local of an earlier segment gets a new
            // register in this one (and `e` may itself end the segment).
            // (Not in a loop or `if`: the old value would be lost where the assignment does
            // not run.)
            let top = self.host() && self.nesting == 0;
            // A field of a struct held by value, set in straight-line code: a constant stays
            // one (it may become a kernel argument), anything else a register.
            if let (Some(_), None, Some(Binding::Const(_, ty) | Binding::Reg(_, _, ty))) =
                (&flat, bin, self.build.lookup(name))
            {
                if self.nesting == 0 || !self.host() {
                    let v = self.val(value, None)?;
                    let v = self.float_conv(v, ty, None, value);
                    if let (Operand::Imm(k), true) = (v.op, self.nesting == 0) {
                        self.build.rebind(name, Binding::Const(ty.wrap(k), ty));
                        return Ok(Operand::Imm(ty.wrap(k)));
                    }
                    let r = self.build.new_reg(name, ty);
                    self.mov(r, v.op, e);
                    let seg = self.seg;
                    self.build.rebind(name, Binding::Reg(r, seg, ty));
                    return Ok(Operand::Reg(r));
                }
            }
            if let (None, true, Some(Binding::Reg(_, _, ty))) = (bin, top, self.build.lookup(name))
            {
                let v = self.val(value, None)?;
                let v = self.float_conv(v, ty, None, value);
                let r = match self.build.lookup(name) {
                    Some(Binding::Reg(r, seg, _)) if seg == self.seg => r,
                    _ => {
                        let r = self.build.new_reg(name, ty);
                        let seg = self.seg;
                        self.build.rebind(name, Binding::Reg(r, seg, ty));
                        r
                    }
                };
                self.mov(r, v.op, e);
                return Ok(Operand::Reg(r));
            }
            if let Some(r) = self.reg_of(name, target)? {
                match bin {
                    None => {
                        let ty = self.build.reg_ty(r);
                        let v = self.value_as(value, ty, Some(r))?;
                        self.mov(r, v, e);
                    }
                    Some((b, _)) => {
                        // `r op= v` is `r = r op v`, converted back to `r`'s type.
                        let v = self.val(value, None)?;
                        let old = self.typed(Operand::Reg(r));
                        let res = self.binary(b, old, v, Some(r), e);
                        self.mov_val(r, res, e);
                    }
                }
                return Ok(Operand::Reg(r));
            }
            match self.build.lookup(name) {
                Some(Binding::Ptr(_) | Binding::PtrUnset(..)) => {
                    let p = self.pointer(value)?;
                    let t = match self.build.lookup(name) {
                        Some(Binding::Ptr(old) | Binding::Obj(old)) => {
                            Some((old.access, old.strukt, old.ty))
                        }
                        Some(Binding::PtrUnset(a, _, st, ty)) => Some((a, st, ty)),
                        _ => None,
                    };
                    if let Some(t) = t {
                        let p = self.retype(p, t, value)?;
                        let p = self.keep_pointer(p, value)?;
                        self.build.rebind(name, Binding::Ptr(p));
                    }
                    return Ok(Operand::Imm(0));
                }
                Some(Binding::Const(..)) => return err(target, format!("`{name}` is a constant")),
                _ => {}
            }
        }
        let Some(p) = self.place(target)? else {
            return err(target, "cannot assign to this expression");
        };
        match (bin, p.access) {
            (None, _) => {
                let v = self.value_as(value, p.ty, None)?;
                self.store(p, v, e)?;
                Ok(v)
            }
            (Some((_, Some(rop))), Access::Atomic(scope)) => {
                let v = self.value_as(value, p.ty, None)?;
                let at = self.address(p, target)?;
                let scope = self.scope(scope, None);
                Ok(self.rmw(at, RmwKind::Op(rop, v), Order::SeqCst, scope, None, e))
            }
            (Some((_, None)), Access::Atomic(_)) => err(
                e,
                format!("not supported: `{op}` on an atomic (no such atomic operation)"),
            ),
            (Some((b, _)), _) => {
                let old = self.load(p, None, target)?;
                let old = self.typed(old);
                let v = self.val(value, None)?;
                let t = self.binary(b, old, v, None, e);
                let t = self.float_conv(t, p.ty, None, e);
                self.store(p, t.op, e)?;
                Ok(t.op)
            }
        }
    }

    pub(super) fn update(&mut self, e: Node<'t>) -> R<Operand> {
        let target = field(e, "argument")?;
        let op = if self.op(e) == "++" {
            BinOp::Add
        } else {
            BinOp::Sub
        };
        let one = Val::imm(1, IntType::S32);
        if target.kind() == "identifier" {
            if let Some(r) = self.reg_of(self.text(target), target)? {
                // `r++` is `r = r + 1` in C's types, converted back to `r`'s type.
                let old = self.typed(Operand::Reg(r));
                let res = self.binary(op, old, one, Some(r), e);
                self.mov_val(r, res, e);
                return Ok(Operand::Reg(r));
            }
        }
        let Some(p) = self.place(target)? else {
            return err(target, "cannot increment this expression");
        };
        if let Access::Atomic(scope) = p.access {
            let at = self.address(p, target)?;
            let scope = self.scope(scope, None);
            let rop = if op == BinOp::Add {
                RmwOp::Add
            } else {
                RmwOp::Sub
            };
            let one = self.float_conv(one, at.1, None, e).op;
            return Ok(self.rmw(at, RmwKind::Op(rop, one), Order::SeqCst, scope, None, e));
        }
        let old = self.load(p, None, target)?;
        let old = self.typed(old);
        let t = self.binary(op, old, one, None, e);
        let t = self.float_conv(t, p.ty, None, e);
        self.store(p, t.op, e)?;
        Ok(t.op)
    }
}
