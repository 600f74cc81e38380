//! The C dialect's syntax: token stream helpers, types, statements and expressions, read into
//! a small AST ([`Stmt`], [`Expr`]) that [`super::lower`] turns into IR.

use super::lexer::{CTok, CToken};
use scopecheck_ir::{Diagnostic, IntType, MemorySpace, Scope, Span};

/// How deeply statements and expressions may nest; far beyond any real test and low enough
/// that the recursion (here and in lowering) cannot exhaust the stack. A chain of `&&` / `||`
/// operators, and of postfix `[i]`, `.f()`, `->f()`, counts a level per operator: lowering
/// walks those chains recursively.
pub(crate) const MAX_DEPTH: usize = 100;

/// The most binary operators one chain (`a + b + c ...`, read left to right) may have. The
/// chain is parsed by a loop and lowered by one ([`super::lower`]), so it takes no stack; the
/// bound keeps a hostile file's tree (one node per operator) to a sensible size.
pub(crate) const MAX_CHAIN: usize = 100_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ExprKind {
    Int(i64),
    Name(String),
    /// `-e`, `!e`, `~e`, `+e`, `*e` (dereference), `&e` (address).
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Index(Box<Expr>, Box<Expr>),
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
    },
    /// `obj->method(args)` or `obj.method(args)`.
    Member {
        obj: Box<Expr>,
        method: String,
        method_span: Span,
        args: Vec<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// Takes the node's children out, leaving it a leaf.
    fn take_children(&mut self, into: &mut Vec<Expr>) {
        let kind = std::mem::replace(&mut self.kind, ExprKind::Int(0));
        match kind {
            ExprKind::Int(_) | ExprKind::Name(_) => {}
            ExprKind::Unary(_, a) => into.push(*a),
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
                into.push(*a);
                into.push(*b);
            }
            ExprKind::Ternary(a, b, c) => into.extend([*a, *b, *c]),
            ExprKind::Call { args, .. } => into.extend(args),
            ExprKind::Member { obj, args, .. } => {
                into.push(*obj);
                into.extend(args);
            }
        }
    }
}

