//! Lowering one thread's AST to IR instructions.
//!
//! Locals become registers named as written (a shadowing declaration gets `name#2`);
//! temporaries are `$t0`, `$t1`, ... (names no C identifier and no condition can spell).
//! Expressions compile to `Mov` / `Binary` with constants folded; conditions compile to
//! branches (`&&`, `||`, `!` by jumping, comparisons straight into `Eq` / `Ne` branches).
//! A loop with an empty body and a condition is one block ending in one backward branch
//! (`L: ld r, f; beq r, 0, L`), so that the explorer recognises await loops.

use super::parse::{Access, CType, Expr, ExprKind, Stmt, StmtKind, THREAD_SCOPES};
use crate::build::CodeBuilder;
use crate::vocab::{
    cl_scope, cuda_atomic, op_types, order_name, CL_SCOPES, CUDA_RMW, HINT_LOADS, HINT_STORES,
    ORDERS, RMW_MEMBERS,
};
use scopecheck_ir::{
    Address, Arithmetic, BarrierKind, BinOp, BranchCond, Diagnostic, FenceOrder, FenceSpaces,
    InstrKind, IntType, LocId, Operand, Order, RegId, RmwKind, RmwOp, Scope, Span,
};

/// A pointer parameter (or an atomic reference): its location and how it is accessed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ptr {
    /// The location it points to: an array's first element.
    pub loc: LocId,
    /// The number of elements from `loc` on (1 unless it points to an array).
    pub len: u32,
    pub access: Access,
    /// The type of the value it points to.
    pub ty: IntType,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Binding {
    Reg(RegId),
    Ptr(Ptr),
    /// `cuda::atomic_ref<...> f(*x)`: `f` names the atomic object itself.
    Ref(Ptr),
}

/// Where a compare-exchange finds its expected value.
enum Expected {
    /// A local variable (`&e`).
    Reg(RegId),
    /// An object in memory (`e` a pointer parameter).
    Mem(Ptr, Address),
}

/// An atomic access: the address, order and scope an RMW or compare-exchange operates with.
#[derive(Clone, Copy)]
struct Atomic {
    addr: Address,
    order: Order,
    scope: Scope,
}

/// What an order is used for, to reject the orders C forbids there.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Load,
    Store,
    Rmw,
}

pub(crate) struct Lower<'a> {
    src: &'a str,
    host: bool,
    /// The registers, code, names and labels (shared with the CUDA front-end).
    pub(crate) build: CodeBuilder<Binding>,
    /// (continue label, break label) of the enclosing loops.
    loops: Vec<(usize, usize)>,
    /// The type of each location this thread reaches, from its declaration.
    loc_types: Vec<(LocId, IntType)>,
    pub(crate) warnings: Vec<Diagnostic>,
}

fn order_word(o: Order) -> &'static str {
    match o {
        Order::Weak | Order::Volatile | Order::Relaxed => "memory_order_relaxed",
        Order::Acquire => "memory_order_acquire",
        Order::Release => "memory_order_release",
        Order::AcqRel => "memory_order_acq_rel",
        Order::SeqCst => "memory_order_seq_cst",
    }
}

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(msg).at(span)
}

