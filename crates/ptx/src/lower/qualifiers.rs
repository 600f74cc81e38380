//! Types and qualifiers of an instruction, classified, and the instruction as text.

use scopecheck_ir::ptx::{scope, Sem, SCOPE_LIST};
use scopecheck_ir::{IntType, Order, Scope};

use crate::ast::{Instruction, Operand as Op, ScalarType, StateSpace};

use super::{LowerError, R};

/// `u32` to `.u32`, `pred`, `f16x2` / `bf16` (as floats); `None` for anything else.
fn scalar(m: &str) -> Option<ScalarType> {
    if m == "pred" {
        return Some(ScalarType::Pred);
    }
    if m.starts_with("bf16") || m == "f16x2" || m == "tf32" {
        return Some(ScalarType::F(16));
    }
    let (kind, n) = m.split_at(1.min(m.len()));
    let bits: u8 = n.parse().ok()?;
    if !matches!(bits, 8 | 16 | 32 | 64) {
        return None;
    }
    match kind {
        "b" => Some(ScalarType::B(bits)),
        "u" => Some(ScalarType::U(bits)),
        "s" => Some(ScalarType::S(bits)),
        "f" => Some(ScalarType::F(bits)),
        _ => None,
    }
}

pub(super) fn bits_of(t: ScalarType) -> u8 {
    match t {
        ScalarType::B(n) | ScalarType::U(n) | ScalarType::S(n) | ScalarType::F(n) => n,
        ScalarType::Pred => 1,
    }
}

/// The integer type of a PTX type: `.b` types are untyped bits, unsigned here (as in the
/// litmus dialect); floats are their bits when only moved (`bits_only`).
pub(super) fn int_of(t: ScalarType, bits_only: bool) -> Option<IntType> {
    match t {
        ScalarType::B(n) | ScalarType::U(n) => Some(IntType::new(n, false)),
        ScalarType::S(n) => Some(IntType::new(n, true)),
        ScalarType::F(n) if bits_only => Some(IntType::new(n, false)),
        ScalarType::F(_) | ScalarType::Pred => None,
    }
}

/// The IR type predicates compute in (they hold 0 or 1).
pub(super) const PRED: IntType = IntType::U32;

/// A qualifier of an instruction, classified.
#[derive(Default)]
pub(super) struct Quals<'a> {
    pub(super) types: Vec<ScalarType>,
    pub(super) space: Option<StateSpace>,
    pub(super) sem: Option<Sem>,
    pub(super) scope: Option<Scope>,
    pub(super) vec: Option<usize>,
    /// The rest, in order, for the opcode to interpret.
    pub(super) other: Vec<&'a str>,
}

fn space_of(m: &str) -> Option<StateSpace> {
    Some(match m {
        "global" => StateSpace::Global,
        "shared" | "shared::cta" => StateSpace::Shared,
        "shared::cluster" => StateSpace::SharedCluster,
        "const" => StateSpace::Const,
        "local" => StateSpace::Local,
        "param" | "param::entry" | "param::func" => StateSpace::Param,
        _ => return None,
    })
}

/// Cache operators and eviction hints: performance only, no memory-model meaning
/// (PTX ISA, "Cache Operators", "Cache Eviction Priority Hints").
fn is_cache_hint(m: &str) -> bool {
    matches!(m, "ca" | "cg" | "cs" | "lu" | "cv" | "wb" | "wt")
        || m.starts_with("L1::")
        || m.starts_with("L2::")
        || m.starts_with("level::")
}

pub(super) fn quals(ins: &Instruction, memory: bool) -> Quals<'_> {
    let mut q = Quals::default();
    for m in &ins.modifiers {
        let m = m.as_str();
        if let Some(t) = scalar(m) {
            q.types.push(t);
        } else if let (true, Some(s)) = (memory, space_of(m)) {
            q.space = Some(s);
        } else if let (true, Some(s)) = (memory, Sem::from_name(m)) {
            q.sem = Some(s);
        } else if let (true, Some(s)) = (memory, scope(m)) {
            q.scope = Some(s);
        } else if let (true, Some(n)) = (memory, m.strip_prefix('v')) {
            match n.parse() {
                Ok(k @ (2 | 4 | 8)) => q.vec = Some(k),
                _ => q.other.push(m),
            }
        } else if memory && is_cache_hint(m) {
        } else {
            q.other.push(m);
        }
    }
    q
}

pub(super) fn mnemonic(ins: &Instruction) -> String {
    let mut s = ins.opcode.clone();
    for m in &ins.modifiers {
        s.push('.');
        s.push_str(m);
    }
    s
}

pub(super) fn float_error(ins: &Instruction) -> LowerError {
    LowerError::at(
        ins,
        format!(
            "floating-point `{}` is not supported (floats are computed by `add`, `sub`, `mul`, `div.rn`, `fma.rn`, `min`, `max`, `neg`, `abs`, `sqrt.rn`, `setp`, `cvt`, `atom.add` on `.f32`/`.f64`)",
            mnemonic(ins)
        ),
    )
}

/// The one type of an integer instruction.
pub(super) fn one_type(ins: &Instruction, q: &Quals) -> R<ScalarType> {
    match q.types.as_slice() {
        [t] => Ok(*t),
        [] => Err(LowerError::at(
            ins,
            format!("`{}` needs a type (`.u32`, `.s64`, ...)", mnemonic(ins)),
        )),
        _ => Err(LowerError::at(
            ins,
            format!("`{}` has more than one type", mnemonic(ins)),
        )),
    }
}

