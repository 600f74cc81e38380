//! `scopecheck tune` reports: each maximal set of weakenings with the source line, the old and
//! the new spelling in the source's own language, and the cycles saved. Where no faithful
//! spelling can be made (an order the dialect cannot write, a scope it has no word for), the
//! change is said in words instead.

use std::fmt::Write as _;

use scopecheck_ir::{FenceOrder, InstrKind, IntType, Order, Program, Scope};
use scopecheck_model::tune::{Site, SiteChange, Step, Tuned, Tuning, WeakenedSet};
use serde_json::{json, Value};

/// The language a file is written in, which decides how a change is spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// PTX litmus tests, and a `.cu` file checked as its PTX view.
    Ptx,
    /// C litmus tests (`C`, `CUDA`, `OPENCL` headers).
    LitmusC,
    /// CUDA C++ (`.cu`).
    Cuda,
    /// OpenCL C (`.cl`).
    OpenCl,
}

/// One edit of the source: the text at `line` and what it becomes (`None`: removed).
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    pub line: u32,
    pub was: String,
    pub becomes: Option<String>,
}

/// A change as the report shows it: the edits that make it (empty when no faithful spelling
/// could be made) and the change in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Spelling {
    pub edits: Vec<Edit>,
    pub words: String,
}

fn scope_word(d: Dialect, s: Scope) -> Option<&'static str> {
    Some(match (d, s) {
        (Dialect::Ptx, _) => match s {
            Scope::Cta | Scope::Thread | Scope::Warp => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        },
        (Dialect::Cuda, Scope::Cta) => "block",
        (Dialect::Cuda, Scope::Cluster) => "cluster",
        (Dialect::Cuda, Scope::Gpu) => "device",
        (Dialect::Cuda, Scope::Sys) => "system",
        (_, Scope::Cta) => "work_group",
        (_, Scope::Gpu) => "device",
        (_, Scope::Sys) => "all_svm_devices",
        _ => return None,
    })
}

fn c_order(o: Order) -> &'static str {
    o.name()
}

fn c_fence_order(o: FenceOrder) -> &'static str {
    match o {
        FenceOrder::Sc => "seq_cst",
        o => o.name(),
    }
}

/// What a step does, in words, with the dialect's names of scopes.
fn step_words(d: Dialect, s: &Step) -> String {
    let scope = |s: Scope| scope_word(d, s).map_or_else(|| format!("{s}"), str::to_string);
    match s {
        Step::DropFence => "fence removed".into(),
        Step::Order { from, to } => format!("order {from} -> {to}"),
        Step::FenceOrder { from, to } if d == Dialect::Ptx => format!("fence {from} -> {to}"),
        Step::FenceOrder { from, to } => {
            format!("fence {} -> {}", c_fence_order(*from), c_fence_order(*to))
        }
        Step::Scope { from, to } => format!("scope {} -> {}", scope(*from), scope(*to)),
        Step::RmwToStore => "exchange whose old value is unused -> store".into(),
        Step::RmwToLoad => "RMW that never changes the value -> load".into(),
    }
}

fn words(d: Dialect, steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| step_words(d, s))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The order and scope of an access or fence, with whether it is a fence.
fn order_scope(kind: &InstrKind) -> Option<(Option<Order>, Option<FenceOrder>, Scope)> {
    match *kind {
        InstrKind::Load { order, scope, .. }
        | InstrKind::Store { order, scope, .. }
        | InstrKind::Rmw { order, scope, .. } => Some((Some(order), None, scope)),
        InstrKind::Fence { order, scope, .. } => Some((None, Some(order), scope)),
        _ => None,
    }
}

