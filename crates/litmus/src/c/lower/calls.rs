//! The calls a thread makes: C11, CUDA and OpenCL atomics (loads, stores, read-modify-writes,
//! compare-exchanges, fences) with their order and scope arguments, and members of atomic
//! objects (`x.load(...)`, `x->fetch_add(...)`).

use super::*;
use crate::c::parse::THREAD_SCOPES;
use crate::vocab::{
    cl_scope, cuda_atomic, order_name, CL_SCOPES, CUDA_RMW, HINT_LOADS, HINT_STORES, ORDERS,
    RMW_MEMBERS,
};
use scopecheck_ir::{BarrierKind, FenceOrder, FenceSpaces};

impl Lower<'_> {
    pub(super) fn arity(
        &self,
        name: &str,
        args: &[Expr],
        range: (usize, usize),
        shape: &str,
        span: Span,
    ) -> Result<(), Diagnostic> {
        if args.len() < range.0 || args.len() > range.1 {
            let n = if range.0 == range.1 {
                format!("{}", range.0)
            } else {
                format!("{} to {}", range.0, range.1)
            };
            return Err(err(
                span,
                format!(
                    "`{name}` takes {n} argument{} ({shape}), found {}",
                    if range.1 == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn order_arg(&self, e: &Expr, use_: Use) -> Result<Order, Diagnostic> {
        let o = match &e.kind {
            ExprKind::Name(n) => order_name(n),
            _ => None,
        };
        let Some(o) = o else {
            return Err(err(
                e.span,
                format!(
                    "expected a memory order, found `{}`",
                    self.src
                        .get(e.span.offset..e.span.offset + e.span.len)
                        .unwrap_or("")
                ),
            )
            .expecting(ORDERS));
        };
        let bad = match use_ {
            Use::Load => matches!(o, Order::Release | Order::AcqRel),
            Use::Store => matches!(o, Order::Acquire | Order::AcqRel),
            Use::Rmw => false,
        };
        if bad {
            let what = if use_ == Use::Load {
                "a load"
            } else {
                "a store"
            };
            return Err(err(
                e.span,
                format!("{} is not a valid order for {what}", order_word(o)),
            ));
        }
        Ok(o)
    }

    pub(super) fn scope_arg(&self, e: &Expr) -> Result<Scope, Diagnostic> {
        let s = match &e.kind {
            ExprKind::Name(n) => cl_scope(n),
            _ => None,
        };
        s.ok_or_else(|| {
            err(
                e.span,
                format!(
                    "expected a memory scope, found `{}`",
                    self.src
                        .get(e.span.offset..e.span.offset + e.span.len)
                        .unwrap_or("")
                ),
            )
            .expecting(&[CL_SCOPES, THREAD_SCOPES].concat())
        })
    }

    pub(super) fn fence_order(&self, e: &Expr) -> Result<FenceOrder, Diagnostic> {
        match self.order_arg(e, Use::Rmw)? {
            Order::Acquire => Ok(FenceOrder::Acquire),
            Order::Release => Ok(FenceOrder::Release),
            Order::AcqRel => Ok(FenceOrder::AcqRel),
            Order::SeqCst => Ok(FenceOrder::Sc),
            _ => Err(err(
                e.span,
                "a fence with memory_order_relaxed orders nothing: use acquire, release, acq_rel or seq_cst",
            )),
        }
    }

    /// `CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE`. A chain of `|` nests to the left as
    /// deep as it is long: its operands are taken from a work list.
    pub(super) fn fence_flags(&self, e: &Expr) -> Result<FenceSpaces, Diagnostic> {
        let mut all = FenceSpaces {
            global: false,
            shared: false,
        };
        let mut pending = vec![e];
        while let Some(e) = pending.pop() {
            if let ExprKind::Binary("|", a, b) = &e.kind {
                pending.extend([&**b, &**a]);
                continue;
            }
            let x = self.fence_flag(e)?;
            all.global |= x.global;
            all.shared |= x.shared;
        }
        Ok(all)
    }

    /// One of the fence flags.
    pub(super) fn fence_flag(&self, e: &Expr) -> Result<FenceSpaces, Diagnostic> {
        match &e.kind {
            ExprKind::Name(n) if n == "CLK_GLOBAL_MEM_FENCE" => Ok(FenceSpaces {
                global: true,
                shared: false,
            }),
            ExprKind::Name(n) if n == "CLK_LOCAL_MEM_FENCE" => Ok(FenceSpaces {
                global: false,
                shared: true,
            }),
            ExprKind::Name(n) if n == "CLK_IMAGE_MEM_FENCE" => {
                Err(err(e.span, "not supported: image memory fences"))
            }
            _ => Err(err(
                e.span,
                "expected fence flags `CLK_GLOBAL_MEM_FENCE` and/or `CLK_LOCAL_MEM_FENCE` (joined with `|`)",
            )
            .expecting(&["`CLK_GLOBAL_MEM_FENCE`", "`CLK_LOCAL_MEM_FENCE`"])),
        }
    }

    /// The atomic object argument of an `atomic_*` function.
    pub(super) fn atomic_obj(
        &mut self,
        name: &str,
        e: &Expr,
    ) -> Result<(Ptr, Address), Diagnostic> {
        let (p, addr) = self.pointer(e)?;
        if !matches!(p.access, Access::Atomic { .. }) {
            return Err(err(
                e.span,
                format!("`{name}` needs a pointer to an atomic type (declare the parameter `atomic_int*`)"),
            ));
        }
        Ok((p, addr))
    }

    /// The object of an `atomic_*` read-modify-write. C11 and OpenCL C define those functions
    /// on atomic objects only; on a plain or volatile pointer the RMW is accepted as an atomic
    /// RMW (what the hardware does, and what CUDA's `atomicAdd` on an `int*` means), with a
    /// warning that the language leaves it undefined.
    pub(super) fn rmw_obj(&mut self, name: &str, e: &Expr) -> Result<(Ptr, Address), Diagnostic> {
        let (p, addr) = self.pointer(e)?;
        if !matches!(p.access, Access::Atomic { .. }) {
            let what = self
                .src
                .get(e.span.offset..e.span.offset + e.span.len)
                .unwrap_or("")
                .to_string();
            self.warn(
                e.span,
                format!(
                    "`{name}` on `{what}`, which points to a non-atomic object: C11 and OpenCL C \
                     define the atomic_* functions on atomic types (_Atomic, atomic_int) only, and \
                     an atomic operation on a non-atomic object is undefined (it races with the \
                     object's plain accesses); scopecheck treats it as an atomic read-modify-write"
                ),
            );
        }
        Ok((p, addr))
    }

    /// The `expected` argument of a C11 / OpenCL compare-exchange: `&e` of a local, or a
    /// pointer to a non-atomic object (a parameter `e`, `&e[1]`, `e + i`) that holds the
    /// expected value and receives the current one on failure.
    pub(super) fn expected_arg(&mut self, e: &Expr) -> Result<Expected, Diagnostic> {
        if let ExprKind::Unary("&", inner) = &e.kind {
            if let ExprKind::Name(n) = &inner.kind {
                match self.build.lookup(n) {
                    Some(Binding::Reg(r)) => return Ok(Expected::Reg(r)),
                    Some(Binding::Ptr(_)) => {
                        return Err(err(
                            inner.span,
                            format!(
                                "`&{n}` is the address of the pointer `{n}`; the expected value is a local variable (`&e`) or the object a pointer points to (pass `{n}`)"
                            ),
                        ))
                    }
                    None => return Err(self.unknown(n, inner.span)),
                    Some(Binding::Ref(_)) => {}
                }
            }
        }
        let bad = || {
            err(
                e.span,
                "expected `&expected` (the address of a local variable) or a pointer to the expected value",
            )
        };
        if let ExprKind::Name(n) = &e.kind {
            if let Some(Binding::Reg(_)) = self.build.lookup(n) {
                return Err(err(
                    e.span,
                    format!("expected `&{n}`: a compare-exchange takes the address of the expected value"),
                ));
            }
        }
        let pointer_like = matches!(
            &e.kind,
            ExprKind::Name(_) | ExprKind::Unary("&", _) | ExprKind::Binary("+", _, _)
        );
        if !pointer_like {
            return Err(bad());
        }
        let (p, addr) = self.pointer(e)?;
        if matches!(p.access, Access::Atomic { .. }) {
            return Err(err(
                e.span,
                "the expected value of a compare-exchange is a non-atomic object (a local variable, or a plain `int*`), not an atomic one",
            ));
        }
        Ok(Expected::Mem(p, addr))
    }

    pub(super) fn default_scope(p: Ptr) -> Scope {
        match p.access {
            Access::Atomic { scope, .. } => scope,
            _ => Scope::Gpu,
        }
    }

    /// `&expected` of a C compare-exchange: a local variable.
    pub(super) fn expected_reg(&self, e: &Expr, by_ref: bool) -> Result<RegId, Diagnostic> {
        let inner = match (&e.kind, by_ref) {
            (ExprKind::Unary("&", inner), true) => inner,
            (_, false) => e,
            _ => {
                return Err(err(
                    e.span,
                    "expected `&expected`, the address of a local variable",
                ))
            }
        };
        match &inner.kind {
            ExprKind::Name(n) => match self.build.lookup(n) {
                Some(Binding::Reg(r)) => Ok(r),
                None => Err(self.unknown(n, inner.span)),
                _ => Err(err(
                    inner.span,
                    "the expected value of a compare-exchange must be a local variable",
                )),
            },
            _ => Err(err(
                inner.span,
                "the expected value of a compare-exchange must be a local variable",
            )),
        }
    }

    pub(super) fn rmw(
        &mut self,
        at: Atomic,
        kind: RmwKind,
        hint: Option<RegId>,
        span: Span,
    ) -> Operand {
        let Atomic { addr, order, scope } = at;
        let dst = self.build.dst_for(hint, self.ty_at(&addr));
        self.emit(
            InstrKind::Rmw {
                dst: Some(dst),
                addr,
                ty: self.ty_at(&addr),
                kind,
                order,
                scope,
            },
            span,
        );
        Operand::Reg(dst)
    }

    /// A C compare-exchange: CAS into a temporary, the result `old == expected`, then
    /// `expected := old`.
    pub(super) fn compare_exchange(
        &mut self,
        at: Atomic,
        expected: RegId,
        new: Operand,
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        let Atomic { addr, order, scope } = at;
        let old = self.build.temp(self.ty_at(&addr));
        self.emit(
            InstrKind::Rmw {
                dst: Some(old),
                addr,
                ty: self.ty_at(&addr),
                kind: RmwKind::Cas {
                    expected: Operand::Reg(expected),
                    new,
                },
                order,
                scope,
            },
            span,
        );
        let hint = hint.filter(|h| *h != expected);
        let res = self.binary(
            BinOp::Eq,
            Operand::Reg(old),
            Operand::Reg(expected),
            hint,
            span,
        )?;
        self.mov(expected, Operand::Reg(old), span);
        Ok(res)
    }

    /// A C compare-exchange whose expected value is in memory (`*e`): `*e` is read by a plain
    /// access of this thread, the CAS compares with it, and only on failure is the value found
    /// stored back to `*e` (a success leaves `*e` unwritten, so the store sits behind a
    /// branch on the result):
    /// `ld e0, [e]; cas old, [x], e0, new; ok = old == e0; bne ok, 0, DONE; st [e], old; DONE:`.
    pub(super) fn compare_exchange_mem(
        &mut self,
        at: Atomic,
        (ep, eaddr): (Ptr, Address),
        new: Operand,
        hint: Option<RegId>,
        span: Span,
        expected_span: Span,
    ) -> Result<Operand, Diagnostic> {
        let Atomic { addr, order, scope } = at;
        let (ty, ety) = (self.ty_at(&addr), self.ty_at(&eaddr));
        if ty.bits != ety.bits {
            return Err(err(
                expected_span,
                format!("the expected value is a `{ety}` but the object holds `{ty}` values"),
            ));
        }
        let expected = self.load(ep, eaddr, None, span);
        let old = self.build.temp(ty);
        self.emit(
            InstrKind::Rmw {
                dst: Some(old),
                addr,
                ty,
                kind: RmwKind::Cas { expected, new },
                order,
                scope,
            },
            span,
        );
        let res = self.binary(BinOp::Eq, Operand::Reg(old), expected, hint, span)?;
        let done = self.build.new_label();
        self.branch(BranchCond::Ne(res, Operand::Imm(0)), done, span);
        self.store(ep, eaddr, Operand::Reg(old), span);
        self.build.set_label(done);
        Ok(res)
    }

    pub(super) fn fence(
        &mut self,
        order: FenceOrder,
        scope: Scope,
        spaces: FenceSpaces,
        span: Span,
    ) {
        self.emit(
            InstrKind::Fence {
                order,
                scope,
                spaces,
            },
            span,
        );
    }

    pub(super) fn call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        // OpenCL / C11 atomics.
        if let Some(base) = name.strip_prefix("atomic_") {
            let (base, explicit) = match base.strip_suffix("_explicit") {
                Some(b) => (b, true),
                None => (base, false),
            };
            return self.cl_atomic(name, base, explicit, args, hint, span);
        }
        if let Some(scope) = cuda_atomic(name).map(|(_, s)| s) {
            return self.cuda_atomic(name, args, scope, hint, span);
        }
        match name {
            "__threadfence_block" | "__threadfence" | "__threadfence_system" => {
                self.device_only(name, name_span)?;
                self.arity(name, args, (0, 0), "no arguments", span)?;
                let scope = match name {
                    "__threadfence_block" => Scope::Cta,
                    "__threadfence" => Scope::Gpu,
                    _ => Scope::Sys,
                };
                self.fence(FenceOrder::Sc, scope, FenceSpaces::ALL, span);
                Ok(Operand::Imm(0))
            }
            "__syncthreads" | "barrier" | "work_group_barrier" => {
                self.device_only(name, name_span)?;
                let mut spaces = FenceSpaces::ALL;
                if name == "__syncthreads" {
                    self.arity(name, args, (0, 0), "no arguments", span)?;
                } else {
                    let max = if name == "barrier" { 1 } else { 2 };
                    self.arity(name, args, (1, max), "flags[, scope]", span)?;
                    if let Some(f) = args.first() {
                        spaces = self.fence_flags(f)?;
                    }
                    if let Some(s) = args.get(1) {
                        self.scope_arg(s)?;
                    }
                }
                self.emit(
                    InstrKind::Barrier {
                        id: Operand::Imm(0),
                        kind: BarrierKind::Sync,
                        count: None, spaces,
                    },
                    span,
                );
                Ok(Operand::Imm(0))
            }
            "cuda::atomic_thread_fence" | "cuda::std::atomic_thread_fence"
            | "std::atomic_thread_fence" => {
                let max = if name == "cuda::atomic_thread_fence" { 2 } else { 1 };
                self.arity(name, args, (1, max), "order[, scope]", span)?;
                let order = self.fence_order(&args[0])?;
                let (scope, explicit) = match args.get(1) {
                    Some(s) => (self.scope_arg(s)?, Some(s.span)),
                    None => (Scope::Sys, None),
                };
                let scope = self.scope(scope, explicit);
                self.fence(order, scope, FenceSpaces::ALL, span);
                Ok(Operand::Imm(0))
            }
            n if HINT_LOADS.contains(&n) => {
                self.device_only(name, name_span)?;
                self.arity(name, args, (1, 1), "pointer", span)?;
                let (p, addr) = self.pointer(&args[0])?;
                let dst = self.build.dst_for(hint, self.ty_at(&addr));
                let _ = p;
                self.emit(
                    InstrKind::Load {
                        dst,
                        addr,
                        ty: self.ty_at(&addr),
                        order: Order::Weak,
                        scope: Scope::Sys,
                    },
                    span,
                );
                Ok(Operand::Reg(dst))
            }
            n if HINT_STORES.contains(&n) => {
                self.device_only(name, name_span)?;
                self.arity(name, args, (2, 2), "pointer, value", span)?;
                let (_, addr) = self.pointer(&args[0])?;
                let v = self.value(&args[1], None)?;
                self.emit(
                    InstrKind::Store {
                        addr,
                        ty: self.ty_at(&addr),
                        value: v,
                        order: Order::Weak,
                        scope: Scope::Sys,
                    },
                    span,
                );
                Ok(Operand::Imm(0))
            }
            _ => Err(err(
                name_span,
                format!("not supported: call to `{name}` (not an atomic, fence or barrier function this dialect knows)"),
            )),
        }
    }

    pub(super) fn cuda_atomic(
        &mut self,
        name: &str,
        args: &[Expr],
        scope: Scope,
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        self.device_only(name, span)?;
        let base = name.trim_end_matches("_block").trim_end_matches("_system");
        let scope = self.scope(scope, None);
        if base == "atomicCAS" {
            self.arity(name, args, (3, 3), "pointer, compare, value", span)?;
            let (_, addr) = self.pointer(&args[0])?;
            let expected = self.value(&args[1], None)?;
            let new = self.value(&args[2], None)?;
            let order = Order::Relaxed;
            let kind = RmwKind::Cas { expected, new };
            return Ok(self.rmw(Atomic { addr, order, scope }, kind, hint, span));
        }
        let op = CUDA_RMW
            .iter()
            .find(|(n, _)| *n == base)
            .map_or(RmwOp::Add, |(_, op)| *op);
        self.arity(name, args, (2, 2), "pointer, value", span)?;
        let (_, addr) = self.pointer(&args[0])?;
        let v = self.value(&args[1], None)?;
        let order = Order::Relaxed;
        Ok(self.rmw(
            Atomic { addr, order, scope },
            RmwKind::Op(op, v),
            hint,
            span,
        ))
    }

    /// The memory order argument at `idx` of an atomic call for `use_`, or `seq_cst` (the
    /// order of the calls without `_explicit`) where there is none.
    pub(super) fn order_at(
        &self,
        args: &[Expr],
        idx: usize,
        use_: Use,
    ) -> Result<Order, Diagnostic> {
        match args.get(idx) {
            Some(o) => self.order_arg(o, use_),
            None => Ok(Order::SeqCst),
        }
    }

    /// Scope argument at `idx` if present, else the object's default.
    pub(super) fn scope_at(
        &mut self,
        args: &[Expr],
        idx: usize,
        p: Ptr,
    ) -> Result<Scope, Diagnostic> {
        let (s, explicit) = match args.get(idx) {
            Some(e) => (self.scope_arg(e)?, Some(e.span)),
            None => (Self::default_scope(p), None),
        };
        Ok(self.scope(s, explicit))
    }

    /// `atomic_compare_exchange_strong/weak[_explicit](object, &expected, desired[, success,
    /// failure[, scope]])`, with `arity` the counts of arguments the form takes.
    pub(super) fn cl_compare_exchange(
        &mut self,
        name: &str,
        args: &[Expr],
        arity: (usize, usize),
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        self.arity(
            name,
            args,
            arity,
            "object, &expected, desired[, success, failure[, scope]]",
            span,
        )?;
        let (p, addr) = self.rmw_obj(name, &args[0])?;
        let expected = self.expected_arg(&args[1])?;
        let new = self.value(&args[2], None)?;
        let order = self.order_at(args, 3, Use::Rmw)?;
        if let Some(f) = args.get(4) {
            self.order_arg(f, Use::Load)?;
        }
        let scope = self.scope_at(args, 5, p)?;
        match expected {
            Expected::Reg(e) => {
                self.compare_exchange(Atomic { addr, order, scope }, e, new, hint, span)
            }
            Expected::Mem(ep, eaddr) => self.compare_exchange_mem(
                Atomic { addr, order, scope },
                (ep, eaddr),
                new,
                hint,
                span,
                args[1].span,
            ),
        }
    }

    pub(super) fn cl_atomic(
        &mut self,
        name: &str,
        base: &str,
        explicit: bool,
        args: &[Expr],
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        // Arity: the plain form takes exactly the operands; `_explicit` adds the order(s) and
        // an optional scope.
        let ar = |n: usize, orders: usize| {
            if explicit {
                (n + orders, n + orders + 1)
            } else {
                (n, n)
            }
        };
        let rmw_op = RMW_MEMBERS
            .iter()
            .find(|(n, _)| *n == base)
            .map(|(_, op)| *op);
        if let Some(op) = rmw_op {
            self.arity(
                name,
                args,
                ar(2, 1),
                "object, value[, order[, scope]]",
                span,
            )?;
            let (p, addr) = self.rmw_obj(name, &args[0])?;
            let v = self.value(&args[1], None)?;
            let order = self.order_at(args, 2, Use::Rmw)?;
            let scope = self.scope_at(args, 3, p)?;
            return Ok(self.rmw(
                Atomic { addr, order, scope },
                RmwKind::Op(op, v),
                hint,
                span,
            ));
        }
        match (base, explicit) {
            ("load", _) => {
                self.arity(name, args, ar(1, 1), "object[, order[, scope]]", span)?;
                let (p, addr) = self.atomic_obj(name, &args[0])?;
                let order = self.order_at(args, 1, Use::Load)?;
                let scope = self.scope_at(args, 2, p)?;
                let dst = self.build.dst_for(hint, self.ty_at(&addr));
                self.emit(
                    InstrKind::Load {
                        dst,
                        addr,
                        ty: self.ty_at(&addr),
                        order,
                        scope,
                    },
                    span,
                );
                Ok(Operand::Reg(dst))
            }
            ("store", _) => {
                self.arity(
                    name,
                    args,
                    ar(2, 1),
                    "object, value[, order[, scope]]",
                    span,
                )?;
                let (p, addr) = self.atomic_obj(name, &args[0])?;
                let v = self.value(&args[1], None)?;
                let order = self.order_at(args, 2, Use::Store)?;
                let scope = self.scope_at(args, 3, p)?;
                self.emit(
                    InstrKind::Store {
                        addr,
                        ty: self.ty_at(&addr),
                        value: v,
                        order,
                        scope,
                    },
                    span,
                );
                Ok(Operand::Imm(0))
            }
            ("compare_exchange_strong" | "compare_exchange_weak", _) => {
                self.cl_compare_exchange(name, args, ar(3, 2), hint, span)
            }
            ("init", false) => {
                self.arity(name, args, (2, 2), "object, value", span)?;
                let (_, addr) = self.atomic_obj(name, &args[0])?;
                let v = self.value(&args[1], None)?;
                self.emit(
                    InstrKind::Store {
                        addr,
                        ty: self.ty_at(&addr),
                        value: v,
                        order: Order::Weak,
                        scope: Scope::Sys,
                    },
                    span,
                );
                Ok(Operand::Imm(0))
            }
            ("work_item_fence", false) => {
                self.device_only(name, span)?;
                self.arity(name, args, (3, 3), "flags, order, scope", span)?;
                let spaces = self.fence_flags(&args[0])?;
                let order = self.fence_order(&args[1])?;
                let scope = self.scope_arg(&args[2])?;
                self.fence(order, scope, spaces, span);
                Ok(Operand::Imm(0))
            }
            ("thread_fence", false) => {
                self.arity(name, args, (1, 2), "order[, scope]", span)?;
                let order = self.fence_order(&args[0])?;
                let (scope, explicit) = match args.get(1) {
                    Some(s) => (self.scope_arg(s)?, Some(s.span)),
                    None => (Scope::Gpu, None),
                };
                let scope = self.scope(scope, explicit);
                self.fence(order, scope, FenceSpaces::ALL, span);
                Ok(Operand::Imm(0))
            }
            _ => Err(err(
                span,
                format!("not supported: call to `{name}` (not an OpenCL atomic function)"),
            )),
        }
    }

    /// libcu++ / std members: `x->load(order)`, `f.store(v, order)`, ...
    pub(super) fn member(
        &mut self,
        obj: &Expr,
        method: &str,
        method_span: Span,
        args: &[Expr],
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        let target = match &obj.kind {
            ExprKind::Unary("&", _) | ExprKind::Binary(..) => Some(self.pointer(obj)?),
            ExprKind::Name(n) => match self.build.lookup(n) {
                Some(Binding::Ptr(p)) | Some(Binding::Ref(p)) => Some((p, Address::loc(p.loc))),
                Some(Binding::Reg(_)) => None,
                None => return Err(self.unknown(n, obj.span)),
            },
            _ => self.place_of(obj)?,
        };
        let Some((p, addr)) = target else {
            return Err(err(
                obj.span,
                "member functions are called on atomic objects: `x->load()` or `f.load()`",
            ));
        };
        let Access::Atomic { scope, .. } = p.access else {
            return Err(err(
                obj.span,
                format!("`{method}` needs an atomic object (declare the parameter `cuda::atomic<int, ...>*` or use `cuda::atomic_ref`)"),
            ));
        };
        let scope = self.scope(scope, None);
        let order_at = |me: &Self, i: usize, u: Use| -> Result<Order, Diagnostic> {
            match args.get(i) {
                Some(o) => me.order_arg(o, u),
                None => Ok(Order::SeqCst),
            }
        };
        if let Some((_, op)) = RMW_MEMBERS.iter().find(|(n, _)| *n == method) {
            self.arity(method, args, (1, 2), "value[, order]", span)?;
            let v = self.value(&args[0], None)?;
            let order = order_at(self, 1, Use::Rmw)?;
            let at = Atomic { addr, order, scope };
            return Ok(self.rmw(at, RmwKind::Op(*op, v), hint, span));
        }
        match method {
            "load" => {
                self.arity(method, args, (0, 1), "[order]", span)?;
                let order = order_at(self, 0, Use::Load)?;
                let dst = self.build.dst_for(hint, self.ty_at(&addr));
                self.emit(
                    InstrKind::Load {
                        dst,
                        addr,
                        ty: self.ty_at(&addr),
                        order,
                        scope,
                    },
                    span,
                );
                Ok(Operand::Reg(dst))
            }
            "store" => {
                self.arity(method, args, (1, 2), "value[, order]", span)?;
                let v = self.value(&args[0], None)?;
                let order = order_at(self, 1, Use::Store)?;
                self.emit(
                    InstrKind::Store {
                        addr,
                        ty: self.ty_at(&addr),
                        value: v,
                        order,
                        scope,
                    },
                    span,
                );
                Ok(Operand::Imm(0))
            }
            "compare_exchange_strong" | "compare_exchange_weak" => {
                self.arity(
                    method,
                    args,
                    (2, 4),
                    "expected, desired[, order | success, failure]",
                    span,
                )?;
                let expected = self.expected_reg(&args[0], false)?;
                let new = self.value(&args[1], None)?;
                let order = order_at(self, 2, Use::Rmw)?;
                if let Some(f) = args.get(3) {
                    self.order_arg(f, Use::Load)?;
                }
                self.compare_exchange(Atomic { addr, order, scope }, expected, new, hint, span)
            }
            _ => Err(err(
                method_span,
                format!("not supported: member function `{method}`"),
            )
            .expecting(&[
                "load",
                "store",
                "exchange",
                "fetch_add",
                "fetch_sub",
                "fetch_and",
                "fetch_or",
                "fetch_xor",
                "fetch_min",
                "fetch_max",
                "compare_exchange_strong",
                "compare_exchange_weak",
            ])),
        }
    }
}