/// A chain of a hundred thousand operators is a tree as deep: dropping it by the compiler's
/// recursive glue would overflow the stack, so the children are dropped from a work list.
impl Drop for Expr {
    fn drop(&mut self) {
        if matches!(self.kind, ExprKind::Int(_) | ExprKind::Name(_)) {
            return;
        }
        let mut pending = Vec::new();
        self.take_children(&mut pending);
        while let Some(mut e) = pending.pop() {
            e.take_children(&mut pending);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StmtKind {
    Empty,
    Block(Vec<Stmt>),
    /// `int a = 1, b;`, with the declared type (`None`: `auto`, the initializer's).
    Decl(Option<IntType>, Vec<(String, Span, Option<Expr>)>),
    /// `cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);`
    RefDecl {
        ty: CType,
        name: String,
        name_span: Span,
        target: Expr,
    },
    /// `target op value` with `op` one of `=`, `+=`, `-=`, ... (`x++` is `x += 1`).
    Assign {
        target: Expr,
        op: &'static str,
        value: Expr,
    },
    Expr(Expr),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Box<Stmt>>,
        body: Box<Stmt>,
    },
    Break,
    Continue,
    Return,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

impl Stmt {
    /// Whether the statement does nothing at all (an empty loop body).
    pub(crate) fn is_empty(&self) -> bool {
        match &self.kind {
            StmtKind::Empty => true,
            StmtKind::Block(b) => b.iter().all(Stmt::is_empty),
            _ => false,
        }
    }
}

/// How accesses through a pointer behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Plain,
    Volatile,
    /// An atomic type; the scope its plain-syntax accesses and members use.
    Atomic {
        scope: Scope,
        cuda: bool,
    },
}

/// A type as declared: its memory space word, how it is accessed, whether it is a pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CType {
    pub space: Option<(MemorySpace, Span)>,
    pub access: Access,
    /// `cuda::atomic_ref<...>` (or `std::atomic_ref`): may bind a local name to a location.
    pub is_ref: bool,
    /// The integer type of the value (`None` for `auto`, which takes the initializer's).
    pub value: Option<IntType>,
    pub span: Span,
}

/// The integer type the base type words name, as CUDA's and OpenCL's data models have it
/// (LP64: `long` is 64-bit; `char` is signed). `bool` holds 0 or 1 and is taken as `int`.
/// `None` when only qualifiers or `auto` were written.
fn base_type(words: &[&str]) -> Option<IntType> {
    let has = |w: &str| words.contains(&w);
    let unsigned_name = words.iter().any(|w| {
        matches!(
            *w,
            "uint32_t" | "uint64_t" | "size_t" | "uint" | "ulong" | "atomic_uint" | "atomic_ulong"
        )
    });
    let bits = if has("char") {
        8
    } else if has("short") {
        16
    } else if has("long")
        || words.iter().any(|w| {
            matches!(
                *w,
                "uint64_t" | "int64_t" | "size_t" | "ulong" | "atomic_long" | "atomic_ulong"
            )
        })
    {
        64
    } else if words.iter().any(|w| {
        matches!(
            *w,
            "int" | "signed" | "unsigned" | "bool" | "_Bool" | "uint32_t" | "int32_t" | "uint"
        ) || ATOMIC_TYPES.contains(w)
    }) {
        32
    } else {
        return None;
    };
    Some(IntType::new(bits, !(has("unsigned") || unsigned_name)))
}

/// Memory space words of parameters and initial-state entries.
pub(crate) fn space_word(w: &str) -> Option<MemorySpace> {
    Some(match w {
        "global" | "__global" | "__device__" => MemorySpace::Global,
        "local" | "__local" | "shared" | "__shared__" => MemorySpace::Shared,
        "host" => MemorySpace::HostMapped,
        "managed" | "__managed__" => MemorySpace::Managed,
        "pageable" => MemorySpace::HostPageable,
        _ => return None,
    })
}

/// Plain (non-atomic) type words.
const BASE_TYPES: &[&str] = &[
    "int",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "bool",
    "_Bool",
    "uint32_t",
    "int32_t",
    "uint64_t",
    "int64_t",
    "size_t",
    "uint",
    "ulong",
    "const",
    "__restrict__",
    "restrict",
];

/// OpenCL / C11 atomic type names (default scope: device).
const ATOMIC_TYPES: &[&str] = &[
    "atomic_int",
    "atomic_uint",
    "atomic_long",
    "atomic_ulong",
    "atomic_bool",
    "atomic_flag",
];

/// Template atomic types: name, whether it is a reference type, whether it is libcu++'s.
const TEMPLATE_TYPES: &[(&str, bool, bool)] = &[
    ("cuda::atomic", false, true),
    ("cuda::atomic_ref", true, true),
    ("cuda::std::atomic", false, true),
    ("cuda::std::atomic_ref", true, true),
    ("std::atomic", false, false),
    ("std::atomic_ref", true, false),
];

/// Statements that C has and this dialect does not.
const UNSUPPORTED_KEYWORDS: &[(&str, &str)] = &[
    ("goto", "goto"),
    ("switch", "switch statements"),
    ("case", "switch statements"),
    ("default", "switch statements"),
    ("struct", "structs"),
    ("union", "unions"),
    ("typedef", "typedef"),
    ("enum", "enums"),
    ("sizeof", "sizeof"),
    ("asm", "inline assembly"),
    ("__asm__", "inline assembly"),
    ("static", "static variables"),
    ("extern", "extern declarations"),
    ("float", "floating point"),
    ("double", "floating point"),
    ("void", "function definitions and void values"),
];

pub(crate) fn is_type_start(w: &str) -> bool {
    BASE_TYPES.contains(&w)
        || ATOMIC_TYPES.contains(&w)
        || TEMPLATE_TYPES.iter().any(|(n, _, _)| *n == w)
        || w == "volatile"
        || w == "_Atomic"
        || w == "auto"
        || space_word(w).is_some()
}

pub(crate) use crate::vocab::thread_scope;

pub(crate) const THREAD_SCOPES: &[&str] = &[
    "cuda::thread_scope_thread",
    "cuda::thread_scope_block",
    "cuda::thread_scope_cluster",
    "cuda::thread_scope_device",
    "cuda::thread_scope_system",
];

pub(crate) struct CParser {
    toks: Vec<CToken>,
    pos: usize,
    end: CToken,
    prev: Span,
    depth: usize,
    /// The labels of the thread being read, with where each is defined.
    labels: Vec<(String, Span)>,
}

impl CParser {
    pub(crate) fn new(src: &str, toks: Vec<CToken>) -> Self {
        let end = toks.last().cloned().unwrap_or(CToken {
            tok: CTok::End,
            span: Span {
                offset: src.len(),
                len: 0,
                line: 1,
                column: 1,
            },
        });
        CParser {
            toks,
            pos: 0,
            prev: end.span,
            end,
            depth: 0,
            labels: Vec::new(),
        }
    }