/// Splits the operands of a PTX instruction at its top-level commas.
fn ptx_operands(rest: &str) -> Vec<String> {
    rest.split(',')
        .map(|s| s.trim().trim_end_matches(';').trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The PTX spelling of `to`, keeping the original's state space, type and operands.
fn ptx_spelling(text: &str, to: &InstrKind) -> Option<String> {
    let text = text.trim().trim_end_matches(';');
    let (pred, body) = match text.strip_prefix('@') {
        Some(_) => {
            let (p, b) = text.split_once(char::is_whitespace)?;
            (format!("{p} "), b.trim_start())
        }
        None => (String::new(), text),
    };
    let (opcode, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    let mut parts = opcode.split('.');
    let base = parts.next()?;
    let quals: Vec<&str> = parts.collect();
    const ORDERS: [&str; 8] = [
        "weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "mmio",
    ];
    const SCOPES: [&str; 5] = ["cta", "cluster", "gpu", "sys", "gl"];
    let kept: Vec<&str> = quals
        .iter()
        .copied()
        .filter(|q| !ORDERS.contains(q) && !SCOPES.contains(q))
        .collect();
    // The state space and type, which an access made of an RMW keeps (not the operation).
    let space_type = |q: &&str| {
        q.starts_with("global")
            || q.starts_with("shared")
            || ["b", "u", "s"].iter().any(|p| {
                q.strip_prefix(p)
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
            })
    };
    let ops = ptx_operands(rest);
    let scope = |s: Scope| scope_word(Dialect::Ptx, s).unwrap_or("gpu");
    let (new_base, order, scope, kept, ops): (&str, &str, &str, Vec<&str>, Vec<String>) = match *to
    {
        InstrKind::Fence {
            order, scope: s, ..
        } => {
            let o = match order {
                FenceOrder::Sc => "sc",
                FenceOrder::AcqRel => "acq_rel",
                _ => return None,
            };
            ("fence", o, scope(s), vec![], ops)
        }
        InstrKind::Load {
            order, scope: s, ..
        } => {
            let o = match order {
                Order::Relaxed => "relaxed",
                Order::Acquire => "acquire",
                _ => return None,
            };
            let ops = if base == "ld" {
                ops
            } else if base == "atom" && ops.len() >= 2 {
                ops[..2].to_vec()
            } else {
                return None;
            };
            let kept = kept.into_iter().filter(space_type).collect();
            ("ld", o, scope(s), kept, ops)
        }
        InstrKind::Store {
            order, scope: s, ..
        } => {
            let o = match order {
                Order::Relaxed => "relaxed",
                Order::Release => "release",
                _ => return None,
            };
            let ops = match base {
                "st" => ops,
                // `atom.exch d, [a], v` stores v at a.
                "atom" if ops.len() == 3 => vec![ops[1].clone(), ops[2].clone()],
                "red" if ops.len() == 2 => ops,
                _ => return None,
            };
            let kept = kept.into_iter().filter(space_type).collect();
            ("st", o, scope(s), kept, ops)
        }
        InstrKind::Rmw {
            order, scope: s, ..
        } => {
            let o = match order {
                Order::Relaxed => "relaxed",
                Order::Acquire => "acquire",
                Order::Release => "release",
                Order::AcqRel => "acq_rel",
                _ => return None,
            };
            (base, o, scope(s), kept, ops)
        }
        _ => return None,
    };
    let mut op = format!("{new_base}.{order}.{scope}");
    for q in kept {
        op.push('.');
        op.push_str(q);
    }
    Some(if ops.is_empty() {
        format!("{pred}{op}")
    } else {
        format!("{pred}{op} {}", ops.join(", "))
    })
}

/// The byte range of the first `word` in `text` that stands as a whole identifier.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text[from..].find(word).map(|i| i + from) {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            return Some(i);
        }
        from = i + word.len();
    }
    None
}

/// The identifier that starts at byte `i` of `text` (`memory_order_acquire` from the `m`).
fn ident_at(text: &str, i: usize) -> &str {
    let end = text[i..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(text.len(), |e| e + i);
    &text[i..end]
}

/// The identifiers of `text` that start with `prefix` (not in the middle of a longer
/// identifier), each with its byte offset.
fn prefixed_idents<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = (usize, &'a str)> {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(i) = text[from..].find(prefix).map(|i| i + from) {
            let start_ok = !text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            let id = ident_at(text, i);
            from = i + id.len().max(1);
            if start_ok {
                return Some((i, id));
            }
        }
        None
    })
}

/// Replaces the `n`th identifier starting with `prefix` by `prefix` + `word`.
fn replace_nth_prefixed(text: &str, prefix: &str, n: usize, word: &str) -> Option<String> {
    let (i, id) = prefixed_idents(text, prefix).nth(n)?;
    Some(format!(
        "{}{prefix}{word}{}",
        &text[..i],
        &text[i + id.len()..]
    ))
}

/// The rest of the `n`th identifier starting with `prefix` (`acquire` of `memory_order_acquire`).
fn nth_prefixed_word(text: &str, prefix: &str, n: usize) -> Option<String> {
    let (_, id) = prefixed_idents(text, prefix).nth(n)?;
    Some(id[prefix.len()..].to_string())
}

/// How many identifiers starting with `prefix` the text has.
fn count_prefixed(text: &str, prefix: &str) -> usize {
    prefixed_idents(text, prefix).count()
}

/// The call's arguments: the text between the parenthesis after byte `open` and its match,
/// split at top-level commas, with the index just past the closing parenthesis.
fn call_args(text: &str, open: usize) -> Option<(Vec<String>, usize)> {
    let mut depth = 0;
    let mut args = Vec::new();
    let mut cur = String::new();
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' | '[' | '{' | '<' if !(c == '<' && depth == 0) => {
                depth += 1;
                if depth > 1 {
                    cur.push(c);
                }
            }
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    if !cur.trim().is_empty() || !args.is_empty() {
                        args.push(cur.trim().to_string());
                    }
                    return Some((args, open + i + 1));
                }
                cur.push(c);
            }
            ',' if depth == 1 => args.push(std::mem::take(&mut cur).trim().to_string()),
            _ if depth >= 1 => cur.push(c),
            _ => {}
        }
    }
    None
}

/// The CUDA C++ name of an integer type, for an `atomic_ref` the change introduces.
fn cuda_type(ty: IntType) -> Option<&'static str> {
    Some(match (ty.bits, ty.signed) {
        (32, true) => "int",
        (32, false) => "unsigned int",
        (64, true) => "long long",
        (64, false) => "unsigned long long",
        _ => return None,
    })
}

/// The object a CUDA `atomicXxx(p, ...)` works on, as an lvalue: `x` for `&x`, `*p` for `p`.
fn pointee(arg: &str) -> String {
    match arg.strip_prefix('&') {
        Some(x) => x.trim().to_string(),
        None if arg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => format!("*{arg}"),
        None => format!("*({arg})"),
    }
}

