//! One instruction of the PTX table: opcode, qualifiers, operands.
//!
//! The opcode token carries its qualifiers (`ld.acquire.gpu`); they are split here with their
//! exact columns and classified one by one (semantics, scope, RMW operation, ignored type or
//! state space), so that an error can name the one qualifier at fault. Qualifiers may come in
//! any order; each kind at most once.

use crate::lexer::Tok;
use crate::ptx::{register_name, Parser};
use scopecheck_ir::ptx::{
    barrier_reduction, integer_type, membar_level, scope as parse_scope, BarrierMode, Opcode, Sem,
    FENCE_DEFAULT, INTEGER_TYPES, MEMBAR_LEVELS, RMW_DEFAULT, SCOPES, SCOPE_LIST,
};
use scopecheck_ir::{
    Address, BarrierKind, BarrierRedOp, BranchCond, Diagnostic, FenceOrder, FenceSpaces, InstrKind,
    IntType, LocId, Operand, Order, RegId, RmwKind, RmwOp, Scope, Span,
};

/// One `.qualifier` of an opcode, without its dot; its span includes the dot.
struct Qual {
    name: String,
    span: Span,
}

/// Splits `ld.acquire.gpu` into the opcode and its qualifiers. Words are ASCII (the lexer
/// guarantees it), so byte positions inside the word are columns.
fn split_opcode(word: &str, span: Span) -> (String, Span, Vec<Qual>) {
    let mut parts = word.split('.');
    let op = parts.next().unwrap_or("").to_string();
    let op_span = Span {
        len: op.len(),
        ..span
    };
    let mut quals = Vec::new();
    let mut at = op.len();
    for part in parts {
        let width = part.len() + 1;
        quals.push(Qual {
            name: part.to_string(),
            span: Span {
                offset: span.offset + at,
                len: width,
                line: span.line,
                column: span.column.saturating_add(at as u32),
            },
        });
        at += width;
    }
    (op, op_span, quals)
}

/// The semantics spelled `s` that the dialect knows: the table's, but for `.mmio` (a litmus
/// test has no memory-mapped I/O; the word stays an unknown qualifier here).
fn parse_sem(s: &str) -> Option<Sem> {
    Sem::from_name(s).filter(|sem| *sem != Sem::Mmio)
}

fn scope_expected() -> Vec<String> {
    SCOPES.iter().map(|(n, _)| format!(".{n}")).collect()
}

/// The one state space accepted (and ignored) on an instruction; a location's space comes from
/// the initial state.
const SPACE: &str = "global";

#[derive(Clone, Copy)]
enum RmwSel {
    Op(RmwOp),
    Cas,
}

fn parse_rmw(s: &str) -> Option<RmwSel> {
    if s == "cas" {
        return Some(RmwSel::Cas);
    }
    RmwOp::from_ptx(s).map(RmwSel::Op)
}

/// What qualifiers an opcode accepts (besides types and `.global`, always accepted).
struct Accepts {
    sems: &'static [Sem],
    scope: bool,
    ops: bool,
    cas: bool,
    /// Further words accepted and ignored (`.uni` on branches).
    ignored: &'static [&'static str],
}

const PLAIN: Accepts = Accepts {
    sems: &[],
    scope: false,
    ops: false,
    cas: false,
    ignored: &[],
};

impl Accepts {
    /// Every qualifier accepted, for error messages.
    fn list(&self) -> Vec<String> {
        let mut out: Vec<String> = self.sems.iter().map(|s| format!(".{}", s.name())).collect();
        if self.scope {
            out.extend(scope_expected());
        }
        if self.ops {
            out.extend(RmwOp::PTX_NAMES.iter().map(|(n, _)| format!(".{n}")));
        }
        if self.cas {
            out.push(".cas".to_string());
        }
        out.extend(self.ignored.iter().map(|w| format!(".{w}")));
        out.extend(INTEGER_TYPES.iter().map(|t| format!(".{t}")));
        out.push(format!(".{SPACE}"));
        out
    }
}

/// The classified qualifiers of one instruction.
#[derive(Default)]
struct Quals {
    sem: Option<(Sem, Span)>,
    scope: Option<(Scope, Span)>,
    rmw: Option<(RmwSel, Span)>,
    ty: Option<(IntType, Span)>,
}

