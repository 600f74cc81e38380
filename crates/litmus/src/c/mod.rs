//! The C dialect (herd7's C litmus format with placements, for CUDA C++ and OpenCL).
//!
//! [`lexer`] reads C tokens up to the condition, [`parse`] reads the header, initial state and
//! threads into an AST, [`lower`] turns each thread into IR instructions, and the condition is
//! handed to the PTX condition parser (re-lexed with the PTX lexer from where it starts), so
//! that conditions read the same in every dialect. The memory-space checks run last, on the
//! lowered threads. The dialect is described in `docs/litmus-c.md`.

mod lexer;
mod lower;
mod parse;

#[cfg(test)]
mod chain_tests;
#[cfg(test)]
pub(crate) mod tests;

use crate::lexer::Lexer;
use crate::ptx::{add_array, array_length, number_clusters, thread_number, Parser, RawPlacement};
use crate::Test;
use lexer::{CLexer, CTok};
use lower::{Lower, Ptr};
use parse::{space_word, CParser, CType, Stmt};
pub(crate) use parse::{MAX_CHAIN, MAX_DEPTH};
use scopecheck_ir::{
    Arch, Array, Diagnostic, InstrKind, IntType, LocId, Location, MemorySpace, Placement, Program,
    Scope, Span, Thread, Value,
};

/// A thread as written.
struct ThreadDef {
    name: String,
    span: Span,
    placement: RawPlacement,
    host: bool,
    params: Vec<(String, Span, CType)>,
    body: Stmt,
}

/// A register initialised in the initial state.
struct RegInit {
    thread: u32,
    thread_span: Span,
    reg: String,
    reg_span: Span,
    value: Value,
}

/// Locations with the space each was declared in (and where), if any.
struct Locs {
    locations: Vec<Location>,
    declared: Vec<Option<(MemorySpace, Span)>>,
    /// The type each location was first declared with, and where.
    typed: Vec<Option<(IntType, Span)>>,
    /// The arrays of the initial state; a parameter of an array's name points to its first
    /// element.
    arrays: Vec<Array>,
}

impl Locs {
    /// The locations of the allocation `loc` belongs to (an array's elements, or `loc`).
    fn allocation(&self, loc: LocId) -> std::ops::Range<usize> {
        match self
            .arrays
            .iter()
            .find(|a| (a.first.0..a.first.0 + a.len).contains(&loc.0))
        {
            Some(a) => a.first.0 as usize..(a.first.0 + a.len) as usize,
            None => loc.0 as usize..loc.0 as usize + 1,
        }
    }

    fn get_or_create(&mut self, name: &str, span: Span) -> LocId {
        if let Some(a) = self.arrays.iter().find(|a| a.name == name) {
            return a.first;
        }
        if let Some(i) = self.locations.iter().position(|l| l.name == name) {
            return LocId(i as u32);
        }
        self.locations.push(Location {
            name: name.to_string(),
            space: MemorySpace::Global,
            init: 0,
            ty: IntType::S32,
            span: Some(span),
        });
        self.declared.push(None);
        self.typed.push(None);
        LocId((self.locations.len() - 1) as u32)
    }

    /// Records that `loc` is declared in `space` at `span`; a different earlier space is an
    /// error.
    fn declare(&mut self, loc: LocId, space: MemorySpace, span: Span) -> Result<(), Diagnostic> {
        let i = loc.0 as usize;
        let name = self.locations.get(i).map_or("", |l| l.name.as_str());
        match self.declared.get(i).copied().flatten() {
            Some((old, old_span)) if old != space => Err(Diagnostic::error(format!(
                    "location `{name}` is declared in {} memory here but in {} memory at line {}, column {}",
                    space_name(space),
                    space_name(old),
                    old_span.line,
                    old_span.column
                )).at(span)),
            Some(_) => Ok(()),
            None => {
                // An array is declared as a whole.
                for e in self.allocation(loc) {
                    self.declared[e] = Some((space, span));
                    self.locations[e].space = space;
                }
                Ok(())
            }
        }
    }
}