impl<'a> Lower<'a> {
    pub(crate) fn new(src: &'a str, host: bool) -> Self {
        Lower {
            src,
            host,
            build: CodeBuilder::new(Vec::new()),
            loops: Vec::new(),
            loc_types: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Binds a parameter name; false when the name is taken.
    pub(crate) fn bind_param(&mut self, name: &str, ptr: Ptr) -> bool {
        if self.build.lookup(name).is_some() {
            return false;
        }
        for e in 0..ptr.len {
            self.loc_types.push((LocId(ptr.loc.0 + e), ptr.ty));
        }
        self.build.bind(name, Binding::Ptr(ptr));
        true
    }

    /// Creates (or finds) a register the initial state names, bound in the outermost scope.
    pub(crate) fn init_register(&mut self, name: &str) -> Result<RegId, String> {
        match self.build.lookup(name) {
            Some(Binding::Reg(r)) => Ok(r),
            Some(_) => Err(format!(
                "`{name}` is a parameter of this thread, not a register"
            )),
            None => {
                let r = self.build.new_reg(name, IntType::S32);
                self.build.bind(name, Binding::Reg(r));
                Ok(r)
            }
        }
    }

    /// Lowers the body and resolves the branches.
    pub(crate) fn body(&mut self, body: &Stmt) -> Result<(), Diagnostic> {
        self.stmt(body)?;
        self.build.resolve();
        Ok(())
    }

    // ---- names, registers, labels, emission ----

    /// The type of the location an access touches (declared with the parameter).
    fn ty_at(&self, addr: &Address) -> IntType {
        let Address::Loc { loc, .. } = *addr else {
            return IntType::S64;
        };
        self.loc_types
            .iter()
            .find(|(l, _)| *l == loc)
            .map_or(IntType::S32, |(_, t)| *t)
    }

    /// Appends an instruction whose text is the source at `span`.
    fn emit(&mut self, kind: InstrKind, span: Span) {
        let source = self.source(span);
        self.build.emit(kind, span, source);
    }

    fn branch(&mut self, cond: BranchCond, label: usize, span: Span) {
        let source = self.source(span);
        self.build.branch(cond, label, span, source);
    }

    fn source(&self, span: Span) -> &'a str {
        self.src
            .get(span.offset..span.offset + span.len)
            .unwrap_or("")
    }

    fn warn(&mut self, span: Span, message: String) {
        self.warnings.push(Diagnostic::warning(message).at(span));
    }

    /// The scope an operation gets: host threads always operate at system scope.
    fn scope(&mut self, scope: Scope, explicit: Option<Span>) -> Scope {
        if self.host {
            if let Some(span) = explicit {
                if scope != Scope::Sys {
                    self.warn(
                        span,
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

    fn device_only(&self, name: &str, span: Span) -> Result<(), Diagnostic> {
        if self.host {
            return Err(err(
                span,
                format!("`{name}` is a device function; a host thread (`@host`) cannot call it"),
            ));
        }
        Ok(())
    }

    // ---- statements ----

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        match &s.kind {
            StmtKind::Empty => {}
            StmtKind::Block(b) => self.block(b)?,
            StmtKind::Decl(declared, vars) => {
                for (name, span, init) in vars {
                    if self
                        .build
                        .scopes
                        .last()
                        .is_some_and(|sc| sc.iter().any(|(n, _)| n == name))
                    {
                        return Err(err(
                            *span,
                            format!("`{name}` is already declared in this block"),
                        ));
                    }
                    // `auto` takes the initializer's type.
                    let (r, v) = match (declared, init) {
                        (Some(ty), Some(e)) => {
                            let r = self.build.new_reg(name, *ty);
                            (r, Some(self.value(e, Some(r))?))
                        }
                        (None, Some(e)) => {
                            let v = self.value(e, None)?;
                            (self.build.new_reg(name, self.build.operand_ty(v)), Some(v))
                        }
                        (ty, None) => (self.build.new_reg(name, ty.unwrap_or(IntType::S32)), None),
                    };
                    if let Some(v) = v {
                        self.mov(r, v, s.span);
                    }
                    self.build.bind(name, Binding::Reg(r));
                }
            }
            StmtKind::RefDecl {
                ty,
                name,
                name_span,
                target,
            } => self.ref_decl(ty, name, *name_span, target)?,
            StmtKind::Assign { target, op, value } => self.assign(target, op, value, s.span)?,
            StmtKind::Expr(e) => {
                self.value(e, None)?;
            }
            StmtKind::If(c, then, els) => self.if_stmt(c, then, els.as_deref())?,
            StmtKind::While(c, body) => self.loop_(Some(c), None, body, c.span)?,
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => self.for_stmt(
                init.as_deref(),
                cond.as_ref(),
                step.as_deref(),
                body,
                s.span,
            )?,
            StmtKind::DoWhile(body, c) => self.do_stmt(body, c)?,
            StmtKind::Break | StmtKind::Continue => {
                let Some(&(cont, end)) = self.loops.last() else {
                    let w = if s.kind == StmtKind::Break {
                        "break"
                    } else {
                        "continue"
                    };
                    return Err(err(s.span, format!("`{w}` outside a loop")));
                };
                let l = if s.kind == StmtKind::Break { end } else { cont };
                self.branch(BranchCond::Always, l, s.span);
            }
            StmtKind::Return => {
                let l = self.build.end_label;
                self.branch(BranchCond::Always, l, s.span);
            }
        }
        Ok(())
    }

    #[inline(never)]
    fn block(&mut self, b: &[Stmt]) -> Result<(), Diagnostic> {
        self.build.scopes.push(Vec::new());
        let r = b.iter().try_for_each(|s| self.stmt(s));
        self.build.scopes.pop();
        r
    }

    #[inline(never)]
    fn if_stmt(&mut self, c: &Expr, then: &Stmt, els: Option<&Stmt>) -> Result<(), Diagnostic> {
        // `if (c) break;` and `if (c) continue;` branch straight to the loop's exit or next
        // iteration.
        if let (None, Some(&(cont, end))) = (els, self.loops.last()) {
            let jump = match &then.kind {
                StmtKind::Block(b) if b.len() == 1 => &b[0].kind,
                k => k,
            };
            match jump {
                StmtKind::Break => return self.branch_if(c, true, end),
                StmtKind::Continue => return self.branch_if(c, true, cont),
                _ => {}
            }
        }
        let else_l = self.build.new_label();
        self.branch_if(c, false, else_l)?;
        self.stmt(then)?;
        if let Some(els) = els {
            let end = self.build.new_label();
            self.branch(BranchCond::Always, end, c.span);
            self.build.set_label(else_l);
            self.stmt(els)?;
            self.build.set_label(end);
        } else {
            self.build.set_label(else_l);
        }
        Ok(())
    }

    #[inline(never)]
    fn for_stmt(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Stmt>,
        body: &Stmt,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.build.scopes.push(Vec::new());
        let r = (|| {
            if let Some(i) = init {
                self.stmt(i)?;
            }
            self.loop_(cond, step, body, span)
        })();
        self.build.scopes.pop();
        r
    }

    #[inline(never)]
    fn do_stmt(&mut self, body: &Stmt, c: &Expr) -> Result<(), Diagnostic> {
        let head = self.build.new_label();
        let cont = self.build.new_label();
        let end = self.build.new_label();
        self.build.set_label(head);
        self.loops.push((cont, end));
        let r = self.stmt(body);
        self.loops.pop();
        r?;
        self.build.set_label(cont);
        self.branch_if(c, true, head)?;
        self.build.set_label(end);
        Ok(())
    }

    /// `while` and `for`: `L: if !c goto END; body; CONT: step; goto L; END:`, or, when there
    /// is no body and no step, `L: if c goto L`.
    #[inline(never)]
    fn loop_(
        &mut self,
        cond: Option<&Expr>,
        step: Option<&Stmt>,
        body: &Stmt,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let head = self.build.new_label();
        let cont = self.build.new_label();
        let end = self.build.new_label();
        self.build.set_label(head);
        if body.is_empty() && step.iter().all(|s| s.is_empty()) {
            match cond {
                Some(c) => self.branch_if(c, true, head)?,
                None => self.branch(BranchCond::Always, head, span),
            }
            return Ok(());
        }
        if let Some(c) = cond {
            self.branch_if(c, false, end)?;
        }
        self.loops.push((cont, end));
        let r = self.stmt(body);
        self.loops.pop();
        r?;
        self.build.set_label(cont);
        if let Some(st) = step {
            self.stmt(st)?;
        }
        self.branch(BranchCond::Always, head, cond.map_or(span, |c| c.span));
        self.build.set_label(end);
        Ok(())
    }

    fn ref_decl(
        &mut self,
        ty: &CType,
        name: &str,
        name_span: Span,
        target: &Expr,
    ) -> Result<(), Diagnostic> {
        let Some((ptr, addr)) = self.place_of(target)? else {
            return Err(err(
                target.span,
                "an atomic reference binds to a location: write `*x` or `x[0]`",
            ));
        };
        if addr.fixed().is_none() {
            return Err(err(
                target.span,
                "not supported: an atomic reference to a computed address",
            ));
        }
        if self
            .build
            .scopes
            .last()
            .is_some_and(|sc| sc.iter().any(|(n, _)| n == name))
        {
            return Err(err(
                name_span,
                format!("`{name}` is already declared in this block"),
            ));
        }
        self.build.bind(
            name,
            Binding::Ref(Ptr {
                loc: addr.fixed().unwrap_or(ptr.loc),
                len: 1,
                access: ty.access,
                ty: ptr.ty,
            }),
        );
        Ok(())
    }

    /// `dst = v`, converted to `dst`'s type as C converts on assignment (wrapping to the
    /// width: conversion to a signed type is two's complement in CUDA and OpenCL C).
    fn mov(&mut self, dst: RegId, v: Operand, span: Span) {
        if v == Operand::Reg(dst) {
            return;
        }
        let ty = self.build.reg_ty(dst);
        match v {
            Operand::Imm(x) => self.emit(
                InstrKind::Mov {
                    dst,
                    src: Operand::Imm(ty.wrap(x)),
                },
                span,
            ),
            Operand::Reg(r) if self.build.reg_ty(r) == ty => {
                self.emit(InstrKind::Mov { dst, src: v }, span)
            }
            // A conversion: `v | 0` computed in the target type is `v` wrapped to it.
            Operand::Reg(_) => self.emit(
                InstrKind::Binary {
                    dst,
                    op: BinOp::Or,
                    ty,
                    a: v,
                    b: Operand::Imm(0),
                },
                span,
            ),
        }
    }

    fn assign(
        &mut self,
        target: &Expr,
        op: &str,
        value: &Expr,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let bin = match op {
            "=" => None,
            "+=" => Some(BinOp::Add),
            "-=" => Some(BinOp::Sub),
            "*=" => Some(BinOp::Mul),
            "&=" => Some(BinOp::And),
            "|=" => Some(BinOp::Or),
            "^=" => Some(BinOp::Xor),
            "/=" => Some(BinOp::Div),
            "%=" => Some(BinOp::Rem),
            "<<=" => Some(BinOp::Shl),
            ">>=" => Some(BinOp::Shr),
            _ => return Err(err(span, format!("not supported: `{op}`"))),
        };
        if let ExprKind::Name(n) = &target.kind {
            match self.build.lookup(n) {
                Some(Binding::Reg(r)) => {
                    match bin {
                        None => {
                            let v = self.value(value, Some(r))?;
                            self.mov(r, v, span);
                        }
                        Some(b) => {
                            // `r op= v` is `r = r op v`, converted back to `r`'s type.
                            let v = self.value(value, None)?;
                            let res = self.binary(b, Operand::Reg(r), v, Some(r), span)?;
                            self.mov(r, res, span);
                        }
                    }
                    return Ok(());
                }
                Some(Binding::Ptr(_)) => {
                    return Err(err(
                        target.span,
                        format!("not supported: assigning to the pointer `{n}` (write `*{n} = ...` to store)"),
                    ))
                }
                Some(Binding::Ref(_)) => {}
                None => return Err(self.unknown(n, target.span)),
            }
        }
        let Some((ptr, addr)) = self.place_of(target)? else {
            return Err(err(
                target.span,
                "cannot assign to this expression: expected a variable, `*x` or `x[0]`",
            ));
        };
        match (bin, ptr.access) {
            (None, _) => {
                let v = self.value(value, None)?;
                self.store(ptr, addr, v, span);
            }
            (Some(b), Access::Atomic { scope, .. }) => {
                // `*x += v` on an atomic is a seq_cst fetch_add (C++ operator+=).
                let rop = match b {
                    BinOp::Add => RmwOp::Add,
                    BinOp::Sub => RmwOp::Sub,
                    BinOp::And => RmwOp::And,
                    BinOp::Or => RmwOp::Or,
                    BinOp::Xor => RmwOp::Xor,
                    _ => {
                        return Err(err(
                            span,
                            format!(
                                "not supported: `{op}` on an atomic (no such atomic operation)"
                            ),
                        ))
                    }
                };
                let v = self.value(value, None)?;
                let scope = self.scope(scope, None);
                let dst = self.build.temp(ptr.ty);
                self.emit(
                    InstrKind::Rmw {
                        dst: Some(dst),
                        addr,
                        ty: self.ty_at(&addr),
                        kind: RmwKind::Op(rop, v),
                        order: Order::SeqCst,
                        scope,
                    },
                    span,
                );
            }
            (Some(b), _) => {
                let old = self.load(ptr, addr, None, target.span);
                let v = self.value(value, None)?;
                let t = self.binary(b, old, v, None, span)?;
                self.store(ptr, addr, t, span);
            }
        }
        Ok(())
    }

    fn unknown(&self, name: &str, span: Span) -> Diagnostic {
        let known: Vec<String> = self
            .build
            .scopes
            .iter()
            .flatten()
            .map(|(n, _)| format!("`{n}`"))
            .collect();
        err(
            span,
            format!("unknown name `{name}`: not a local variable or a parameter of this thread"),
        )
        .expecting(&known)
    }

    // ---- memory places ----

    /// The pointer an expression denotes, with its offset register (`x`, `&x[i]`, `&*x`,
    /// `x + i`, `&f` for an atomic reference).
    fn pointer(&mut self, e: &Expr) -> Result<(Ptr, Address), Diagnostic> {
        match &e.kind {
            ExprKind::Name(n) => match self.build.lookup(n) {
                Some(Binding::Ptr(p)) => Ok((
                    p,
                    Address::loc(p.loc),
                )),
                Some(Binding::Reg(_)) => Err(err(
                    e.span,
                    format!("`{n}` is a local value, not a pointer to a shared location"),
                )),
                Some(Binding::Ref(_)) => Err(err(
                    e.span,
                    format!("`{n}` is an atomic reference: pass `&{n}`, or call `{n}.load()`"),
                )),
                None => Err(self.unknown(n, e.span)),
            },
            ExprKind::Unary("&", inner) => match &inner.kind {
                ExprKind::Unary("*", _) | ExprKind::Index(..) => self.place_of(inner)?.ok_or_else(
                    || err(e.span, "expected a pointer such as `x` or `&x[0]`"),
                ),
                ExprKind::Name(n) => match self.build.lookup(n) {
                    Some(Binding::Ref(p)) => Ok((
                        p,
                        Address::loc(p.loc),
                    )),
                    Some(Binding::Ptr(_)) => Err(err(
                        e.span,
                        format!("`&{n}` is the address of the pointer itself; pass `{n}`"),
                    )),
                    _ => Err(err(e.span, "not supported: addresses of local variables")),
                },
                _ => Err(err(e.span, "expected a pointer such as `x` or `&x[0]`")),
            },
            ExprKind::Binary("+", ..) => self.pointer_plus(e),
            ExprKind::Binary("-", _, _) => Err(err(
                e.span,
                "not supported: pointer arithmetic (only `x[0]`, or an offset register that is 0 at run time)",
            )),
            _ => Err(err(
                e.span,
                "expected a pointer parameter such as `x` or `&x[0]`",
            )),
        }
    }

    /// `p + i + j ...`: the chain nests to the left as deep as it is long, so it is walked by
    /// a loop, the pointer first, then each offset in order.
    fn pointer_plus(&mut self, e: &Expr) -> Result<(Ptr, Address), Diagnostic> {
        let mut offsets = Vec::new();
        let mut base = e;
        while let ExprKind::Binary("+", a, b) = &base.kind {
            offsets.push((&**b, base.span));
            base = a;
        }
        let (p, mut addr) = self.pointer(base)?;
        for (i, span) in offsets.into_iter().rev() {
            addr = self.index(p, addr, i, span)?;
        }
        Ok((p, addr))
    }

    /// The element `i` places after `base` (`p[i]`, `p + i`): a constant index names the
    /// element itself, checked against the array's bounds now; a register is an address
    /// dependency, its bounds checked when it runs.
    fn index(
        &mut self,
        p: Ptr,
        base: Address,
        i: &Expr,
        span: Span,
    ) -> Result<Address, Diagnostic> {
        let v = self.value(i, None)?;
        match (base, v) {
            (_, Operand::Imm(0)) => Ok(base),
            (Address::Loc { loc, index: None }, Operand::Imm(n)) => {
                let at = i64::from(loc.0 - p.loc.0) + n;
                if (0..i64::from(p.len)).contains(&at) {
                    return Ok(Address::loc(LocId(p.loc.0 + at as u32)));
                }
                let what = self
                    .src
                    .get(span.offset..span.offset + span.len)
                    .unwrap_or("");
                Err(err(
                    i.span,
                    if p.len == 1 {
                        format!(
                            "`{what}` leaves its location, which holds one value (an array is declared in the initial state: `int a[2];`)"
                        )
                    } else {
                        format!(
                            "`{what}` is out of bounds of an array of {} elements",
                            p.len
                        )
                    },
                ))
            }
            (Address::Loc { loc, index: None }, Operand::Reg(r)) => Ok(Address::Loc {
                loc,
                index: Some(r),
            }),
            _ => Err(err(
                i.span,
                "not supported: an index added to an address that already has an index register",
            )),
        }
    }

    /// The location an lvalue denotes: `*p`, `p[i]`, or an atomic reference `f`; `None` when
    /// the expression is not a memory place.
    fn place_of(&mut self, e: &Expr) -> Result<Option<(Ptr, Address)>, Diagnostic> {
        match &e.kind {
            ExprKind::Unary("*", p) => Ok(Some(self.pointer(p)?)),
            ExprKind::Index(p, i) => {
                let (ptr, base) = self.pointer(p)?;
                let addr = self.index(ptr, base, i, e.span)?;
                Ok(Some((ptr, addr)))
            }
            ExprKind::Name(n) => match self.build.lookup(n) {
                Some(Binding::Ref(p)) => Ok(Some((p, Address::loc(p.loc)))),
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// A plain-syntax load: weak, volatile, or seq_cst on an atomic.
    fn load(&mut self, ptr: Ptr, addr: Address, hint: Option<RegId>, span: Span) -> Operand {
        let (order, scope) = match ptr.access {
            Access::Plain => (Order::Weak, Scope::Sys),
            Access::Volatile => (Order::Volatile, Scope::Sys),
            Access::Atomic { scope, .. } => (Order::SeqCst, self.scope(scope, None)),
        };
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
        Operand::Reg(dst)
    }

    fn store(&mut self, ptr: Ptr, addr: Address, value: Operand, span: Span) {
        let (order, scope) = match ptr.access {
            Access::Plain => (Order::Weak, Scope::Sys),
            Access::Volatile => (Order::Volatile, Scope::Sys),
            Access::Atomic { scope, .. } => (Order::SeqCst, self.scope(scope, None)),
        };
        self.emit(
            InstrKind::Store {
                addr,
                ty: self.ty_at(&addr),
                value,
                order,
                scope,
            },
            span,
        );
    }

    // ---- expressions ----

    /// Whether evaluating `e` has no effect but computing registers (so `&&` may evaluate
    /// both sides).
    /// (A work list, not recursion: an operand may be a chain as long as the file.)
    fn is_pure(&self, e: &Expr) -> bool {
        let mut pending = vec![e];
        while let Some(e) = pending.pop() {
            let pure = match &e.kind {
                ExprKind::Int(_) => true,
                ExprKind::Name(n) => matches!(self.build.lookup(n), Some(Binding::Reg(_))),
                ExprKind::Unary(op, a) => {
                    pending.push(a);
                    !matches!(*op, "*" | "&")
                }
                ExprKind::Binary(_, a, b) => {
                    pending.extend([&**b, &**a]);
                    true
                }
                ExprKind::Ternary(..)
                | ExprKind::Index(..)
                | ExprKind::Call { .. }
                | ExprKind::Member { .. } => false,
            };
            if !pure {
                return false;
            }
        }
        true
    }

    /// `a op b` in C's types: both operands are promoted to at least `int` and converted to
    /// their common type (the usual arithmetic conversions; a shift has the promoted type of
    /// its left operand); comparisons give an `int`. Constants fold, and a constant
    /// expression with undefined behaviour is an error.
    fn binary(
        &mut self,
        op: BinOp,
        a: Operand,
        b: Operand,
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        let (ta, tb) = (self.build.operand_ty(a), self.build.operand_ty(b));
        let (ty, result) = op_types(op, ta, tb);
        if let (Operand::Imm(x), Operand::Imm(y)) = (a, b) {
            return op
                .eval(ty, Arithmetic::C, x, y)
                .map(Operand::Imm)
                .map_err(|why| {
                    err(
                        span,
                        format!("this constant expression is undefined: {why}"),
                    )
                });
        }
        let dst = self.build.dst_for(hint, result);
        self.emit(InstrKind::Binary { dst, op, ty, a, b }, span);
        Ok(Operand::Reg(dst))
    }

    /// Evaluates `e`; the result goes to `hint` when an instruction computes it (the caller
    /// moves it there otherwise).
    fn value(&mut self, e: &Expr, hint: Option<RegId>) -> Result<Operand, Diagnostic> {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(v) => Ok(Operand::Imm(*v)),
            ExprKind::Name(n) => match self.build.lookup(n) {
                Some(Binding::Reg(r)) => Ok(Operand::Reg(r)),
                Some(Binding::Ref(p)) => Ok(self.load(p, Address::loc(p.loc), hint, span)),
                Some(Binding::Ptr(_)) => Err(err(
                    span,
                    format!("`{n}` is a pointer: read the location with `*{n}`"),
                )),
                None => Err(self.unknown(n, span)),
            },
            ExprKind::Unary(op, a) => match *op {
                "+" => self.value(a, hint),
                "-" => {
                    let v = self.value(a, None)?;
                    self.binary(BinOp::Sub, Operand::Imm(0), v, hint, span)
                }
                "!" => {
                    let v = self.value(a, None)?;
                    self.binary(BinOp::Eq, v, Operand::Imm(0), hint, span)
                }
                "~" => {
                    let v = self.value(a, None)?;
                    self.binary(BinOp::Xor, v, Operand::Imm(-1), hint, span)
                }
                "*" => {
                    let (p, addr) = self.pointer(a)?;
                    Ok(self.load(p, addr, hint, span))
                }
                _ => Err(err(
                    span,
                    "not supported: address values (pass pointers only to atomic functions)",
                )),
            },
            ExprKind::Index(..) => match self.place_of(e)? {
                Some((p, addr)) => Ok(self.load(p, addr, hint, span)),
                None => Err(err(span, "expected `x[0]`")),
            },
            ExprKind::Binary(op, a, b) => match *op {
                "&&" | "||" => {
                    if self.is_pure(a) && self.is_pure(b) {
                        let va = self.value(a, None)?;
                        let na = self.binary(BinOp::Ne, va, Operand::Imm(0), None, span)?;
                        let vb = self.value(b, None)?;
                        let nb = self.binary(BinOp::Ne, vb, Operand::Imm(0), None, span)?;
                        let bop = if *op == "&&" { BinOp::And } else { BinOp::Or };
                        return self.binary(bop, na, nb, hint, span);
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
                        span,
                    );
                    self.branch(BranchCond::Always, end, span);
                    self.build.set_label(f);
                    self.emit(
                        InstrKind::Mov {
                            dst: t,
                            src: Operand::Imm(0),
                        },
                        span,
                    );
                    self.build.set_label(end);
                    Ok(Operand::Reg(t))
                }
                _ => self.arith_chain(e, hint),
            },
            ExprKind::Ternary(c, a, b) => {
                let els = self.build.new_label();
                let end = self.build.new_label();
                self.branch_if(c, false, els)?;
                // The result has the first arm's type (the second converts to it).
                let va = self.value(a, None)?;
                let t = self.build.temp(self.build.operand_ty(va));
                self.mov(t, va, a.span);
                self.branch(BranchCond::Always, end, span);
                self.build.set_label(els);
                let vb = self.value(b, Some(t))?;
                self.mov(t, vb, b.span);
                self.build.set_label(end);
                Ok(Operand::Reg(t))
            }
            ExprKind::Call {
                name,
                name_span,
                args,
            } => self.call(name, *name_span, args, hint, span),
            ExprKind::Member {
                obj,
                method,
                method_span,
                args,
            } => self.member(obj, method, *method_span, args, hint, span),
        }
    }

    /// `a op b` for an operator other than `&&` and `||`. Such a chain (`a + b + c ...`) nests
    /// to the left as deep as it is long, so it is walked by a loop: the leftmost operand is
    /// evaluated first, then each right operand and its operation, in the order the
    /// recursion would take.
    fn arith_chain(&mut self, e: &Expr, hint: Option<RegId>) -> Result<Operand, Diagnostic> {
        let mut spine: Vec<(&'static str, &Expr, Span)> = Vec::new();
        let mut leftmost = e;
        while let ExprKind::Binary(op, a, b) = &leftmost.kind {
            if matches!(*op, "&&" | "||") {
                break;
            }
            spine.push((op, b, leftmost.span));
            leftmost = a;
        }
        let mut acc = self.value(leftmost, None)?;
        let outermost = spine.len();
        for (k, (op, b, span)) in spine.into_iter().rev().enumerate() {
            let vb = self.value(b, None)?;
            let hint = if k + 1 == outermost { hint } else { None };
            acc = self.arith(op, acc, vb, hint, span)?;
        }
        Ok(acc)
    }

    /// `va op vb` for an arithmetic or comparison operator.
    fn arith(
        &mut self,
        op: &str,
        va: Operand,
        vb: Operand,
        hint: Option<RegId>,
        span: Span,
    ) -> Result<Operand, Diagnostic> {
        let (bop, x, y) = match op {
            "+" => (BinOp::Add, va, vb),
            "-" => (BinOp::Sub, va, vb),
            "*" => (BinOp::Mul, va, vb),
            "/" => (BinOp::Div, va, vb),
            "%" => (BinOp::Rem, va, vb),
            "<<" => (BinOp::Shl, va, vb),
            ">>" => (BinOp::Shr, va, vb),
            "&" => (BinOp::And, va, vb),
            "|" => (BinOp::Or, va, vb),
            "^" => (BinOp::Xor, va, vb),
            "==" => (BinOp::Eq, va, vb),
            "!=" => (BinOp::Ne, va, vb),
            "<" => (BinOp::Lt, va, vb),
            "<=" => (BinOp::Le, va, vb),
            ">" => (BinOp::Lt, vb, va),
            ">=" => (BinOp::Le, vb, va),
            _ => return Err(err(span, format!("not supported: operator `{op}`"))),
        };
        self.binary(bop, x, y, hint, span)
    }

    /// Emits code that jumps to `label` when `e` is `when` and falls through otherwise.
    fn branch_if(&mut self, e: &Expr, when: bool, label: usize) -> Result<(), Diagnostic> {
        let span = e.span;
        match &e.kind {
            ExprKind::Unary("!", a) => self.branch_if(a, !when, label),
            ExprKind::Binary(op @ ("&&" | "||"), a, b) => {
                // `a && b` is true when both are; `a || b` is false when both are.
                let both = (*op == "&&") == when;
                if both {
                    let skip = self.build.new_label();
                    self.branch_if(a, !when, skip)?;
                    self.branch_if(b, when, label)?;
                    self.build.set_label(skip);
                } else {
                    self.branch_if(a, when, label)?;
                    self.branch_if(b, when, label)?;
                }
                Ok(())
            }
            ExprKind::Binary(op @ ("==" | "!="), a, b) => {
                let va = self.value(a, None)?;
                let vb = self.value(b, None)?;
                let eq = (*op == "==") == when;
                self.cond_branch(eq, va, vb, label, span);
                Ok(())
            }
            _ => {
                let v = self.value(e, None)?;
                self.cond_branch(!when, v, Operand::Imm(0), label, span);
                Ok(())
            }
        }
    }

    /// Branches to `label` when `a == b` (`eq`) or `a != b` (`!eq`), folding constants.
    fn cond_branch(&mut self, eq: bool, a: Operand, b: Operand, label: usize, span: Span) {
        if let (Operand::Imm(x), Operand::Imm(y)) = (a, b) {
            if (x == y) == eq {
                self.branch(BranchCond::Always, label, span);
            }
            return;
        }
        let (ta, tb) = (self.build.operand_ty(a), self.build.operand_ty(b));
        let source = self.source(span);
        self.build
            .branch_eq(eq, (a, ta), (b, tb), label, (span, source));
    }

    // ---- calls ----

    fn arity(
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

    fn order_arg(&self, e: &Expr, use_: Use) -> Result<Order, Diagnostic> {
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

    fn scope_arg(&self, e: &Expr) -> Result<Scope, Diagnostic> {
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

    fn fence_order(&self, e: &Expr) -> Result<FenceOrder, Diagnostic> {
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
    fn fence_flags(&self, e: &Expr) -> Result<FenceSpaces, Diagnostic> {
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
    fn fence_flag(&self, e: &Expr) -> Result<FenceSpaces, Diagnostic> {
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
    fn atomic_obj(&mut self, name: &str, e: &Expr) -> Result<(Ptr, Address), Diagnostic> {
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
    fn rmw_obj(&mut self, name: &str, e: &Expr) -> Result<(Ptr, Address), Diagnostic> {
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
    fn expected_arg(&mut self, e: &Expr) -> Result<Expected, Diagnostic> {
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

    fn default_scope(p: Ptr) -> Scope {
        match p.access {
            Access::Atomic { scope, .. } => scope,
            _ => Scope::Gpu,
        }
    }

    /// `&expected` of a C compare-exchange: a local variable.
    fn expected_reg(&self, e: &Expr, by_ref: bool) -> Result<RegId, Diagnostic> {
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

    fn rmw(&mut self, at: Atomic, kind: RmwKind, hint: Option<RegId>, span: Span) -> Operand {
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
    fn compare_exchange(
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
    fn compare_exchange_mem(
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

    fn fence(&mut self, order: FenceOrder, scope: Scope, spaces: FenceSpaces, span: Span) {
        self.emit(
            InstrKind::Fence {
                order,
                scope,
                spaces,
            },
            span,
        );
    }

    fn call(
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

    fn cuda_atomic(
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

    /// Scope argument at `idx` if present, else the object's default.
    fn scope_at(&mut self, args: &[Expr], idx: usize, p: Ptr) -> Result<Scope, Diagnostic> {
        let (s, explicit) = match args.get(idx) {
            Some(e) => (self.scope_arg(e)?, Some(e.span)),
            None => (Self::default_scope(p), None),
        };
        Ok(self.scope(s, explicit))
    }

    /// `atomic_compare_exchange_strong/weak[_explicit](object, &expected, desired[, success,
    /// failure[, scope]])`, with `arity` the counts of arguments the form takes.
    fn cl_compare_exchange(
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
        let order = match args.get(3) {
            Some(o) => self.order_arg(o, Use::Rmw)?,
            None => Order::SeqCst,
        };
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

    fn cl_atomic(
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
            let order = match args.get(2) {
                Some(o) => self.order_arg(o, Use::Rmw)?,
                None => Order::SeqCst,
            };
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
                let order = match args.get(1) {
                    Some(o) => self.order_arg(o, Use::Load)?,
                    None => Order::SeqCst,
                };
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
                let order = match args.get(2) {
                    Some(o) => self.order_arg(o, Use::Store)?,
                    None => Order::SeqCst,
                };
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
    fn member(
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