/// A CUDA builtin atomic (`atomicAdd`, `atomicExch_block`, ...) at byte `i`: its name without
/// the scope suffix.
fn cuda_builtin(text: &str) -> Option<(usize, &str, &str)> {
    let i = find_prefixed_ident(text, "atomic")?;
    let name = ident_at(text, i);
    let rest = name.strip_prefix("atomic")?;
    if !rest.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let base = name
        .strip_suffix("_block")
        .or_else(|| name.strip_suffix("_system"))
        .unwrap_or(name);
    Some((i, name, base))
}

fn find_prefixed_ident(text: &str, prefix: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(prefix).map(|i| i + from) {
        if !text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        {
            return Some(i);
        }
        from = i + prefix.len();
    }
    None
}

fn suffix(scope: Scope) -> Option<&'static str> {
    match scope {
        Scope::Cta => Some("_block"),
        Scope::Gpu => Some(""),
        Scope::Sys => Some("_system"),
        _ => None,
    }
}

/// The C-family spelling (litmus C, CUDA C++, OpenCL C) of changing `text` from `from` to
/// `to`: the instruction's new text, and, for a CUDA `atomic_ref` or `atomic` object whose
/// scope its declaration names, the declaration's edit. `None` when it cannot be spelled.
fn c_spelling(
    d: Dialect,
    site: &Site,
    change: &SiteChange,
    source: &str,
) -> Option<(String, Option<Edit>)> {
    let text = site.text.trim().trim_end_matches(';').to_string();
    let to = change.becomes.as_ref()?;
    let (_, _, from_scope) = order_scope(&site.kind)?;
    let (to_order, to_fence, to_scope) = order_scope(to)?;
    let cuda_words = d == Dialect::Cuda || text.contains("cuda::") || text.contains("atomic");
    let mut t = text.clone();
    let mut decl = None;
    // Fences: `__threadfence*()`, `atomic_thread_fence(...)`, `atomic_work_item_fence(...)`.
    if let Some(f) = to_fence {
        if let Some(i) = find_prefixed_ident(&t, "__threadfence") {
            let name = ident_at(&t, i).to_string();
            let (_, end) = call_args(&t, i + name.len())?;
            if f == FenceOrder::Sc {
                let s = suffix(to_scope)?;
                t = format!("{}__threadfence{s}(){}", &t[..i], &t[end..]);
            } else {
                let s = scope_word(Dialect::Cuda, to_scope)?;
                t = format!(
                    "{}cuda::atomic_thread_fence(cuda::memory_order_{}, cuda::thread_scope_{s}){}",
                    &t[..i],
                    c_fence_order(f),
                    &t[end..]
                );
            }
            return Some((t, None));
        }
        let order = c_fence_order(f);
        t = replace_nth_prefixed(&t, "memory_order_", 0, order)?;
        if to_scope != from_scope {
            t = rescope(d, &t, to_scope)?;
        }
        return Some((t, None));
    }
    let to_order = to_order?;
    let o = c_order(to_order);
    // A CUDA builtin made a load or a store: an `atomic_ref` of the object does it.
    if let Some((i, _, base)) = cuda_builtin(&t) {
        let (args, end) = call_args(&t, i + ident_at(&t, i).len())?;
        let replaced = change
            .steps
            .iter()
            .any(|s| matches!(s, Step::RmwToLoad | Step::RmwToStore));
        if replaced {
            let ty = match site.kind {
                InstrKind::Rmw { ty, .. } => cuda_type(ty)?,
                _ => return None,
            };
            let s = scope_word(Dialect::Cuda, to_scope)?;
            let obj = pointee(args.first()?);
            let op = match to {
                InstrKind::Store { .. } => {
                    format!("store({}, cuda::memory_order_{o})", args.get(1)?)
                }
                _ => format!("load(cuda::memory_order_{o})"),
            };
            let call = format!("cuda::atomic_ref<{ty}, cuda::thread_scope_{s}>({obj}).{op}");
            // A store's text keeps nothing of what the exchange's result was assigned to.
            let head = if matches!(to, InstrKind::Store { .. }) {
                ""
            } else {
                &t[..i]
            };
            return Some((format!("{head}{call}{}", &t[end..]), None));
        }
        // Builtins are relaxed: only their scope changes, by the name's suffix.
        if !matches!(to_order, Order::Relaxed) {
            return None;
        }
        let name = format!("{base}{}", suffix(to_scope)?);
        t = format!("{}{name}{}", &t[..i], &t[i + ident_at(&t, i).len()..]);
        return Some((t, None));
    }
    // The RMW made a store or a load: rename the operation, drop what it no longer takes.
    if let Some(step) = change
        .steps
        .iter()
        .find(|s| matches!(s, Step::RmwToLoad | Step::RmwToStore))
    {
        t = replace_rmw(&t, *step)?;
    }
    // The order.
    let orders = count_prefixed(&t, "memory_order_");
    let want_order = order_scope(&site.kind)
        .and_then(|(o, _, _)| o)
        .is_some_and(|from| {
            let from = match to {
                InstrKind::Store { .. } if from == Order::AcqRel => Order::Release,
                InstrKind::Load { .. } if from == Order::AcqRel => Order::Acquire,
                _ => from,
            };
            from != to_order
        });
    if orders > 0 {
        t = replace_nth_prefixed(&t, "memory_order_", 0, o)?;
        // A CAS's failure order may not be stronger than what its success order reads with.
        if orders > 1 {
            let read = match to_order {
                Order::AcqRel | Order::Acquire => "acquire",
                Order::SeqCst => "seq_cst",
                _ => "relaxed",
            };
            let rank = |w: &str| {
                ["relaxed", "consume", "acquire", "seq_cst"]
                    .iter()
                    .position(|x| *x == w)
            };
            let second = nth_prefixed_word(&t, "memory_order_", 1)?;
            if rank(&second) > rank(read) {
                t = replace_nth_prefixed(&t, "memory_order_", 1, read)?;
            }
        }
    } else if want_order {
        t = add_order(&t, o, cuda_words)?;
    }
    // The scope.
    if to_scope != from_scope {
        if count_prefixed(&t, "memory_scope_") + count_prefixed(&t, "thread_scope_") > 0 {
            t = rescope(d, &t, to_scope)?;
        } else {
            // Without a declaration that names the scope, the scope is said in words.
            decl = declaration_edit(&t, site.span.line, source, to_scope);
        }
    }
    Some((t, decl))
}