impl Locs {
    /// Records that `loc` holds values of type `ty` (declared at `span`). Declarations that
    /// differ in signedness only are the same object seen as signed or unsigned (C allows
    /// that aliasing); another width is an error.
    fn declare_type(&mut self, loc: LocId, ty: IntType, span: Span) -> Result<(), Diagnostic> {
        let i = loc.0 as usize;
        match self.typed[i] {
            Some((old, at)) if old.bits != ty.bits => Err(Diagnostic::error(format!(
                    "location `{}` holds `{ty}` values here but `{old}` values at line {}, column {} (mixed-size accesses are not supported)",
                    self.locations[i].name, at.line, at.column
                )).at(span)),
            Some(_) => Ok(()),
            None => {
                for e in self.allocation(loc) {
                    self.typed[e] = Some((ty, span));
                    self.locations[e].ty = ty;
                }
                Ok(())
            }
        }
    }
}

fn space_name(s: MemorySpace) -> &'static str {
    match s {
        MemorySpace::Global => "global",
        MemorySpace::Shared => "local (shared)",
        MemorySpace::HostMapped => "host",
        MemorySpace::Managed => "managed",
        MemorySpace::HostPageable => "pageable",
    }
}

/// Parses a C, CUDA or OPENCL test; `lexer` stands just after the header word.
pub(crate) fn parse(mut lexer: Lexer<'_>, arch: &str) -> Result<Test, Diagnostic> {
    let src = lexer.source();
    let (name, name_span) = lexer.rest_of_line();
    if name.is_empty() {
        return Err(Diagnostic::error(format!(
            "expected the test name after `{arch}` on the header line"
        ))
        .at(name_span)
        .expecting(&["a test name"]));
    }
    let mut comments = std::mem::take(&mut lexer.comments);
    let mut clexer = CLexer::new(src, lexer.here_token_span());
    let toks = clexer.tokens()?;
    comments.append(&mut clexer.comments);
    let mut p = CParser::new(src, toks);
    // The description, then any further strings (a source, a URL), kept as docs.
    let mut description = None;
    let mut docs = Vec::new();
    while let CTok::Str(s) = &p.peek().tok {
        let s = s.clone();
        p.bump();
        match description {
            None => description = Some(s),
            Some(_) => docs.push(s),
        }
    }
    let mut locs = Locs {
        locations: Vec::new(),
        declared: Vec::new(),
        typed: Vec::new(),
        arrays: Vec::new(),
    };
    let reg_inits = if p.at_punct("{") {
        init_section(&mut p, &mut locs)?
    } else {
        Vec::new()
    };
    let mut defs = Vec::new();
    while p.peek().tok != CTok::End {
        defs.push(thread_def(&mut p, defs.len())?);
    }
    let cond_start = p.peek().span;
    if defs.is_empty() {
        return Err(p.error_expected("a thread such as `P0 (int* x) { ... }`", &["`P0`"]));
    }
    // Placements and clusters.
    let raw: Vec<(RawPlacement, Span, String)> = defs
        .iter_mut()
        .map(|d| {
            let pl = std::mem::replace(
                &mut d.placement,
                RawPlacement::Device {
                    warp: None,
                    cta: 0,
                    cluster: None,
                    gpu: 0,
                },
            );
            (pl, d.span, d.name.clone())
        })
        .collect();
    let placements = number_clusters(&raw)?;
    for init in &reg_inits {
        if init.thread as usize >= defs.len() {
            let n = defs.len();
            return Err(Diagnostic::error(format!(
                "no thread P{} in this test: it has {n} thread{}",
                init.thread,
                if n == 1 { "" } else { "s" }
            ))
            .at(init.thread_span));
        }
    }
    // Lower each thread.
    let mut threads = Vec::new();
    let mut warnings = Vec::new();
    for (t, (def, placement)) in defs.iter().zip(placements).enumerate() {
        let thread = lower_thread(
            src,
            (t, def, placement),
            &reg_inits,
            &mut locs,
            &mut warnings,
        )?;
        threads.push(thread);
    }
    for l in &mut locs.locations {
        l.init = l.ty.wrap(l.init);
    }
    check_spaces(&locs.locations, &mut threads, &mut warnings)?;
    // The condition, read by the PTX condition parser.
    let mut cond_lexer = Lexer::resume(src, cond_start);
    let tokens = cond_lexer.tokens()?;
    comments.append(&mut cond_lexer.comments);
    let (locations, threads, extra_observables, condition) =
        Parser::for_condition(src, tokens, locs.locations, locs.arrays.clone(), threads)
            .finish_condition()?;
    Ok(Test {
        program: Program {
            arch: if arch == "OPENCL" {
                Arch::OpenCl
            } else {
                Arch::C
            },
            name,
            description,
            locations,
            arrays: locs.arrays,
            threads,
            condition,
            extra_observables,
        },
        warnings,
        docs,
        options: crate::option_words(src, &comments),
    })
}