/// The integer type of an arithmetic instruction (`.pred` for the logic ops).
pub(super) fn arith_type(ins: &Instruction, q: &Quals, pred_ok: bool) -> R<IntType> {
    match one_type(ins, q)? {
        ScalarType::Pred if pred_ok => Ok(PRED),
        ScalarType::F(_) => Err(float_error(ins)),
        t => int_of(t, false).ok_or_else(|| {
            LowerError::at(ins, format!("`{}`: a predicate type here", mnemonic(ins)))
        }),
    }
}

/// Fails on the first qualifier of `q.other` not in `allowed`.
pub(super) fn only(ins: &Instruction, q: &Quals, allowed: &[&str]) -> R<()> {
    for m in &q.other {
        if !allowed.contains(m) {
            let why = match *m {
                "cc" => "carry flags (`.cc`, `addc`) are not supported yet",
                "sat" | "satfinite" => "saturating arithmetic is not supported yet",
                "rn" | "rz" | "rm" | "rp" | "rni" | "rzi" | "rmi" | "rpi" | "ftz" | "approx"
                | "full" => return Err(float_error(ins)),
                _ => "",
            };
            return Err(LowerError::at(
                ins,
                if why.is_empty() {
                    format!("`.{m}` is not supported on `{}`", ins.opcode)
                } else {
                    format!("`{}`: {why}", mnemonic(ins))
                },
            ));
        }
    }
    Ok(())
}

pub(super) fn no_memory_quals(ins: &Instruction, q: &Quals) -> R<()> {
    if q.space.is_some() || q.sem.is_some() || q.scope.is_some() || q.vec.is_some() {
        return Err(LowerError::at(
            ins,
            format!("unexpected qualifiers on `{}`", mnemonic(ins)),
        ));
    }
    Ok(())
}

pub(super) fn render_operand(o: &Op) -> String {
    match o {
        Op::Reg(r) | Op::Symbol(r) => r.clone(),
        Op::Int(v) => v.to_string(),
        Op::Float {
            bits,
            double: false,
        } => format!("0f{bits:08X}"),
        Op::Float { bits, .. } => format!("0d{bits:016X}"),
        Op::Address { base, offset } => match offset {
            0 => format!("[{}]", render_operand(base)),
            o => format!("[{}+{o}]", render_operand(base)),
        },
        Op::Vector(v) => format!("{{{}}}", join(v)),
        Op::Texture(v) => format!("[{}]", join(v)),
        Op::Not(x) => format!("!{}", render_operand(x)),
        Op::Sink => "_".to_string(),
        Op::List(v) => format!("({})", join(v)),
    }
}

fn join(v: &[Op]) -> String {
    v.iter().map(render_operand).collect::<Vec<_>>().join(", ")
}

/// The instruction as PTX writes it: guard, opcode with qualifiers, operands.
pub(super) fn render(ins: &Instruction) -> String {
    let mut s = String::new();
    if let Some((p, neg)) = &ins.guard {
        s.push('@');
        if *neg {
            s.push('!');
        }
        s.push_str(p);
        s.push(' ');
    }
    s.push_str(&mnemonic(ins));
    if !ins.operands.is_empty() {
        s.push(' ');
        // `shfl`'s destination pair `%r8|%p2` as written.
        if ins.opcode == "shfl" && ins.operands.len() == 6 {
            s.push_str(&format!(
                "{}|{}, {}",
                render_operand(&ins.operands[0]),
                render_operand(&ins.operands[1]),
                join(&ins.operands[2..])
            ));
        } else {
            s.push_str(&join(&ins.operands));
        }
    }
    s
}

/// The order and scope of `ld` (`load`) or `st`, as the litmus dialect's `access_order`
/// (both from the table of `scopecheck_ir::ptx`): no semantics or `.weak` is a weak access (its scope is
/// irrelevant: `Sys`); `.volatile` is `.relaxed.sys`; `.relaxed`, `.acquire` (loads) and
/// `.release` (stores) need a scope (PTX ISA, "ld", "st").
pub(super) fn access_order(ins: &Instruction, q: &Quals, load: bool) -> R<(Order, Scope)> {
    match q.sem {
        None | Some(Sem::Weak) => {
            if q.scope.is_some() {
                return Err(LowerError::at(
                    ins,
                    format!("a weak `{}` takes no scope", ins.opcode),
                ));
            }
            Ok((Order::Weak, Scope::Sys))
        }
        Some(Sem::Volatile) => {
            if q.scope.is_some() {
                return Err(LowerError::at(
                    ins,
                    "`.volatile` takes no scope: it means `.relaxed.sys`",
                ));
            }
            Ok((Order::Relaxed, Scope::Sys))
        }
        Some(sem) => {
            let order = match (sem, load) {
                (Sem::Relaxed, _) | (Sem::Acquire, true) | (Sem::Release, false) => sem.order(),
                _ => {
                    return Err(LowerError::at(
                        ins,
                        format!("`.{}` is not allowed on `{}`", sem.name(), ins.opcode),
                    ))
                }
            };
            match q.scope {
                Some(scope) => Ok((order, scope)),
                None => Err(LowerError::at(
                    ins,
                    format!(
                        "`{}.{}` needs a scope; expected one of {SCOPE_LIST}",
                        ins.opcode,
                        sem.name()
                    ),
                )),
            }
        }
    }
}