/// Replaces the scope word (`memory_scope_*`, `thread_scope_*`) by `to`'s.
fn rescope(d: Dialect, t: &str, to: Scope) -> Option<String> {
    if count_prefixed(t, "memory_scope_") > 0 {
        let w = scope_word(
            if d == Dialect::Cuda {
                Dialect::LitmusC
            } else {
                d
            },
            to,
        )?;
        replace_nth_prefixed(t, "memory_scope_", 0, w)
    } else {
        replace_nth_prefixed(t, "thread_scope_", 0, scope_word(Dialect::Cuda, to)?)
    }
}

/// An RMW call renamed to the store or load that replaces it: `atomic_exchange_explicit(x, v,
/// ...)` to `atomic_store_explicit(x, v, ...)`, `atomic_fetch_add_explicit(x, 0, ...)` to
/// `atomic_load_explicit(x, ...)`, `.exchange(v, ...)` to `.store(v, ...)`, `.fetch_or(0, ...)`
/// to `.load(...)`.
fn replace_rmw(t: &str, step: Step) -> Option<String> {
    let (from_names, to_name): (&[&str], &str) = match step {
        Step::RmwToStore => (&["atomic_exchange", "exchange"], "store"),
        _ => (
            &[
                "atomic_fetch_add",
                "atomic_fetch_sub",
                "atomic_fetch_or",
                "atomic_fetch_xor",
                "atomic_fetch_and",
                "fetch_add",
                "fetch_sub",
                "fetch_or",
                "fetch_xor",
                "fetch_and",
            ],
            "load",
        ),
    };
    for name in from_names {
        for explicit in ["_explicit", ""] {
            let full = format!("{name}{explicit}");
            let Some(i) = find_word(t, &full) else {
                continue;
            };
            let (mut args, end) = call_args(t, i + full.len())?;
            let member = t[..i].ends_with('.') || t[..i].ends_with("->");
            // The operand of the RMW: the first argument of a member call, the second of a
            // free function.
            let at = usize::from(!member);
            if step == Step::RmwToLoad {
                if args.len() <= at {
                    return None;
                }
                args.remove(at);
            }
            let new_name = if member {
                to_name.to_string()
            } else {
                format!("atomic_{to_name}{explicit}")
            };
            // A store's statement keeps nothing of what the exchange's result was assigned to.
            let head = if step == Step::RmwToStore {
                let start = t[..i].rfind('=').map_or(0, |e| e + 1);
                let head = t[start..i].trim_start();
                if start > 0 {
                    head.to_string()
                } else {
                    t[..i].to_string()
                }
            } else {
                t[..i].to_string()
            };
            return Some(format!(
                "{head}{new_name}({}){}",
                args.join(", "),
                &t[end..]
            ));
        }
    }
    None
}

/// Adds an explicit order to a call that has none: a member call (`c.fetch_add(1)`) gets a
/// last argument, a C11 function (`atomic_store(x, 1)`) becomes its `_explicit` form.
fn add_order(t: &str, o: &str, cuda: bool) -> Option<String> {
    let open = t.find('(')?;
    let name_start = t[..open]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &t[name_start..open];
    let member = t[..name_start].ends_with('.') || t[..name_start].ends_with("->");
    let (args, end) = call_args(t, open)?;
    let mut args = args;
    if member {
        let prefix = if cuda {
            "cuda::memory_order_"
        } else {
            "memory_order_"
        };
        args.push(format!("{prefix}{o}"));
        Some(format!("{}({}){}", &t[..open], args.join(", "), &t[end..]))
    } else if name.starts_with("atomic_") && !name.ends_with("_explicit") {
        args.push(format!("memory_order_{o}"));
        Some(format!(
            "{}{name}_explicit({}){}",
            &t[..name_start],
            args.join(", "),
            &t[end..]
        ))
    } else {
        None
    }
}