/// Records `value` in `slot`, failing on a second qualifier of the same kind.
fn set_once<T: Copy>(
    slot: &mut Option<(T, Span)>,
    value: T,
    q: &Qual,
    previous: &mut Vec<(String, usize)>,
    kind: usize,
) -> Result<(), Diagnostic> {
    if let Some((name, _)) = previous.iter().find(|(_, k)| *k == kind) {
        return Err(if *name == q.name {
            Diagnostic::error(format!("duplicate qualifier `.{}`", q.name)).at(q.span)
        } else {
            Diagnostic::error(format!(
                "conflicting qualifiers `.{name}` and `.{}`",
                q.name
            ))
            .at(q.span)
        });
    }
    previous.push((q.name.clone(), kind));
    *slot = Some((value, q.span));
    Ok(())
}

fn classify(opcode: &str, quals: &[Qual], acc: &Accepts) -> Result<Quals, Diagnostic> {
    // Kinds, for duplicate and conflict detection.
    const SEM: usize = 0;
    const SCOPE: usize = 1;
    const OP: usize = 2;
    const TYPE: usize = 3;
    const GLOBAL: usize = 4;
    let mut out = Quals::default();
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut ignored: Option<((), Span)> = None;
    let not_allowed = |q: &Qual| {
        Diagnostic::error(format!(
            "qualifier `.{}` is not allowed on `{opcode}`; expected one of {}",
            q.name,
            acc.list().join(", ")
        ))
        .at(q.span)
        .expecting(&acc.list())
    };
    for (i, q) in quals.iter().enumerate() {
        let name = q.name.as_str();
        if let Some(sem) = parse_sem(name) {
            if !acc.sems.contains(&sem) {
                return Err(not_allowed(q));
            }
            set_once(&mut out.sem, sem, q, &mut seen, SEM)?;
        } else if let Some(scope) = parse_scope(name) {
            if !acc.scope {
                return Err(not_allowed(q));
            }
            set_once(&mut out.scope, scope, q, &mut seen, SCOPE)?;
        } else if let Some(op) = parse_rmw(name) {
            let ok = match op {
                RmwSel::Cas => acc.cas,
                RmwSel::Op(_) => acc.ops,
            };
            if !ok {
                return Err(not_allowed(q));
            }
            set_once(&mut out.rmw, op, q, &mut seen, OP)?;
        } else if INTEGER_TYPES.contains(&name) {
            // An access or arithmetic instruction computes in its type (`.b` types are untyped
            // bits: unsigned here); `.pred` is accepted where PTX writes it (barriers) and
            // ignored.
            match integer_type(name) {
                Some(ty) => set_once(&mut out.ty, ty, q, &mut seen, TYPE)?,
                None => set_once(&mut ignored, (), q, &mut seen, TYPE)?,
            }
        } else if name == SPACE {
            set_once(&mut ignored, (), q, &mut seen, GLOBAL)?;
        } else if acc.ignored.contains(&name) {
            if seen.iter().any(|(n, _)| n == name) {
                return Err(Diagnostic::error(format!("duplicate qualifier `.{name}`")).at(q.span));
            }
            seen.push((name.to_string(), 5 + i));
        } else {
            // Guess what the unknown word was meant to be, to name it in the message.
            if looks_like_type(name) {
                let types: Vec<String> = INTEGER_TYPES.iter().map(|t| format!(".{t}")).collect();
                return Err(Diagnostic::error(format!(
                    "unsupported type `.{name}`; expected one of {}",
                    types.join(", ")
                ))
                .at(q.span)
                .expecting(&types));
            }
            let later_op = quals
                .get(i + 1..)
                .unwrap_or(&[])
                .iter()
                .any(|l| parse_rmw(&l.name).is_some());
            let after_sem = i > 0
                && quals
                    .get(i - 1)
                    .and_then(|p| parse_sem(&p.name))
                    .is_some_and(|s| !matches!(s, Sem::Weak | Sem::Volatile));
            if acc.ops && out.rmw.is_none() && !later_op {
                let mut ops: Vec<String> = RmwOp::PTX_NAMES
                    .iter()
                    .map(|(n, _)| format!(".{n}"))
                    .collect();
                if acc.cas {
                    ops.push(".cas".to_string());
                }
                return Err(Diagnostic::error(format!(
                    "unknown operation `.{name}` on `{opcode}`; expected one of {}",
                    ops.join(", ")
                ))
                .at(q.span)
                .expecting(&ops));
            }
            if acc.scope && out.scope.is_none() && after_sem {
                return Err(Diagnostic::error(format!(
                    "unknown scope `.{name}`; expected one of {SCOPE_LIST}"
                ))
                .at(q.span)
                .expecting(&scope_expected()));
            }
            return Err(Diagnostic::error(format!(
                "unknown qualifier `.{name}` on `{opcode}`; expected one of {}",
                acc.list().join(", ")
            ))
            .at(q.span)
            .expecting(&acc.list()));
        }
    }
    Ok(out)
}