/// Lowers thread `t` (`def`, at `placement`): binds its parameters to the locations they
/// name (declaring their spaces and types in `locs`), sets its initial registers from
/// `reg_inits`, and lowers its body, adding what the lowering warns of to `warnings`.
fn lower_thread(
    src: &str,
    (t, def, placement): (usize, &ThreadDef, Placement),
    reg_inits: &[RegInit],
    locs: &mut Locs,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Thread, Diagnostic> {
    let mut lw = Lower::new(src, def.host);
    for (pname, pspan, ty) in &def.params {
        let loc = locs.get_or_create(pname, *pspan);
        let (space, space_span) = ty.space.unwrap_or((MemorySpace::Global, *pspan));
        locs.declare(loc, space, space_span)?;
        let vty = ty.value.unwrap_or(IntType::S32);
        locs.declare_type(loc, vty, *pspan)?;
        // Host threads operate at system scope whatever the type says; the lowering sees to
        // that.
        let access = ty.access;
        let ptr = Ptr {
            loc,
            len: locs.allocation(loc).len() as u32,
            access,
            ty: vty,
        };
        if !lw.bind_param(pname, ptr) {
            return Err(
                Diagnostic::error(format!("parameter `{pname}` is declared twice")).at(*pspan),
            );
        }
    }
    let mut init_regs = Vec::new();
    for init in reg_inits.iter().filter(|i| i.thread as usize == t) {
        let r = lw
            .init_register(&init.reg)
            .map_err(|m| Diagnostic::error(m).at(init.reg_span))?;
        if init_regs.iter().any(|(id, _)| *id == r) {
            return Err(Diagnostic::error(format!(
                "register P{t}:{} is initialised twice",
                init.reg
            ))
            .at(init.reg_span));
        }
        init_regs.push((r, init.value));
    }
    lw.body(&def.body)?;
    warnings.append(&mut lw.warnings);
    Ok(Thread {
        name: def.name.clone(),
        placement,
        span: Some(def.span),
        registers: lw.build.registers,
        init_regs,
        code: lw.build.code,
        after: vec![],
    })
}

/// `{ x=0; [y]=1; int z = 2; local int* w; x@shared=0; 1:r0=0; P1:r1=2; }`.
fn init_section(p: &mut CParser, locs: &mut Locs) -> Result<Vec<RegInit>, Diagnostic> {
    p.expect_punct("{", "`{`")?;
    let mut regs = Vec::new();
    loop {
        if p.eat_punct("}").is_some() {
            return Ok(regs);
        }
        if p.peek().tok == CTok::End {
            return Err(p.error_expected("`}` to close the initial state", &["`}`"]));
        }
        init_entry(p, locs, &mut regs)?;
        if p.eat_punct(";").is_none() && !p.at_punct("}") {
            return Err(p.error_expected(
                "`;` between initial-state entries, or `}` to close the initial state",
                &["`;`", "`}`"],
            ));
        }
    }
}

fn init_entry(p: &mut CParser, locs: &mut Locs, regs: &mut Vec<RegInit>) -> Result<(), Diagnostic> {
    if p.peek_at(1).tok == CTok::Punct(":") {
        let t = p.peek().clone();
        let thread = match &t.tok {
            CTok::Int(v) => u32::try_from(*v).ok(),
            CTok::Ident(w) => thread_number(w),
            _ => None,
        };
        let Some(thread) = thread else {
            return Err(p.error_expected("a thread such as `P0` or `0`", &["a thread"]));
        };
        p.bump();
        p.bump();
        let (reg, reg_span) = p.ident("a register (a local variable name)")?;
        p.expect_punct("=", "`=` and the register's initial value")?;
        let (value, _) = p.int_value("the register's initial value")?;
        regs.push(RegInit {
            thread,
            thread_span: t.span,
            reg,
            reg_span,
            value,
        });
        return Ok(());
    }
    let mut declared_ty = None;
    let (name, name_span, mut space) = if p.eat_punct("[").is_some() {
        let (n, s) = p.ident("a location name")?;
        p.expect_punct("]", "`]` after the location name")?;
        (n, s, None)
    } else {
        let ty = p.ctype()?;
        if ty.is_some() {
            // `int* p` declares the location `p` points to.
            if p.eat_punct("*").is_some() && p.at_punct("*") {
                return Err(
                    Diagnostic::error("not supported: pointers to pointers").at(p.peek().span)
                );
            }
        }
        let (n, s) = p.ident("a location name, `[location]` or `P0:r0`")?;
        declared_ty = ty.and_then(|t| t.value).map(|v| (v, s));
        (n, s, ty.and_then(|t| t.space))
    };
    // `int a[4]`: an array of that many elements.
    let declared_len = if p.eat_punct("[").is_some() {
        let len = array_length(p.u32_literal("the array's length")?)?;
        p.expect_punct("]", "`]` after the array's length")?;
        Some(len)
    } else {
        None
    };
    if p.eat_punct("@").is_some() {
        let (w, s) = p.ident("a memory space")?;
        let sp = space_word(&w).ok_or_else(|| {
            Diagnostic::error(format!("unknown memory space `{w}`; expected global, local, shared, host, managed or pageable")).at(s)
            .expecting(&["global", "local", "shared", "host", "managed", "pageable"])
        })?;
        space = Some((sp, s));
    }
    let mut values: Vec<(Value, Span)> = Vec::new();
    let mut braced = false;
    if p.eat_punct("=").is_some() {
        if p.at_punct("&") {
            return Err(Diagnostic::error(
                "not supported: pointer values in the initial state (locations hold integers)",
            )
            .at(p.peek().span));
        }
        if p.eat_punct("{").is_some() {
            // `= {1, 2}`: an array's values (a trailing comma is C).
            braced = true;
            while p.eat_punct("}").is_none() {
                values.push(p.int_value("an element's initial value")?);
                if p.eat_punct(",").is_none() {
                    p.expect_punct("}", "`,` or `}` after an element's value")?;
                    break;
                }
            }
        } else if declared_len.is_some() {
            return Err(p.error_expected("the array's values in braces, as in `{1, 2}`", &["`{`"]));
        } else {
            values.push(p.int_value("the location's initial value")?);
        }
    }
    if locs.locations.iter().any(|l| l.name == name) || locs.arrays.iter().any(|a| a.name == name) {
        return Err(
            Diagnostic::error(format!("location `{name}` is initialised twice")).at(name_span),
        );
    }
    let id = if declared_len.is_some() || braced {
        let len = crate::ptx::initialised_length(&name, name_span, declared_len, &values)?;
        let vals: Vec<Value> = values.iter().map(|(v, _)| *v).collect();
        let first = add_array(
            &mut locs.locations,
            &mut locs.arrays,
            &name,
            name_span,
            len,
            &vals,
            MemorySpace::Global,
        )?;
        for _ in 0..len {
            locs.declared.push(None);
            locs.typed.push(None);
        }
        first
    } else {
        let id = locs.get_or_create(&name, name_span);
        if let Some(l) = locs.locations.get_mut(id.0 as usize) {
            l.init = values.first().map_or(0, |v| v.0);
        }
        id
    };
    if let Some((sp, s)) = space {
        locs.declare(id, sp, s)?;
    }
    if let Some((ty, s)) = declared_ty {
        locs.declare_type(id, ty, s)?;
    }
    Ok(())
}

/// `P0@wg 0, dev 0 (global atomic_int* flag, global int* data) { ... }`.
fn thread_def(p: &mut CParser, index: usize) -> Result<ThreadDef, Diagnostic> {
    let start = p.peek().span;
    if p.at_ident("void") {
        p.bump();
    }
    let expected = format!("P{index}");
    let t = p.peek().clone();
    match &t.tok {
        CTok::Ident(w) if *w == expected => {
            p.bump();
        }
        CTok::Ident(w) if thread_number(w).is_some() => {
            return Err(Diagnostic::error(format!("expected thread `{expected}`, found `{w}`: threads must be named P0, P1, ... in order")).at(t.span)
            .expecting(&[format!("`{expected}`")]));
        }
        CTok::Ident(w) if p.peek_at(1).tok == CTok::Punct("(") || parse::is_type_start(w) => {
            return Err(Diagnostic::error("not supported: function definitions and global declarations (only threads `P0 (...) { ... }`)").at(t.span));
        }
        _ => {
            return Err(p.error_expected(
                &format!("thread `{expected}` or the condition"),
                &[
                    format!("`{expected}`"),
                    "`exists`".into(),
                    "`~exists`".into(),
                    "`forall`".into(),
                ],
            ))
        }
    }
    let (placement, host) = if p.eat_punct("@").is_some() {
        placement(p)?
    } else {
        (
            RawPlacement::Device {
                warp: None,
                cta: 0,
                cluster: None,
                gpu: 0,
            },
            false,
        )
    };
    let span = p.span_from(start);
    p.expect_punct("(", "`(` and the thread's parameters")?;
    let mut params = Vec::new();
    if p.at_ident("void") && p.peek_at(1).tok == CTok::Punct(")") {
        p.bump();
    }
    if p.eat_punct(")").is_none() {
        loop {
            params.push(param(p)?);
            if p.eat_punct(",").is_some() {
                continue;
            }
            p.expect_punct(")", "`,` or `)` in the parameter list")?;
            break;
        }
    }
    if !p.at_punct("{") {
        return Err(p.error_expected("`{` to open the thread body", &["`{`"]));
    }
    p.begin_thread();
    let body = p.block()?;
    Ok(ThreadDef {
        name: expected,
        span,
        placement,
        host,
        params,
        body,
    })
}

/// `global atomic_int* flag`.
fn param(p: &mut CParser) -> Result<(String, Span, CType), Diagnostic> {
    let Some(ty) = p.ctype()? else {
        return Err(p.error_expected("a parameter such as `global atomic_int* x`", &["a type"]));
    };
    if p.at_punct("&") {
        return Err(Diagnostic::error(
            "not supported: reference parameters (use a pointer `T* x`)",
        )
        .at(p.peek().span));
    }
    p.expect_punct("*", "`*`: parameters are pointers to shared locations")?;
    if p.at_punct("*") {
        return Err(Diagnostic::error("not supported: pointers to pointers").at(p.peek().span));
    }
    // Qualifiers after the `*` (`int* const x`, `int* __restrict__ x`).
    while let CTok::Ident(w) = &p.peek().tok {
        if matches!(w.as_str(), "const" | "__restrict__" | "restrict") {
            p.bump();
        } else {
            break;
        }
    }
    let (name, span) = p.ident("the parameter name")?;
    if p.at_punct("[") {
        return Err(
            Diagnostic::error("not supported: array parameters (use `T* x` and `x[0]`)")
                .at(p.peek().span),
        );
    }
    Ok((name, span, ty))
}

/// After `@`: `host`, or placement items in any order, each at most once, commas optional.
fn placement(p: &mut CParser) -> Result<(RawPlacement, bool), Diagnostic> {
    const ITEMS: &[&str] = &[
        "`host`",
        "`wi`",
        "`sg`",
        "`wg`",
        "`dev`",
        "`thread`",
        "`warp`",
        "`block`",
        "`cta`",
        "`cluster`",
        "`gpu`",
        "`device`",
    ];
    if p.at_ident("host") {
        p.bump();
        return Ok((RawPlacement::Host, true));
    }
    // warp, cta, cluster, gpu.
    let mut values: [Option<(u32, Span)>; 4] = [None; 4];
    let mut any = false;
    loop {
        let t = p.peek().clone();
        let CTok::Ident(w) = &t.tok else {
            if any && p.at_punct("(") {
                break;
            }
            return Err(p.error_expected(
                "a placement item (`wg 0`, `dev 0`, `block 0`, `gpu 0`, ...) or `host`",
                ITEMS,
            ));
        };
        let slot = match w.as_str() {
            "wi" | "thread" => None,
            "sg" | "warp" => Some(0),
            "wg" | "block" | "cta" => Some(1),
            "cluster" => Some(2),
            "dev" | "gpu" | "device" => Some(3),
            _ => {
                return Err(p.error_expected(
                    "a placement item (`wg 0`, `dev 0`, `block 0`, `gpu 0`, ...) or `host`",
                    ITEMS,
                ))
            }
        };
        p.bump();
        any = true;
        match slot {
            None => {
                // The thread's own index is irrelevant: every thread is its own thread.
                if matches!(p.peek().tok, CTok::Int(_)) {
                    p.bump();
                }
            }
            Some(i) => {
                if values[i].is_some() {
                    return Err(Diagnostic::error(format!(
                        "`{w}` repeats a placement level already given for this thread"
                    ))
                    .at(t.span));
                }
                values[i] = Some(p.u32_literal(&format!("the {w} number"))?);
            }
        }
        p.eat_punct(",");
        if p.at_punct("(") {
            break;
        }
    }
    let [warp, cta, cluster, gpu] = values;
    Ok((
        RawPlacement::Device {
            warp: warp.map(|v| v.0),
            cta: cta.map_or(0, |v| v.0),
            cluster,
            gpu: gpu.map_or(0, |v| v.0),
        },
        false,
    ))
}

/// The memory-space rules: a shared (`local`) location belongs to one CTA, and a scope wider
/// than the CTA on it is narrowed to the CTA with a warning.
fn check_spaces(
    locations: &[Location],
    threads: &mut [Thread],
    warnings: &mut Vec<Diagnostic>,
) -> Result<(), Diagnostic> {
    for (li, loc) in locations.iter().enumerate() {
        if loc.space != MemorySpace::Shared {
            continue;
        }
        let id = LocId(li as u32);
        let mut owner: Option<(usize, Placement)> = None;
        for (ti, t) in threads.iter().enumerate() {
            let Some(instr) = t.code.iter().find(|i| i.kind.named_loc() == Some(id)) else {
                continue;
            };
            if t.placement == Placement::Host {
                return Err(Diagnostic::error(format!(
                    "`{}` is in local (shared) memory, which host thread {} cannot touch",
                    loc.name, t.name
                ))
                .at(instr.span));
            }
            match &owner {
                None => owner = Some((ti, t.placement)),
                Some((o, pl)) if !pl.same_cta(&t.placement) => {
                    let other = threads.get(*o).map_or("", |x| x.name.as_str());
                    return Err(Diagnostic::error(format!(
                            "`{}` is in local (shared) memory, private to one block (work-group): {} is in another CTA than {other}, which also uses it",
                            loc.name, t.name
                        )).at(instr.span));
                }
                Some(_) => {}
            }
        }
    }
    for t in threads.iter_mut() {
        for instr in &mut t.code {
            let shared_loc = instr.kind.named_loc().and_then(|l| {
                locations
                    .get(l.0 as usize)
                    .filter(|x| x.space == MemorySpace::Shared)
            });
            match &mut instr.kind {
                InstrKind::Load { order, scope, .. }
                | InstrKind::Store { order, scope, .. }
                | InstrKind::Rmw { order, scope, .. } => {
                    if let Some(loc) = shared_loc {
                        if order.is_atomic() && *scope > Scope::Cta {
                            warnings.push(
                                Diagnostic::warning(format!(
                                    "atomic on `{}` (local/shared memory) with scope {}: treated as block (cta) scope",
                                    loc.name, scope
                                ))
                                .at(instr.span),
                            );
                            *scope = Scope::Cta;
                        }
                    }
                }
                InstrKind::Fence { scope, spaces, .. }
                    if spaces.shared && !spaces.global && *scope > Scope::Cta =>
                {
                    warnings.push(
                        Diagnostic::warning(format!(
                            "a fence on local memory only with scope {scope}: treated as work-group (cta) scope"
                        ))
                        .at(instr.span),
                    );
                    *scope = Scope::Cta;
                }
                _ => {}
            }
        }
    }
    Ok(())
}
