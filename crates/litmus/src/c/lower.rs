//! Lowering one thread's AST to IR instructions.
//!
//! Locals become registers named as written (a shadowing declaration gets `name#2`);
//! temporaries are `$t0`, `$t1`, ... (names no C identifier and no condition can spell).
//! Expressions compile to `Mov` / `Binary` with constants folded; conditions compile to
//! branches (`&&`, `||`, `!` by jumping, comparisons straight into `Eq` / `Ne` branches).
//! A loop with an empty body and a condition is one block ending in one backward branch
//! (`L: ld r, f; beq r, 0, L`), so that the explorer recognises await loops.

use super::parse::{Access, CType, Expr, ExprKind, Stmt, StmtKind};
use crate::build::CodeBuilder;
use crate::vocab::op_types;
use scopecheck_ir::{
    Address, Arithmetic, BinOp, BranchCond, Diagnostic, InstrKind, IntType, LocId, Operand, Order,
    RegId, RmwKind, RmwOp, Scope, Span,
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
}

mod calls;