    // ---- token stream helpers ----

    pub(crate) fn peek(&self) -> &CToken {
        self.toks.get(self.pos).unwrap_or(&self.end)
    }

    pub(crate) fn peek_at(&self, n: usize) -> &CToken {
        self.toks
            .get(self.pos.saturating_add(n))
            .unwrap_or(&self.end)
    }

    pub(crate) fn bump(&mut self) -> CToken {
        let t = self.peek().clone();
        if self.pos < self.toks.len() && t.tok != CTok::End {
            self.pos += 1;
        }
        self.prev = t.span;
        t
    }

    pub(crate) fn at_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, CTok::Punct(q) if q == p)
    }

    pub(crate) fn at_ident(&self, w: &str) -> bool {
        matches!(&self.peek().tok, CTok::Ident(x) if x == w)
    }

    pub(crate) fn eat_punct(&mut self, p: &str) -> Option<Span> {
        if self.at_punct(p) {
            Some(self.bump().span)
        } else {
            None
        }
    }

    pub(crate) fn expect_punct(&mut self, p: &str, what: &str) -> Result<Span, Diagnostic> {
        match self.eat_punct(p) {
            Some(s) => Ok(s),
            None => Err(self.error_expected(what, &[format!("`{p}`")])),
        }
    }

    pub(crate) fn error_expected<S: ToString>(&self, what: &str, expected: &[S]) -> Diagnostic {
        let t = self.peek();
        Diagnostic::error(format!("expected {what}, found {}", t.tok.describe()))
            .at(t.span)
            .expecting(expected)
    }

    pub(crate) fn span_from(&self, start: Span) -> Span {
        let end = self.prev.offset + self.prev.len;
        Span {
            len: end.saturating_sub(start.offset),
            ..start
        }
    }

    pub(crate) fn ident(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match &self.peek().tok {
            CTok::Ident(w) => {
                let w = w.clone();
                Ok((w, self.bump().span))
            }
            _ => Err(self.error_expected(what, &[what])),
        }
    }

    /// An integer with an optional minus sign.
    pub(crate) fn int_value(&mut self, what: &str) -> Result<(i64, Span), Diagnostic> {
        let start = self.peek().span;
        let neg = self.eat_punct("-").is_some();
        match self.peek().tok {
            CTok::Int(v) => {
                self.bump();
                let v = if neg { v.wrapping_neg() } else { v };
                Ok((v, self.span_from(start)))
            }
            _ => Err(self.error_expected(what, &["an integer"])),
        }
    }

    pub(crate) fn u32_literal(&mut self, what: &str) -> Result<(u32, Span), Diagnostic> {
        match self.peek().tok {
            CTok::Int(v) => {
                let span = self.peek().span;
                let v = u32::try_from(v).map_err(|_| {
                    Diagnostic::error(format!("{what} must be between 0 and {}", u32::MAX)).at(span)
                })?;
                self.bump();
                Ok((v, span))
            }
            _ => Err(self.error_expected(what, &[what])),
        }
    }

    fn enter(&mut self) -> Result<(), Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::error(format!(
                "code nested too deeply (more than {MAX_DEPTH} levels)"
            ))
            .at(self.peek().span));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ---- types ----

    /// Type words: a memory space, qualifiers, a plain, atomic or template type. Returns `None`
    /// when the next token starts no type.
    pub(crate) fn ctype(&mut self) -> Result<Option<CType>, Diagnostic> {
        let start = self.peek().span;
        let mut space: Option<(MemorySpace, Span)> = None;
        let mut volatile = false;
        let mut atomic: Option<(Scope, bool)> = None;
        let mut is_ref = false;
        let mut any = false;
        let mut words: Vec<String> = Vec::new();
        let mut value: Option<IntType> = None;
        loop {
            let t = self.peek().clone();
            let CTok::Ident(w) = &t.tok else { break };
            words.push(w.clone());
            if let Some(s) = space_word(w) {
                if space.is_some() {
                    return Err(Diagnostic::error(format!(
                        "a second memory space `{w}` in one type"
                    ))
                    .at(t.span));
                }
                space = Some((s, t.span));
            } else if w == "volatile" {
                volatile = true;
            } else if BASE_TYPES.contains(&w.as_str()) || w == "auto" {
            } else if ATOMIC_TYPES.contains(&w.as_str()) {
                atomic = Some((Scope::Gpu, false));
            } else if w == "_Atomic" {
                atomic = Some((Scope::Gpu, false));
                if self.peek_at(1).tok == CTok::Punct("(") {
                    self.bump();
                    self.bump();
                    value = self.skip_base_types()?;
                    self.expect_punct(")", "`)` after the type of `_Atomic(`")?;
                    any = true;
                    continue;
                }
            } else if let Some(&(_, r, cuda)) = TEMPLATE_TYPES.iter().find(|(n, _, _)| n == w) {
                self.bump();
                self.expect_punct("<", "`<` and the value type")?;
                value = self.skip_base_types()?;
                let mut scope = Scope::Sys;
                if self.eat_punct(",").is_some() {
                    let (sw, sspan) = self.ident("a thread scope")?;
                    scope = thread_scope(&sw).ok_or_else(|| {
                        Diagnostic::error(format!("unknown thread scope `{sw}`; expected one of cuda::thread_scope_thread, _block, _cluster, _device, _system")).at(sspan)
                        .expecting(THREAD_SCOPES)
                    })?;
                    if !cuda {
                        return Err(Diagnostic::error(format!(
                            "`{w}` takes no scope; use `cuda::atomic` for a scoped atomic"
                        ))
                        .at(sspan));
                    }
                }
                self.expect_punct(">", "`>` to close the template")?;
                atomic = Some((scope, cuda));
                is_ref = r;
                any = true;
                continue;
            } else {
                // Not a type word (the name that follows): not part of the type.
                words.pop();
                break;
            }
            any = true;
            self.bump();
        }
        if !any {
            return Ok(None);
        }
        let access = match (atomic, volatile) {
            (Some((scope, cuda)), _) => Access::Atomic { scope, cuda },
            (None, true) => Access::Volatile,
            (None, false) => Access::Plain,
        };
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let value = value.or_else(|| base_type(&words)).or_else(|| {
            // No size or sign word: `auto` takes the initializer's type; bare qualifiers are int.
            (!words.contains(&"auto")).then_some(IntType::S32)
        });
        Ok(Some(CType {
            space,
            access,
            is_ref,
            value,
            span: self.span_from(start),
        }))
    }

    /// The value type inside `<...>` or `_Atomic(...)`: plain type words only.
    fn skip_base_types(&mut self) -> Result<Option<IntType>, Diagnostic> {
        let mut any = false;
        let mut words: Vec<String> = Vec::new();
        while let CTok::Ident(w) = &self.peek().tok {
            if !BASE_TYPES.contains(&w.as_str()) {
                break;
            }
            words.push(w.clone());
            any = true;
            self.bump();
        }
        if !any {
            return Err(self.error_expected(
                "a value type such as `int`",
                &["`int`", "`unsigned`", "`uint32_t`"],
            ));
        }
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        Ok(Some(base_type(&words).unwrap_or(IntType::S32)))
    }

    // ---- statements ----

    /// `{ statements }`; the `{` is next.
    pub(crate) fn block(&mut self) -> Result<Stmt, Diagnostic> {
        let start = self.expect_punct("{", "`{` to open the block")?;
        let mut body = Vec::new();
        loop {
            if self.eat_punct("}").is_some() {
                break;
            }
            if self.peek().tok == CTok::End {
                return Err(self.error_expected("`}` to close the block", &["`}`"]));
            }
            body.push(self.stmt()?);
        }
        Ok(Stmt {
            kind: StmtKind::Block(body),
            span: self.span_from(start),
        })
    }

    pub(crate) fn stmt(&mut self) -> Result<Stmt, Diagnostic> {
        self.enter()?;
        let r = self.stmt_inner();
        self.leave();
        r
    }

    fn stmt_inner(&mut self) -> Result<Stmt, Diagnostic> {
        if self.at_punct("{") {
            return self.block();
        }
        self.other_stmt()
    }

    #[inline(never)]
    fn other_stmt(&mut self) -> Result<Stmt, Diagnostic> {
        let start = self.peek().span;
        if self.eat_punct(";").is_some() {
            return Ok(Stmt {
                kind: StmtKind::Empty,
                span: start,
            });
        }
        let word = match &self.peek().tok {
            CTok::Ident(w) => Some(w.clone()),
            _ => None,
        };
        if let Some(w) = word.as_deref() {
            if let Some((_, what)) = UNSUPPORTED_KEYWORDS.iter().find(|(k, _)| *k == w) {
                return Err(Diagnostic::error(format!("not supported: {what}")).at(start));
            }
            if self.peek_at(1).tok == CTok::Punct(":") {
                return self.labeled(w, start);
            }
            let kind = match w {
                "if" => self.if_stmt()?,
                "else" => {
                    return Err(Diagnostic::error("`else` without a matching `if`").at(start));
                }
                "while" => self.while_stmt()?,
                "do" => self.do_stmt()?,
                "for" => self.for_stmt()?,
                "break" | "continue" | "return" => {
                    self.bump();
                    if w == "return" && !self.at_punct(";") {
                        return Err(Diagnostic::error(
                            "not supported: returning a value (threads return nothing)",
                        )
                        .at(self.peek().span));
                    }
                    self.expect_punct(";", &format!("`;` after `{w}`"))?;
                    match w {
                        "break" => StmtKind::Break,
                        "continue" => StmtKind::Continue,
                        _ => StmtKind::Return,
                    }
                }
                _ => {
                    let s = self.simple_stmt()?;
                    self.expect_punct(";", "`;` at the end of the statement")?;
                    s.kind
                }
            };
            return Ok(Stmt {
                kind,
                span: self.span_from(start),
            });
        }
        let s = self.simple_stmt()?;
        self.expect_punct(";", "`;` at the end of the statement")?;
        Ok(Stmt {
            kind: s.kind,
            span: self.span_from(start),
        })
    }

    /// `L: statement`. Without `goto` a label names nothing that can jump to it, so it is
    /// checked (one per name in a thread, followed by a statement) and the statement is the
    /// labelled one.
    fn labeled(&mut self, label: &str, start: Span) -> Result<Stmt, Diagnostic> {
        if let Some((_, first)) = self.labels.iter().find(|(l, _)| l == label) {
            return Err(Diagnostic::error(format!(
                "label `{label}` is defined twice in this thread (first at line {}, column {})",
                first.line, first.column
            ))
            .at(start));
        }
        self.labels.push((label.to_string(), start));
        self.bump();
        self.bump();
        if self.at_punct("}") || self.peek().tok == CTok::End {
            return Err(self.error_expected(
                &format!(
                    "a statement after the label `{label}:` (write `{label}: ;` for an empty one)"
                ),
                &["a statement"],
            ));
        }
        self.stmt()
    }

    /// Starts a thread body: labels are per thread.
    pub(crate) fn begin_thread(&mut self) {
        self.labels.clear();
    }

    #[inline(never)]
    fn if_stmt(&mut self) -> Result<StmtKind, Diagnostic> {
        self.bump();
        let c = self.paren_cond("if")?;
        let then = Box::new(self.stmt()?);
        let els = if self.at_ident("else") {
            self.bump();
            Some(Box::new(self.stmt()?))
        } else {
            None
        };
        Ok(StmtKind::If(c, then, els))
    }

    #[inline(never)]
    fn while_stmt(&mut self) -> Result<StmtKind, Diagnostic> {
        self.bump();
        let c = self.paren_cond("while")?;
        let body = Box::new(self.stmt()?);
        Ok(StmtKind::While(c, body))
    }

    #[inline(never)]
    fn do_stmt(&mut self) -> Result<StmtKind, Diagnostic> {
        self.bump();
        let body = Box::new(self.stmt()?);
        if !self.at_ident("while") {
            return Err(
                self.error_expected("`while (condition);` after the body of `do`", &["`while`"])
            );
        }
        self.bump();
        let c = self.paren_cond("while")?;
        self.expect_punct(";", "`;` after `do ... while (...)`")?;
        Ok(StmtKind::DoWhile(body, c))
    }

    #[inline(never)]
    fn for_stmt(&mut self) -> Result<StmtKind, Diagnostic> {
        self.bump();
        self.expect_punct("(", "`(` after `for`")?;
        let init = if self.at_punct(";") {
            None
        } else {
            Some(Box::new(self.simple_stmt()?))
        };
        self.expect_punct(";", "`;` after the initialisation of `for`")?;
        let cond = if self.at_punct(";") {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect_punct(";", "`;` after the condition of `for`")?;
        let step = if self.at_punct(")") {
            None
        } else {
            Some(Box::new(self.simple_stmt()?))
        };
        self.expect_punct(")", "`)` to close `for (...)`")?;
        let body = Box::new(self.stmt()?);
        Ok(StmtKind::For {
            init,
            cond,
            step,
            body,
        })
    }

    /// `(condition)` after `if` or `while`.
    fn paren_cond(&mut self, kw: &str) -> Result<Expr, Diagnostic> {
        self.expect_punct("(", &format!("`(` after `{kw}`"))?;
        let c = self.expr()?;
        self.expect_punct(")", "`)` to close the condition")?;
        Ok(c)
    }

    /// A declaration, assignment, increment or expression, without its `;`.
    fn simple_stmt(&mut self) -> Result<Stmt, Diagnostic> {
        let start = self.peek().span;
        if let CTok::Ident(w) = &self.peek().tok {
            if is_type_start(w) {
                return self.declaration();
            }
        }
        for op in ["++", "--"] {
            if self.eat_punct(op).is_some() {
                let target = self.unary()?;
                return Ok(self.incdec(target, op, start));
            }
        }
        let target = self.expr()?;
        for op in ["++", "--"] {
            if self.eat_punct(op).is_some() {
                return Ok(self.incdec(target, op, start));
            }
        }
        const ASSIGN_OPS: [&str; 11] = [
            "=", "+=", "-=", "*=", "&=", "|=", "^=", "/=", "%=", "<<=", ">>=",
        ];
        if let CTok::Punct(p) = self.peek().tok {
            if let Some(op) = ASSIGN_OPS.iter().find(|o| **o == p) {
                self.bump();
                let value = self.expr()?;
                return Ok(Stmt {
                    kind: StmtKind::Assign { target, op, value },
                    span: self.span_from(start),
                });
            }
        }
        Ok(Stmt {
            kind: StmtKind::Expr(target),
            span: self.span_from(start),
        })
    }

    fn incdec(&self, target: Expr, op: &str, start: Span) -> Stmt {
        let span = self.span_from(start);
        Stmt {
            kind: StmtKind::Assign {
                target,
                op: if op == "++" { "+=" } else { "-=" },
                value: Expr {
                    kind: ExprKind::Int(1),
                    span,
                },
            },
            span,
        }
    }

    /// `int a = 1, b;` or `cuda::atomic_ref<int, S> f(*x);`, without the `;`.
    fn declaration(&mut self) -> Result<Stmt, Diagnostic> {
        let start = self.peek().span;
        let ty = self
            .ctype()?
            .ok_or_else(|| self.error_expected("a type", &["a type"]))?;
        if let Some((_, span)) = ty.space {
            return Err(Diagnostic::error("not supported: memory spaces on local variables (declare shared locations as parameters)").at(span));
        }
        if self.at_punct("*") || self.at_punct("&") {
            return Err(Diagnostic::error(
                "not supported: pointer and reference local variables (use the parameters)",
            )
            .at(self.peek().span));
        }
        if ty.is_ref {
            let (name, name_span) = self.ident("the name of the atomic reference")?;
            let close = if self.eat_punct("(").is_some() {
                ")"
            } else if self.eat_punct("{").is_some() {
                "}"
            } else {
                return Err(self.error_expected(
                    "`(` and the object the reference binds to, as in `f(*flag)`",
                    &["`(`", "`{`"],
                ));
            };
            let target = self.expr()?;
            self.expect_punct(close, &format!("`{close}` after the referenced object"))?;
            return Ok(Stmt {
                kind: StmtKind::RefDecl {
                    ty,
                    name,
                    name_span,
                    target,
                },
                span: self.span_from(start),
            });
        }
        if matches!(ty.access, Access::Atomic { .. }) {
            return Err(Diagnostic::error(
                "not supported: atomic local variables (declare shared atomics as parameters)",
            )
            .at(ty.span));
        }
        let mut vars = Vec::new();
        loop {
            let (name, span) = self.ident("a variable name")?;
            if self.at_punct("[") {
                return Err(Diagnostic::error("not supported: local arrays").at(self.peek().span));
            }
            let init = if self.eat_punct("=").is_some() {
                Some(self.expr()?)
            } else {
                None
            };
            vars.push((name, span, init));
            if self.eat_punct(",").is_none() {
                break;
            }
        }
        Ok(Stmt {
            kind: StmtKind::Decl(ty.value, vars),
            span: self.span_from(start),
        })
    }

    // ---- expressions ----

    pub(crate) fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let r = self.ternary();
        self.leave();
        r
    }

    fn ternary(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.peek().span;
        let c = self.binary(1)?;
        if self.eat_punct("?").is_none() {
            return Ok(c);
        }
        let a = self.expr()?;
        self.expect_punct(":", "`:` of the conditional expression")?;
        let b = self.expr()?;
        Ok(Expr {
            kind: ExprKind::Ternary(Box::new(c), Box::new(a), Box::new(b)),
            span: self.span_from(start),
        })
    }

    /// Operators of precedence `min_prec` and above, left-associative: the chain is read by
    /// a loop, the right operand of each (tighter operators) by a nested call.
    fn binary(&mut self, min_prec: u8) -> Result<Expr, Diagnostic> {
        let start = self.peek().span;
        let mut left = self.unary()?;
        let mut chain = 0usize;
        let mut logical = 0usize;
        let result = loop {
            let CTok::Punct(p) = self.peek().tok else {
                break Ok(left);
            };
            let Some(prec) = crate::vocab::binary_precedence(p) else {
                break Ok(left);
            };
            if prec < min_prec {
                break Ok(left);
            }
            chain += 1;
            if chain > MAX_CHAIN {
                break Err(Diagnostic::error(format!(
                    "expression too long (more than {MAX_CHAIN} operators in a row)"
                ))
                .at(self.peek().span));
            }
            // `&&` and `||` are lowered into branches recursively: each is a level.
            if p == "&&" || p == "||" {
                if let Err(e) = self.enter_chain(p) {
                    break Err(e);
                }
                logical += 1;
            }
            self.bump();
            if let Err(e) = self.enter() {
                break Err(e);
            }
            let right = self.binary(prec + 1);
            self.leave();
            let right = match right {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            left = Expr {
                kind: ExprKind::Binary(p, Box::new(left), Box::new(right)),
                span: self.span_from(start),
            };
        };
        for _ in 0..logical {
            self.leave();
        }
        result
    }

    /// Enters a level for one operator of a chain that lowering walks recursively.
    fn enter_chain(&mut self, op: &str) -> Result<(), Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::error(format!(
                    "code nested too deeply (more than {MAX_DEPTH} levels; each `{op}` of a chain counts as one)"
                )).at(self.peek().span));
        }
        self.depth += 1;
        Ok(())
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let r = self.unary_inner();
        self.leave();
        r
    }

    fn unary_inner(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.peek().span;
        if let CTok::Punct(p) = self.peek().tok {
            if let Some(op) = ["-", "!", "~", "+", "*", "&"].into_iter().find(|o| *o == p) {
                self.bump();
                let e = self.unary()?;
                return Ok(Expr {
                    kind: ExprKind::Unary(op, Box::new(e)),
                    span: self.span_from(start),
                });
            }
            if p == "++" || p == "--" {
                return Err(Diagnostic::error(format!(
                    "not supported: `{p}` inside an expression (write it as a statement)"
                ))
                .at(start));
            }
        }
        let e = self.primary()?;
        let mut entered = 0usize;
        let r = self.postfix(e, start, &mut entered);
        for _ in 0..entered {
            self.leave();
        }
        r
    }

    /// The postfix operators after a primary expression `e`: `[i]`, `.f(args)`, `->f(args)`,
    /// `(args)`. Lowering walks such a chain recursively, so each operator enters a level
    /// (`entered` counts them, for the caller to leave).
    fn postfix(
        &mut self,
        mut e: Expr,
        start: Span,
        entered: &mut usize,
    ) -> Result<Expr, Diagnostic> {
        loop {
            if let CTok::Punct(op @ ("[" | "->" | "." | "(")) = self.peek().tok {
                self.enter_chain(op)?;
                *entered += 1;
            }
            if self.eat_punct("[").is_some() {
                let i = self.expr()?;
                self.expect_punct("]", "`]` after the index")?;
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(i)),
                    span: self.span_from(start),
                };
            } else if self.at_punct("->") || self.at_punct(".") {
                self.bump();
                let (method, method_span) = self.ident("a member function name")?;
                if !self.at_punct("(") {
                    return Err(Diagnostic::error(format!(
                        "not supported: member `{method}` (only member function calls on atomics)"
                    ))
                    .at(method_span));
                }
                let args = self.args()?;
                e = Expr {
                    kind: ExprKind::Member {
                        obj: Box::new(e),
                        method,
                        method_span,
                        args,
                    },
                    span: self.span_from(start),
                };
            } else if self.at_punct("(") {
                let ExprKind::Name(name) = &e.kind else {
                    return Err(Diagnostic::error(
                        "not supported: calling something other than a named function",
                    )
                    .at(self.peek().span));
                };
                let (name, name_span) = (name.clone(), e.span);
                let args = self.args()?;
                e = Expr {
                    kind: ExprKind::Call {
                        name,
                        name_span,
                        args,
                    },
                    span: self.span_from(start),
                };
            } else {
                break;
            }
        }
        Ok(e)
    }

    /// `(a, b, c)`.
    fn args(&mut self) -> Result<Vec<Expr>, Diagnostic> {
        self.expect_punct("(", "`(`")?;
        let mut args = Vec::new();
        if self.eat_punct(")").is_some() {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat_punct(",").is_some() {
                continue;
            }
            self.expect_punct(")", "`,` or `)` in the argument list")?;
            return Ok(args);
        }
    }

    fn primary(&mut self) -> Result<Expr, Diagnostic> {
        let t = self.peek().clone();
        match &t.tok {
            CTok::Int(v) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Int(*v),
                    span: t.span,
                })
            }
            CTok::Ident(w) => {
                if let Some((_, what)) = UNSUPPORTED_KEYWORDS.iter().find(|(k, _)| k == w) {
                    return Err(Diagnostic::error(format!("not supported: {what}")).at(t.span));
                }
                if is_type_start(w) {
                    return Err(Diagnostic::error(format!(
                        "unexpected type word `{w}` in an expression"
                    ))
                    .at(t.span));
                }
                self.bump();
                let kind = match w.as_str() {
                    "true" => ExprKind::Int(1),
                    "false" => ExprKind::Int(0),
                    _ => ExprKind::Name(w.clone()),
                };
                Ok(Expr { kind, span: t.span })
            }
            CTok::Punct("(") => {
                if let CTok::Ident(w) = &self.peek_at(1).tok {
                    if is_type_start(w) {
                        return Err(Diagnostic::error("not supported: casts").at(t.span));
                    }
                }
                self.bump();
                let mut e = self.expr()?;
                self.expect_punct(")", "`)` to close the parenthesis")?;
                Ok(Expr {
                    kind: std::mem::replace(&mut e.kind, ExprKind::Int(0)),
                    span: self.span_from(t.span),
                })
            }
            _ => Err(self.error_expected(
                "an expression (a number, a variable, `*pointer` or a call)",
                &["an integer", "a variable", "`*`", "a call", "`(`"],
            )),
        }
    }
}