/// The edit narrowing the scope of the atomic object a member call (`c.fetch_add(...)`) works
/// on, at its declaration (`cuda::atomic_ref<int, cuda::thread_scope_device> c(*p);`): the
/// nearest line at or before `line` that declares the name with a `thread_scope_`.
fn declaration_edit(t: &str, line: u32, source: &str, to: Scope) -> Option<Edit> {
    let object = object_name(t)?;
    let object = object.as_str();
    let lines: Vec<&str> = source.lines().collect();
    let upto = (line as usize).min(lines.len());
    for (n, l) in lines[..upto].iter().enumerate().rev() {
        if !l.contains("thread_scope_") {
            continue;
        }
        let Some(i) = find_word(l, object) else {
            continue;
        };
        let after = l[i + object.len()..].trim_start();
        if !after.starts_with(['(', '{', ';', '=', '[', ',', ')']) {
            continue;
        }
        let new = replace_nth_prefixed(l, "thread_scope_", 0, scope_word(Dialect::Cuda, to)?)?;
        return Some(Edit {
            line: n as u32 + 1,
            was: l.trim().to_string(),
            becomes: Some(new.trim().to_string()),
        });
    }
    None
}

/// The object a member call works on: `c` of `c.fetch_add(1)`, `status` of
/// `status[i].load()`, `f` of `f->store(1)`.
fn object_name(t: &str) -> Option<String> {
    let t = t.trim().trim_start_matches('*');
    let end = t.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    let rest = &t[end..];
    let member = rest.starts_with('.') || rest.starts_with("->") || rest.starts_with('[');
    (end > 0 && member).then(|| t[..end].to_string())
}

/// Why the checker treats an atomic on `__shared__` memory at block scope whatever scope it
/// is written with (the CUDA front-end narrows it, with a warning at the access).
const SHARED_SCOPE_REASON: &str = "the checker already treats it as block scope: an atomic on __shared__ memory is only meaningful within its block";

/// The scope a CUDA access is written with, where it can be read from its text: a builtin's
/// suffix (`atomicAdd_system`, `atomicAdd_block`, `atomicAdd` at device scope) or the
/// `thread_scope_` of the nearest declaration of the object a member call works on.
fn written_scope(text: &str, line: u32, source: &str) -> Option<Scope> {
    if let Some((_, name, _)) = cuda_builtin(text) {
        return Some(if name.ends_with("_system") {
            Scope::Sys
        } else if name.ends_with("_block") {
            Scope::Cta
        } else {
            Scope::Gpu
        });
    }
    let decl = declaration_edit(text, line, source, Scope::Cta)?;
    let at = decl.was.find("thread_scope_")? + "thread_scope_".len();
    let word = ident_at(&decl.was, at);
    match word {
        "system" => Some(Scope::Sys),
        "device" => Some(Scope::Gpu),
        "block" => Some(Scope::Cta),
        _ => None,
    }
}