/// `f32`, `u16`, `b8`...: a PTX type we do not model (values here are untyped integers).
fn looks_like_type(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('u' | 's' | 'b' | 'f'))
        && name.len() > 1
        && chars.all(|c| c.is_ascii_digit())
}

/// The opcodes of the dialect, for the unknown-instruction message: PTX's (meanings in
/// [`Opcode`]) and the dialect's own branches `beq`, `bne`, `goto`.
const OPCODES: [&str; 23] = [
    "ld", "st", "atom", "red", "fence", "membar", "bar", "barrier", "mov", "add", "sub", "mul",
    "div", "rem", "shl", "shr", "and", "or", "xor", "beq", "bne", "bra", "goto",
];

/// A parsed instruction and, for a branch, the label to resolve into its target.
pub(crate) type Parsed = (InstrKind, Option<(String, Span)>);

impl Parser<'_> {
    /// Parses one instruction of thread `t`, from its opcode to its last operand.
    pub(crate) fn instruction(&mut self, t: usize) -> Result<Parsed, Diagnostic> {
        let tok = self.peek().clone();
        let Tok::Word(word) = &tok.tok else {
            return Err(self.error_expected(
                "an instruction, a label `L:`, `|` or `;`",
                &["an instruction", "a label", "`|`", "`;`"],
            ));
        };
        let (op, op_span, quals) = split_opcode(word, tok.span);
        let kind = match op.as_str() {
            "suld" | "sust" | "sured" | "tex" | "tld4" => {
                return Err(Diagnostic::error(format!(
                    "`{op}` is a proxy operation (texture/surface): not supported yet"
                ))
                .at(op_span))
            }
            "fence" | "membar" if quals.iter().any(|q| q.name == "proxy") => {
                let span = Span {
                    len: tok.span.len,
                    ..op_span
                };
                return Err(Diagnostic::error(format!(
                    "proxy fence `{word}` is not supported yet"
                ))
                .at(span));
            }
            _ if !OPCODES.contains(&op.as_str()) => {
                return Err(Diagnostic::error(format!(
                    "unknown instruction `{op}`; expected one of {}",
                    OPCODES.join(", ")
                ))
                .at(op_span)
                .expecting(&OPCODES))
            }
            _ => op.clone(),
        };
        self.bump();
        match Opcode::from_name(&kind) {
            Some(Opcode::Ld) => self.load(t, &quals),
            Some(Opcode::St) => self.store(t, &quals),
            Some(Opcode::Atom) => self.rmw(t, true, op_span, &quals),
            Some(Opcode::Red) => self.rmw(t, false, op_span, &quals),
            Some(Opcode::Fence) => self.fence(op_span, &quals),
            Some(Opcode::Membar) => self.membar(op_span, &quals),
            Some(Opcode::Bar | Opcode::Barrier) => self.barrier(t, &kind, op_span, &quals),
            Some(Opcode::Mov) => {
                classify(&kind, &quals, &PLAIN)?;
                let dst = self.dst(t)?;
                self.comma("the source operand")?;
                let src = self.value(t)?;
                Ok((InstrKind::Mov { dst, src }, None))
            }
            // `bra`, and the dialect's own `beq`, `bne` and `goto` (not PTX opcodes).
            Some(Opcode::Bra) | None => self.branch(t, &kind, &quals),
            Some(op) => {
                let op = op
                    .binary()
                    .expect("the other opcodes of OPCODES are binary");
                let q = classify(&kind, &quals, &PLAIN)?;
                let dst = self.dst(t)?;
                self.comma("the first source operand")?;
                let a = self.value(t)?;
                self.comma("the second source operand")?;
                let b = self.value(t)?;
                // Untyped arithmetic is on untyped integers: 32-bit signed, the GPU's words.
                let ty = q.ty.map_or(IntType::S32, |(ty, _)| ty);
                Ok((InstrKind::Binary { dst, op, ty, a, b }, None))
            }
        }
    }

    fn load(&mut self, t: usize, quals: &[Qual]) -> Result<Parsed, Diagnostic> {
        let acc = Accepts {
            sems: &[Sem::Weak, Sem::Relaxed, Sem::Acquire, Sem::Volatile],
            scope: true,
            ..PLAIN
        };
        let q = classify("ld", quals, &acc)?;
        let (order, scope) = access_order("ld", &q)?;
        let dst = self.dst(t)?;
        self.comma("the address")?;
        // `ld r0, 1`: published corpora write a constant load for `r0 = 1`. It reads no
        // memory, so it is the register move `mov r0, 1`; with qualifiers it would claim an
        // order or a width that no access has, so only the bare form is accepted.
        if let Tok::Int(v) = self.peek().tok {
            if let Some(first) = quals.first() {
                return Err(Diagnostic::error(format!(
                    "`ld` with an integer operand is a register move (`ld r, {v}` means \
                         `mov r, {v}`) and takes no qualifiers; write `mov` or load a location"
                ))
                .at(first.span));
            }
            self.bump();
            return Ok((
                InstrKind::Mov {
                    dst,
                    src: Operand::Imm(v),
                },
                None,
            ));
        }
        let addr = self.address(t)?;
        Ok((
            InstrKind::Load {
                dst,
                addr,
                ty: self.access_type(&q),
                order,
                scope,
            },
            None,
        ))
    }

    fn store(&mut self, t: usize, quals: &[Qual]) -> Result<Parsed, Diagnostic> {
        let acc = Accepts {
            sems: &[Sem::Weak, Sem::Relaxed, Sem::Release, Sem::Volatile],
            scope: true,
            ..PLAIN
        };
        let q = classify("st", quals, &acc)?;
        let (order, scope) = access_order("st", &q)?;
        let addr = self.address(t)?;
        self.comma("the value to store")?;
        let value = self.value(t)?;
        Ok((
            InstrKind::Store {
                addr,
                value,
                ty: self.access_type(&q),
                order,
                scope,
            },
            None,
        ))
    }

    /// `atom` (with a destination) or `red` (without).
    fn rmw(
        &mut self,
        t: usize,
        is_atom: bool,
        op_span: Span,
        quals: &[Qual],
    ) -> Result<Parsed, Diagnostic> {
        let opcode = if is_atom { "atom" } else { "red" };
        let acc = Accepts {
            sems: &[Sem::Relaxed, Sem::Acquire, Sem::Release, Sem::AcqRel],
            scope: true,
            ops: true,
            cas: is_atom,
            ignored: &[],
        };
        let q = classify(opcode, quals, &acc)?;
        let order = q.sem.map_or(RMW_DEFAULT.0, |(s, _)| s).order();
        let scope = q.scope.map_or(RMW_DEFAULT.1, |(s, _)| s);
        let Some((sel, _)) = q.rmw else {
            let mut ops: Vec<String> = RmwOp::PTX_NAMES
                .iter()
                .map(|(n, _)| format!(".{n}"))
                .collect();
            if is_atom {
                ops.push(".cas".to_string());
            }
            return Err(Diagnostic::error(format!(
                "`{opcode}` needs an operation; expected one of {}",
                ops.join(", ")
            ))
            .at(op_span)
            .expecting(&ops));
        };
        let dst = if is_atom {
            let d = self.dst(t)?;
            self.comma("the address")?;
            Some(d)
        } else {
            None
        };
        let addr = self.address(t)?;
        let kind = match sel {
            RmwSel::Op(op) => {
                self.comma("the operand")?;
                RmwKind::Op(op, self.value(t)?)
            }
            RmwSel::Cas => {
                self.comma("the expected value")?;
                let expected = self.value(t)?;
                self.comma("the new value")?;
                let new = self.value(t)?;
                RmwKind::Cas { expected, new }
            }
        };
        Ok((
            InstrKind::Rmw {
                dst,
                addr,
                kind,
                ty: self.access_type(&q),
                order,
                scope,
            },
            None,
        ))
    }

    fn fence(&mut self, op_span: Span, quals: &[Qual]) -> Result<Parsed, Diagnostic> {
        let acc = Accepts {
            sems: &[Sem::Sc, Sem::AcqRel],
            scope: true,
            ..PLAIN
        };
        let q = classify("fence", quals, &acc)?;
        // `classify` let only `.sc` and `.acq_rel` through.
        let order = q
            .sem
            .and_then(|(s, _)| s.fence_order())
            .unwrap_or(FENCE_DEFAULT);
        let Some((scope, _)) = q.scope else {
            let span = q.sem.map_or(op_span, |(_, s)| s);
            return Err(Diagnostic::error(format!(
                "`fence` needs a scope; expected one of {SCOPE_LIST}"
            ))
            .at(span)
            .expecting(&scope_expected()));
        };
        Ok((
            InstrKind::Fence {
                order,
                scope,
                spaces: FenceSpaces::ALL,
            },
            None,
        ))
    }

    fn membar(&mut self, op_span: Span, quals: &[Qual]) -> Result<Parsed, Diagnostic> {
        let levels = MEMBAR_LEVELS.map(|(n, _)| format!(".{n}"));
        let mut level: Option<(Scope, &Qual)> = None;
        for q in quals {
            let Some(scope) = membar_level(&q.name) else {
                return Err(Diagnostic::error(format!(
                    "unknown membar level `.{}`; expected one of {}",
                    q.name,
                    levels.join(", ")
                ))
                .at(q.span)
                .expecting(&levels));
            };
            if let Some((_, first)) = level {
                return Err(Diagnostic::error(if first.name == q.name {
                    format!("duplicate qualifier `.{}`", q.name)
                } else {
                    format!("conflicting qualifiers `.{}` and `.{}`", first.name, q.name)
                })
                .at(q.span));
            }
            level = Some((scope, q));
        }
        match level {
            Some((scope, _)) => Ok((
                InstrKind::Fence {
                    order: FenceOrder::Sc,
                    scope,
                    spaces: FenceSpaces::ALL,
                },
                None,
            )),
            None => Err(Diagnostic::error(format!(
                "`membar` needs a level; expected one of {}",
                levels.join(", ")
            ))
            .at(op_span)
            .expecting(&levels)),
        }
    }

    /// `bar{.cta}.sync N {, count}`, `bar{.cta}.arrive N, count`,
    /// `bar{.cta}.red.OP.type r, N, {count,} p` (and the same with `barrier`).
    fn barrier(
        &mut self,
        t: usize,
        opcode: &str,
        op_span: Span,
        quals: &[Qual],
    ) -> Result<Parsed, Diagnostic> {
        let accepted = [
            ".cta", ".sync", ".arrive", ".red", ".popc", ".and", ".or", ".aligned", ".u32", ".pred",
        ];
        let mut mode: Option<(BarrierMode, Span)> = None;
        let mut red_op: Option<(BarrierRedOp, Span)> = None;
        let mut seen: Vec<(String, usize)> = Vec::new();
        let mut flag: Option<((), Span)> = None;
        for (i, q) in quals.iter().enumerate() {
            let name = q.name.as_str();
            if let Some(m) = BarrierMode::from_name(name) {
                set_once(&mut mode, m, q, &mut seen, 0)?;
                continue;
            }
            if let Some(op) = barrier_reduction(name) {
                set_once(&mut red_op, op, q, &mut seen, 1)?;
                continue;
            }
            match name {
                // `.cta` is the only barrier scope, `.aligned` a promise about convergence:
                // both change nothing here.
                "cta" => set_once(&mut flag, (), q, &mut seen, 2)?,
                "aligned" => set_once(&mut flag, (), q, &mut seen, 3)?,
                name if INTEGER_TYPES.contains(&name) => {
                    set_once(&mut flag, (), q, &mut seen, 4 + i)?
                }
                name => {
                    return Err(Diagnostic::error(format!(
                        "unknown qualifier `.{name}` on `{opcode}`; expected one of {}",
                        accepted.join(", ")
                    ))
                    .at(q.span)
                    .expecting(&accepted))
                }
            }
        }
        let Some((mode, _)) = mode else {
            return Err(
                Diagnostic::error(format!("`{opcode}` needs .sync, .arrive or .red"))
                    .at(op_span)
                    .expecting(&[".sync", ".arrive", ".red"]),
            );
        };
        if let (Some((_, span)), false) = (red_op, mode == BarrierMode::Red) {
            return Err(Diagnostic::error(
                "a reduction operation is only allowed on a `.red` barrier",
            )
            .at(span));
        }
        match mode {
            BarrierMode::Sync => {
                let id = self.barrier_id(t)?;
                let count = if self.eat(&Tok::Comma).is_some() {
                    Some(self.thread_count(t)?)
                } else {
                    None
                };
                Ok((
                    InstrKind::Barrier {
                        id,
                        kind: BarrierKind::Sync,
                        count,
                        spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    None,
                ))
            }
            BarrierMode::Arrive => {
                let id = self.barrier_id(t)?;
                self.comma("the thread count (required for `arrive`)")?;
                let count = Some(self.thread_count(t)?);
                Ok((
                    InstrKind::Barrier {
                        id,
                        kind: BarrierKind::Arrive,
                        count,
                        spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    None,
                ))
            }
            BarrierMode::Red => {
                let Some((op, _)) = red_op else {
                    return Err(Diagnostic::error(format!(
                        "`{opcode}.red` needs an operation; expected one of .popc, .and, .or"
                    ))
                    .at(op_span)
                    .expecting(&[".popc", ".and", ".or"]));
                };
                let dst = self.dst(t)?;
                self.comma("the barrier number")?;
                let id = self.barrier_id(t)?;
                self.comma("the predicate (or a thread count then the predicate)")?;
                // `r, N, p` or `r, N, count, p`: a second comma means the first was the count.
                let count = if matches!(self.peek().tok, Tok::Int(_) | Tok::Word(_))
                    && self.peek_at(1).tok == Tok::Comma
                {
                    let c = self.thread_count(t)?;
                    self.comma("the predicate")?;
                    Some(c)
                } else {
                    None
                };
                let pred = self.value(t)?;
                Ok((
                    InstrKind::Barrier {
                        id,
                        kind: BarrierKind::Red { op, dst, pred },
                        count,
                        spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    None,
                ))
            }
        }
    }

    fn branch(&mut self, t: usize, opcode: &str, quals: &[Qual]) -> Result<Parsed, Diagnostic> {
        classify(
            opcode,
            quals,
            &Accepts {
                ignored: &["uni"],
                ..PLAIN
            },
        )?;
        let cond = match opcode {
            "beq" | "bne" => {
                let a = self.value(t)?;
                self.comma("the second operand")?;
                let b = self.value(t)?;
                self.comma("the branch target")?;
                if opcode == "beq" {
                    BranchCond::Eq(a, b)
                } else {
                    BranchCond::Ne(a, b)
                }
            }
            _ => BranchCond::Always,
        };
        let (label, span) = self.plain_word("a label to branch to")?;
        Ok((InstrKind::Branch { cond, target: 0 }, Some((label, span))))
    }

    // ---- operands ----

    fn comma(&mut self, before: &str) -> Result<(), Diagnostic> {
        self.expect(&Tok::Comma, &format!("`,` before {before}"))
            .map(|_| ())
    }

    /// The type of an access: its suffix, recorded for the location's type; without one, the
    /// location's type (filled in when the whole test is read).
    fn access_type(&mut self, q: &Quals) -> IntType {
        self.access_type = q.ty;
        q.ty.map_or(IntType::S32, |(ty, _)| ty)
    }

    /// A destination register.
    fn dst(&mut self, t: usize) -> Result<RegId, Diagnostic> {
        let (name, _) = self.register()?;
        Ok(self.reg(t, &name))
    }

    /// A register or an integer.
    fn value(&mut self, t: usize) -> Result<Operand, Diagnostic> {
        let tok = self.peek().clone();
        match &tok.tok {
            Tok::Int(v) => {
                self.bump();
                Ok(Operand::Imm(*v))
            }
            Tok::Word(w) => match register_name(w) {
                Some(r) => {
                    self.bump();
                    Ok(Operand::Reg(self.reg(t, &r)))
                }
                None => Err(Diagnostic::error(format!(
                    "expected a register or an integer, found `{w}` (a location is not a \
                         value: load it first)"
                ))
                .at(tok.span)
                .expecting(&["a register", "an integer"])),
            },
            _ => {
                Err(self.error_expected("a register or an integer", &["a register", "an integer"]))
            }
        }
    }

    /// `x`, `[x]` or `[x+r2]`.
    fn address(&mut self, t: usize) -> Result<Address, Diagnostic> {
        let bracket = self.eat(&Tok::LBracket).is_some();
        let (name, span) = match &self.peek().tok {
            Tok::Word(w) => (w.clone(), self.peek().span),
            _ => {
                return Err(
                    self.error_expected("an address (`x`, `[x]` or `[x+r1]`)", &["a location"])
                )
            }
        };
        self.location_name(&name, span)?;
        self.bump();
        let mut loc = self.loc(&name, span);
        let mut offset = None;
        if bracket {
            if self.eat(&Tok::Plus).is_some() {
                if let Tok::Int(i) = self.peek().tok {
                    // `[a+2]`: the element two places after `a` (elements, not bytes, as the
                    // register form counts them), known when the test is read.
                    let ispan = self.peek().span;
                    let len = self.array(&name).map_or(1, |a| a.len);
                    if !(0..i64::from(len)).contains(&i) {
                        return Err(Diagnostic::error(format!(
                            "element {i} is out of bounds of `{name}`, which has {len} element{}",
                            if len == 1 { "" } else { "s" }
                        ))
                        .at(ispan));
                    }
                    self.bump();
                    loc = LocId(loc.0 + i as u32);
                } else {
                    let (r, _) = self.register()?;
                    offset = Some(self.reg(t, &r));
                }
            }
            self.expect(&Tok::RBracket, "`]` to close the address")?;
        }
        Ok(Address::Loc { loc, index: offset })
    }

    /// A barrier number: an immediate 0 to 15, or a register (checked when it runs).
    fn barrier_id(&mut self, t: usize) -> Result<Operand, Diagnostic> {
        if let Some(r) = self.register_operand(t) {
            return Ok(r);
        }
        let (id, span) = self.u32_literal("a barrier number (0 to 15) or a register")?;
        if id > 15 {
            return Err(Diagnostic::error(format!(
                "barrier number {id} is out of range; PTX has barriers 0 to 15"
            ))
            .at(span)
            .expecting(&["a barrier number (0 to 15)"]));
        }
        Ok(Operand::Imm(id.into()))
    }

    /// A barrier's thread count: a positive immediate, or a register (checked when it runs).
    fn thread_count(&mut self, t: usize) -> Result<Operand, Diagnostic> {
        if let Some(r) = self.register_operand(t) {
            return Ok(r);
        }
        let (count, span) = self.u32_literal("a thread count or a register")?;
        if count == 0 {
            return Err(Diagnostic::error("a barrier's thread count must be positive").at(span));
        }
        Ok(Operand::Imm(count.into()))
    }

    /// The next token as a register operand, when it is one.
    fn register_operand(&mut self, t: usize) -> Option<Operand> {
        let Tok::Word(w) = &self.peek().tok else {
            return None;
        };
        let r = register_name(w)?;
        self.bump();
        Some(Operand::Reg(self.reg(t, &r)))
    }
}

/// The order and scope of a load or store from its qualifiers. Weak accesses get `Sys` (their
/// scope is irrelevant); strong ones need an explicit scope, except `.volatile` (relaxed.sys).
fn access_order(opcode: &str, q: &Quals) -> Result<(Order, Scope), Diagnostic> {
    match q.sem {
        None | Some((Sem::Weak, _)) => {
            if let Some((_, span)) = q.scope {
                return Err(Diagnostic::error(format!(
                    "a weak `{opcode}` takes no scope; write `.relaxed` or `.{}` with a scope \
                         for a strong access",
                    if opcode == "ld" { "acquire" } else { "release" }
                ))
                .at(span));
            }
            Ok((Order::Weak, Scope::Sys))
        }
        Some((Sem::Volatile, _)) => {
            if let Some((_, span)) = q.scope {
                return Err(Diagnostic::error(
                    "`.volatile` takes no scope: it means `.relaxed.sys`",
                )
                .at(span));
            }
            Ok((Order::Relaxed, Scope::Sys))
        }
        Some((sem, span)) => match q.scope {
            Some((scope, _)) => Ok((sem.order(), scope)),
            None => Err(Diagnostic::error(format!(
                "`{opcode}.{}` needs a scope; expected one of {SCOPE_LIST}",
                sem.name()
            ))
            .at(span)
            .expecting(&scope_expected())),
        },
    }
}