/// The narrowings the checker already applies that the source does not say (CUDA only): an
/// atomic on `__shared__` memory written at device or system scope, which the front-end
/// treats as block scope. Each is proposed as the change to block scope, spelled as a tuning
/// step would be, with the reason; one per site (a statement, in every thread that runs it).
pub fn already_narrowed(
    d: Dialect,
    program: &Program,
    t: &Tuned,
    source: &str,
) -> Vec<(usize, Spelling)> {
    if d != Dialect::Cuda {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (k, site) in t.sites.iter().enumerate() {
        let Some((Some(_), None, Scope::Cta)) = order_scope(&site.kind) else {
            continue;
        };
        let shared = site.kind.named_loc().is_some_and(|l| {
            program.locations[l.0 as usize].space == scopecheck_ir::MemorySpace::Shared
        });
        if !shared {
            continue;
        }
        let Some(written) = written_scope(&site.text, site.span.line, source) else {
            continue;
        };
        if written <= Scope::Cta {
            continue;
        }
        // Spelled as the step from the written scope to block scope.
        let mut as_written = site.clone();
        set_scope(&mut as_written.kind, written);
        let change = SiteChange {
            site: k,
            steps: vec![Step::Scope {
                from: written,
                to: Scope::Cta,
            }],
            becomes: Some(site.kind.clone()),
            saved_cycles: None,
        };
        let mut s = spell(d, &as_written, &change, source);
        s.words = SHARED_SCOPE_REASON.to_string();
        if !s.edits.is_empty() {
            out.push((k, s));
        }
    }
    out
}

/// Sets the scope of an access or fence.
fn set_scope(kind: &mut InstrKind, to: Scope) {
    match kind {
        InstrKind::Load { scope, .. }
        | InstrKind::Store { scope, .. }
        | InstrKind::Rmw { scope, .. }
        | InstrKind::Fence { scope, .. } => *scope = to,
        _ => {}
    }
}

/// How one change of a set is spelled.
pub fn spell(d: Dialect, site: &Site, change: &SiteChange, source: &str) -> Spelling {
    let words = words(d, &change.steps);
    let line = site.span.line;
    let was = site.text.clone();
    let Some(to) = &change.becomes else {
        return Spelling {
            edits: vec![Edit {
                line,
                was,
                becomes: None,
            }],
            words,
        };
    };
    let spelled = match d {
        Dialect::Ptx => ptx_spelling(&site.text, to).map(|t| (t, None)),
        _ => c_spelling(d, site, change, source),
    };
    let scope_changes = change.steps.iter().any(|s| matches!(s, Step::Scope { .. }));
    match spelled {
        Some((t, decl)) => {
            let mut words = words;
            let in_text = [
                "memory_scope_",
                "thread_scope_",
                "_block",
                "_system",
                "__threadfence",
            ]
            .iter()
            .any(|w| t.contains(w))
                || cuda_builtin(&t).is_some();
            if d != Dialect::Ptx && scope_changes && decl.is_none() && !in_text {
                words.push_str(
                    " (the scope is the atomic object's: narrow it where the object is declared)",
                );
            }
            let mut edits = Vec::new();
            if let Some(e) = decl {
                edits.push(e);
            }
            if t != site.text.trim().trim_end_matches(';') {
                edits.push(Edit {
                    line,
                    was,
                    becomes: Some(t),
                });
            }
            Spelling { edits, words }
        }
        None => Spelling {
            edits: vec![],
            words,
        },
    }
}

/// The spellings of a set's changes; two changes that edit one declaration differently (or an
/// object whose declaration other, unchanged accesses share) lose their declaration edit and
/// say in words to give the access an object of its own.
fn spell_set(d: Dialect, tuned: &Tuned, set: &WeakenedSet, source: &str) -> Vec<Spelling> {
    let mut out: Vec<Spelling> = set
        .changes
        .iter()
        .map(|c| spell(d, &tuned.sites[c.site], c, source))
        .collect();
    for k in 0..out.len() {
        let Some(decl) = out[k]
            .edits
            .iter()
            .find(|e| e.line != tuned.sites[set.changes[k].site].span.line)
            .cloned()
        else {
            continue;
        };
        // Every site whose object the declaration declares must get the same new declaration.
        let object_of = |s: &Site| object_name(&s.text);
        let object = object_of(&tuned.sites[set.changes[k].site]);
        // The sites naming the same object whose nearest declaration is this one.
        let declared_here = |s: &Site| {
            object_of(s) == object
                && declaration_edit(&s.text, s.span.line, source, Scope::Gpu)
                    .is_some_and(|e| e.line == decl.line)
        };
        let shared_differently = tuned.sites.iter().enumerate().any(|(i, s)| {
            if !declared_here(s) {
                return false;
            }
            match set.changes.iter().position(|c| c.site == i) {
                None => true,
                Some(j) => !out[j].edits.contains(&decl),
            }
        });
        if shared_differently {
            let line = decl.line;
            out[k].edits.retain(|e| e.line != line);
            out[k].words.push_str(&format!(
                " (other accesses share the declaration at line {line}: give this one an atomic_ref of its own at the narrower scope)"
            ));
        }
    }
    out
}

fn threads(program: &Program, site: &Site) -> String {
    let mut names: Vec<&str> = site
        .members
        .iter()
        .map(|(t, _)| program.thread(*t).name.as_str())
        .collect();
    names.dedup();
    if names.len() > 4 {
        let n = names.len();
        format!("{} and {} more", names[..3].join(", "), n - 3)
    } else {
        names.join(", ")
    }
}

fn cycles_text(c: Option<f64>) -> String {
    // A saving that rounds to nothing is shown as 0, not -0.
    c.map_or("cost unknown".to_string(), |c| {
        format!("{:.0} cycles", c.round() + 0.0)
    })
}

/// Why each verdict that is not right is not: `under src11: its requirement fails, it races`.
fn not_right_reasons(verdicts: &[scopecheck_model::Verdict]) -> Vec<String> {
    verdicts
        .iter()
        .filter(|v| !scopecheck_model::suggest::is_right(v))
        .map(|v| {
            let mut w = Vec::new();
            if v.outcome != scopecheck_model::Outcome::Ok
                && v.quantifier != scopecheck_ir::Quantifier::Exists
            {
                w.push("its requirement fails");
            }
            if v.model != "ptx" && v.is_racy() {
                w.push("it races");
            }
            if v.terminates() == Some(false) {
                w.push("it may hang");
            }
            format!("under {}: {}", v.model, w.join(", "))
        })
        .collect()
}

/// The text report of tuning one file, herd7-like: a `Tune` header, one block per maximal set,
/// the operations already the weakest, and how many re-checks it took.
pub fn tune_text(
    program: &Program,
    models: &[&str],
    tuning: &Tuning,
    dialect: Dialect,
    source: &str,
    file: &str,
) -> String {
    let name = &program.name;
    let mut out = String::new();
    let models = models.join(" and ");
    match tuning {
        Tuning::NotRight(verdicts) => {
            let why = not_right_reasons(verdicts);
            let _ = writeln!(
                out,
                "Tune {name}: not right ({}); nothing to weaken. Run `scopecheck check --suggest {file}` for the cheapest strengthening that makes it right",
                why.join("; ")
            );
        }
        Tuning::Unsettled(why) => {
            let _ = writeln!(out, "Tune {name}: cannot tune: {why}");
        }
        Tuning::Tuned(t) => {
            if t.sets.is_empty() && t.incomplete.is_some() {
                // A cut search vouches for no "nothing": it may stop before any weakening.
                let _ = writeln!(
                    out,
                    "Tune {name}: no weakening found under {models} before the search stopped (see Incomplete: some may be possible)"
                );
            } else if t.sets.is_empty() {
                let _ = writeln!(out, "Tune {name}: nothing can be weakened under {models}");
            } else {
                let _ = writeln!(
                    out,
                    "Tune {name}: {} maximal set{} of weakenings keep{} every verdict under {models}",
                    t.sets.len(),
                    if t.sets.len() == 1 { "" } else { "s" },
                    if t.sets.len() == 1 { "s" } else { "" },
                );
            }
            for (k, set) in t.sets.iter().enumerate() {
                let _ = writeln!(out, "Set {} saves {}", k + 1, cycles_text(set.saved_cycles));
                for (c, s) in set.changes.iter().zip(spell_set(dialect, t, set, source)) {
                    let site = &t.sites[c.site];
                    let who = threads(program, site);
                    let saved = cycles_text(c.saved_cycles);
                    if s.edits.is_empty() {
                        let _ = writeln!(
                            out,
                            "  line {}: {} ({}; {saved}) [{who}]",
                            site.span.line, site.text, s.words
                        );
                    }
                    for e in &s.edits {
                        let becomes = e.becomes.as_deref().unwrap_or("(removed)");
                        let _ = writeln!(
                            out,
                            "  line {}: {} -> {becomes} ({}; {saved}) [{who}]",
                            e.line, e.was, s.words
                        );
                    }
                }
            }
            let narrowed = already_narrowed(dialect, program, t, source);
            for (k, s) in &narrowed {
                let site = &t.sites[*k];
                for e in &s.edits {
                    let becomes = e.becomes.as_deref().unwrap_or("(removed)");
                    let _ = writeln!(
                        out,
                        "Narrowest line {}: {} -> {becomes} ({}) [{}]",
                        e.line,
                        e.was,
                        s.words,
                        threads(program, site)
                    );
                }
            }
            for w in &t.weakest {
                let site = &t.sites[w.site];
                let why = if w.breaking.is_empty() {
                    "no weaker spelling".to_string()
                } else {
                    format!(
                        "each breaks it: {}",
                        words(dialect, &w.breaking).replace("; ", ", ")
                    )
                };
                let _ = writeln!(
                    out,
                    "Weakest line {}: {} ({why}) [{}]",
                    site.span.line,
                    site.text,
                    threads(program, site)
                );
            }
            if let Some(why) = &t.incomplete {
                let _ = writeln!(out, "Incomplete: {why}");
            }
            let _ = writeln!(out, "Checks {name} {}", t.checks);
        }
    }
    out
}

fn steps_json(d: Dialect, steps: &[Step]) -> Vec<String> {
    steps.iter().map(|s| step_words(d, s)).collect()
}

/// The JSON object of tuning one file (one NDJSON line; `docs/json.md`).
pub fn tune_json(
    file: &str,
    program: &Program,
    models: &[&str],
    tuning: &Tuning,
    dialect: Dialect,
    source: &str,
) -> Value {
    let mut v = json!({
        "file": file,
        "test": program.name,
        "models": models,
    });
    let m = v.as_object_mut().expect("an object");
    match tuning {
        Tuning::NotRight(verdicts) => {
            m.insert("status".into(), "not_right".into());
            m.insert("reasons".into(), not_right_reasons(verdicts).into());
            m.insert(
                "hint".into(),
                format!("scopecheck check --suggest {file}").into(),
            );
        }
        Tuning::Unsettled(why) => {
            m.insert("status".into(), "unsettled".into());
            m.insert("reason".into(), why.clone().into());
        }
        Tuning::Tuned(t) => {
            let status = match (t.sets.is_empty(), &t.incomplete) {
                (false, _) => "tuned",
                (true, Some(_)) => "incomplete",
                (true, None) => "nothing",
            };
            m.insert("status".into(), status.into());
            let sets: Vec<Value> = t
                .sets
                .iter()
                .map(|set| {
                    let changes: Vec<Value> = set
                        .changes
                        .iter()
                        .zip(spell_set(dialect, t, set, source))
                        .map(|(c, s)| {
                            let site = &t.sites[c.site];
                            json!({
                                "threads": site.members.iter().map(|(th, _)| program.thread(*th).name.clone()).collect::<Vec<_>>(),
                                "line": site.span.line,
                                "column": site.span.column,
                                "text": site.text,
                                "steps": steps_json(dialect, &c.steps),
                                "words": s.words,
                                "edits": s.edits.iter().map(|e| json!({
                                    "line": e.line,
                                    "was": e.was,
                                    "becomes": e.becomes,
                                })).collect::<Vec<_>>(),
                                "saved_cycles": c.saved_cycles,
                            })
                        })
                        .collect();
                    json!({ "saved_cycles": set.saved_cycles, "changes": changes })
                })
                .collect();
            m.insert("sets".into(), sets.into());
            let weakest: Vec<Value> = t
                .weakest
                .iter()
                .map(|w| {
                    let site = &t.sites[w.site];
                    json!({
                        "threads": site.members.iter().map(|(th, _)| program.thread(*th).name.clone()).collect::<Vec<_>>(),
                        "line": site.span.line,
                        "text": site.text,
                        "breaking": steps_json(dialect, &w.breaking),
                    })
                })
                .collect();
            m.insert("weakest".into(), weakest.into());
            let narrowest: Vec<Value> = already_narrowed(dialect, program, t, source)
                .into_iter()
                .map(|(k, s)| {
                    let site = &t.sites[k];
                    json!({
                        "threads": site.members.iter().map(|(th, _)| program.thread(*th).name.clone()).collect::<Vec<_>>(),
                        "line": site.span.line,
                        "column": site.span.column,
                        "text": site.text,
                        "reason": s.words,
                        "edits": s.edits.iter().map(|e| json!({
                            "line": e.line,
                            "was": e.was,
                            "becomes": e.becomes,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            m.insert("narrowest".into(), narrowest.into());
            m.insert("checks".into(), t.checks.into());
            m.insert(
                "incomplete".into(),
                t.incomplete.clone().map_or(Value::Null, Value::from),
            );
        }
    }
    v
}

/// What tune found as SARIF results (`tune --sarif`): one `tune-weakening` note per change of
/// each maximal set, at the changed line, saying the new spelling and the cycles the set
/// saves; the set's other changes are related locations, since only the whole set is known to
/// keep every verdict. A program that is not right gets nothing here (`check --sarif` reports
/// why).
pub fn tune_sarif(
    file: &str,
    tuning: &Tuning,
    dialect: Dialect,
    source: &str,
) -> Vec<crate::sarif::SarifResult> {
    use crate::sarif::{escape, rules, Place, Region, SarifResult};
    let Tuning::Tuned(t) = tuning else {
        return Vec::new();
    };
    let place = |span: scopecheck_ir::Span, message: Option<String>| Place {
        file: file.to_string(),
        region: Region::of_span(Some(source), span),
        message,
    };
    let mut out = Vec::new();
    for (k, set) in t.sets.iter().enumerate() {
        let spellings = spell_set(dialect, t, set, source);
        for (j, (change, sp)) in set.changes.iter().zip(&spellings).enumerate() {
            let site = &t.sites[change.site];
            let what = match sp.edits.first() {
                Some(Edit {
                    was,
                    becomes: Some(b),
                    ..
                }) => format!("`{}` could be `{}`", was.trim(), b.trim()),
                Some(Edit {
                    was, becomes: None, ..
                }) => format!("`{}` could be removed", was.trim()),
                None => format!("`{}`: {}", site.text.trim(), sp.words),
            };
            let related: Vec<Place> = set
                .changes
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != j)
                .map(|(_, c)| {
                    let s = &t.sites[c.site];
                    place(s.span, Some(escape(s.text.trim())))
                })
                .collect();
            let mut message = format!(
                "{} and every verdict still holds (maximal set {} of {}, saving {} in all",
                escape(&what),
                k + 1,
                t.sets.len(),
                cycles_text(set.saved_cycles)
            );
            if !related.is_empty() {
                message.push_str(&format!(
                    ", together with {} other change(s) at the related locations",
                    related.len()
                ));
            }
            message.push(')');
            let mut properties = serde_json::Map::new();
            properties.insert("set".into(), json!(k + 1));
            properties.insert("sets".into(), json!(t.sets.len()));
            properties.insert("savedCycles".into(), json!(change.saved_cycles));
            out.push(SarifResult {
                rule: rules::TUNE_WEAKENING,
                level: rules::TUNE_WEAKENING.level,
                message,
                locations: vec![place(site.span, None)],
                related,
                properties,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_spellings_keep_the_operands_and_the_type() {
        let st = |order, scope| InstrKind::Store {
            addr: scopecheck_ir::Address::loc(scopecheck_ir::LocId(0)),
            value: scopecheck_ir::Operand::Imm(1),
            ty: IntType::S32,
            order,
            scope,
        };
        assert_eq!(
            ptx_spelling("st.release.gpu [flag], 1", &st(Order::Relaxed, Scope::Cta)).as_deref(),
            Some("st.relaxed.cta [flag], 1")
        );
        assert_eq!(
            ptx_spelling(
                "atom.exch.b32 r0, [flag], 1",
                &st(Order::Release, Scope::Gpu)
            )
            .as_deref(),
            Some("st.release.gpu.b32 [flag], 1")
        );
        let fence = InstrKind::Fence {
            order: FenceOrder::AcqRel,
            scope: Scope::Cta,
            spaces: scopecheck_ir::FenceSpaces::ALL,
        };
        assert_eq!(
            ptx_spelling("fence.sc.gpu", &fence).as_deref(),
            Some("fence.acq_rel.cta")
        );
        assert_eq!(
            ptx_spelling("membar.gl", &fence).as_deref(),
            Some("fence.acq_rel.cta")
        );
    }

    #[test]
    fn c_words_are_replaced_in_place() {
        assert_eq!(
            replace_nth_prefixed(
                "atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device)",
                "memory_scope_",
                0,
                "work_group"
            )
            .as_deref(),
            Some("atomic_store_explicit(flag, 1, memory_order_release, memory_scope_work_group)")
        );
        assert_eq!(
            replace_rmw(
                "atomic_fetch_add_explicit(flag, 0, memory_order_acquire, memory_scope_device)",
                Step::RmwToLoad
            )
            .as_deref(),
            Some("atomic_load_explicit(flag, memory_order_acquire, memory_scope_device)")
        );
        assert_eq!(
            replace_rmw(
                "int old = f.exchange(1, cuda::memory_order_release)",
                Step::RmwToStore
            )
            .as_deref(),
            Some("f.store(1, cuda::memory_order_release)")
        );
        assert_eq!(
            add_order("c.fetch_add(1)", "relaxed", true).as_deref(),
            Some("c.fetch_add(1, cuda::memory_order_relaxed)")
        );
        assert_eq!(
            declaration_edit(
                "c.fetch_add(1, cuda::memory_order_relaxed)",
                4,
                "x\n  cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);\ny\nz\n",
                Scope::Cta
            ),
            Some(Edit {
                line: 2,
                was: "cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);".into(),
                becomes: Some(
                    "cuda::atomic_ref<int, cuda::thread_scope_block> c(*counter);".into()
                ),
            })
        );
    }
}
