//! One launch of one kernel of a PTX module, lowered to IR threads.
//!
//! Every thread of the launch gets its own copy of the kernel's code, in which the special
//! registers (`%tid`, `%ctaid`, ...) are constants and `ld.param` of a kernel parameter is the
//! launch's argument. Everything else runs as the PTX computes it: addresses are register
//! values (pointers are plain 64-bit values, [`Program::address_of`]), branches go to
//! instruction indices, device functions are inlined.
//!
//! Registers of the IR have no type: a value is canonical in the type of the operation that
//! computed it ([`IntType::wrap`]), and a `Binary` wraps its operands to its own type first.
//! So same-width operations need nothing; only width changes (`cvt`, `mul.wide`, `mad.wide`,
//! packing) are written out as explicit wraps (a `Binary` `or 0` in the source or target type).
//!
//! Addresses keep their allocation number in bits 32 and up. PTX computes shared-memory
//! addresses in 32-bit registers (`mov.u32 %r1, smem; add.s32 %r2, %r1, %r3`), which would cut
//! that number off; the registers that may hold a variable's address are found first
//! (`Analysis`), and `mov`, `cvt`, `cvta`, `add`, `sub`, `and`, `or`, `selp` and `mad`'s addend
//! on them are computed in 64 bits (the other operand sign-extended). Their low 32 bits are the same as
//! the 32-bit result, so every other use of the value (a comparison, a shift) sees what the
//! hardware would: the offset in the allocation.

use std::collections::{BTreeSet, HashMap, HashSet};

use scopecheck_ir::{
    Address, BarrierKind, BarrierRedOp, BinOp, BranchCond, DevicePlacement, FenceOrder,
    FenceSpaces, Instr, InstrKind, IntType, LocId, Location, MemorySpace, Operand, Order,
    Placement, Program, RegId, RmwKind, RmwOp, Scope, ShflMode, Span, Thread, ThreadId, Value,
    VoteOp, WarpOp,
};

mod float;

use crate::ast::{
    Body, Function, Instruction, Module, Operand as Op, ScalarType, StateSpace, Statement, Variable,
};

/// One launch of one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The `.entry` name as in the module (mangled), or a demangled base name (or `ns::name`)
    /// that matches exactly one entry.
    pub kernel: String,
    /// `gridDim`, in CTAs.
    pub grid: [u32; 3],
    /// `blockDim`, in threads.
    pub block: [u32; 3],
    /// Cluster dimensions in CTAs, `[1, 1, 1]` when not clustered.
    pub cluster: [u32; 3],
    pub gpu: u32,
    /// One per `.param` of the kernel, in order.
    pub args: Vec<Arg>,
    /// The number of the launch's first thread in thread names (`P<n>`).
    pub first_thread: u32,
    /// Bytes of dynamic shared memory per CTA (the third `<<<...>>>` argument): the size of
    /// an `.extern .shared` array.
    pub shared_bytes: u32,
}

/// A kernel argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An integer (wrapped to the parameter's type).
    Value(i64),
    /// A pointer to the first element of an allocation.
    Pointer(LocId),
    /// A pointer `offset` bytes into the allocation of a location.
    PointerAt(LocId, i64),
    /// A struct passed by value: each field at its byte offset in the parameter (as the C
    /// layout puts it), read by `ld.param` at `[param+offset]`.
    Struct(Vec<(i64, Arg)>),
}

/// Why a kernel cannot be lowered, at the PTX instruction or declaration at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LowerError {
    pub message: String,
    pub span: Span,
    /// The `.loc` of the instruction: (file number, line, column).
    pub loc: Option<(u32, u32, u32)>,
}

impl LowerError {
    fn new(span: Span, message: impl Into<String>) -> Self {
        LowerError {
            message: message.into(),
            span,
            loc: None,
        }
    }

    fn at(ins: &Instruction, message: impl Into<String>) -> Self {
        LowerError {
            message: message.into(),
            span: ins.span,
            loc: ins.loc,
        }
    }
}

type R<T> = Result<T, LowerError>;

/// Appends to `program` the module's variables the kernel uses (a `.global`/`.const` variable
/// once per program, reused when a location of that name exists; a `.shared` variable once
/// per CTA, named `name@cta<k>`; a `.local` one once per thread) and one thread per thread of
/// the launch, block-major (all threads of block 0 first, x fastest); returns the new threads.
/// On an error, `program` is left as it was.
pub fn lower(
    module: &Module,
    launch: &Launch,
    program: &mut Program,
) -> Result<Vec<ThreadId>, LowerError> {
    let before = (
        program.locations.len(),
        program.arrays.len(),
        program.threads.len(),
    );
    let lowered = lower_into(module, launch, program);
    if lowered.is_err() {
        // Lowering only appends (a reused location is not changed).
        program.locations.truncate(before.0);
        program.arrays.truncate(before.1);
        program.threads.truncate(before.2);
    }
    lowered
}

fn lower_into(module: &Module, launch: &Launch, program: &mut Program) -> R<Vec<ThreadId>> {
    let kernel = find_kernel(module, &launch.kernel)?;
    let geo = Geometry::new(launch, kernel.span)?;
    if kernel.params.len() == launch.args.len() {
        // A `.param .b8 p[N]` is a struct passed by value: its argument must give its fields.
        for (p, a) in kernel.params.iter().zip(&launch.args) {
            if p.array.is_some() && !matches!(a, Arg::Struct(_)) {
                return Err(LowerError::new(
                    p.span,
                    format!(
                        "kernel parameter `{}` is a struct passed by value, but its argument is not one",
                        p.name
                    ),
                ));
            }
        }
    }
    if kernel.params.len() != launch.args.len() {
        return Err(LowerError::new(
            kernel.span,
            format!(
                "kernel `{}` takes {} parameter(s); the launch gives {} argument(s)",
                kernel.name,
                kernel.params.len(),
                launch.args.len()
            ),
        ));
    }
    let mut analysis = Analysis::new(module, kernel)?;
    analysis.dynamic_shared = u64::from(launch.shared_bytes);
    // Every `.extern .shared` array starts at the same address: two of them would alias.
    let dynamic: Vec<&Variable> = module
        .variables
        .iter()
        .filter(|v| {
            v.space == StateSpace::Shared
                && v.dims.first() == Some(&None)
                && analysis.used.contains(&v.name)
        })
        .collect();
    if dynamic.len() > 1 {
        return Err(LowerError::new(
            dynamic[1].span,
            "several dynamic shared arrays (they alias one another): not supported yet",
        ));
    }
    let cx = Cx {
        module,
        launch,
        kernel,
        analysis,
    };
    let mut memory = Memory::default();
    // Module variables first, in declaration order, so that their locations come before the
    // per-CTA and per-thread ones.
    let mut created = Vec::new();
    for v in &module.variables {
        if !cx.analysis.used.contains(&v.name) {
            continue;
        }
        if matches!(v.space, StateSpace::Global | StateSpace::Const) {
            let key = (None, v.name.clone());
            let before = program.locations.len();
            let mem = global_variable(program, &cx.analysis, &key, v)?;
            if program.locations.len() != before {
                created.push((v, mem));
            }
            memory.globals.insert(key, mem);
        }
    }
    // Initial values that are addresses, now that every variable has one.
    for (v, mem) in created {
        address_inits(program, module, &memory, v, mem)?;
    }
    let per_block = geo.threads_per_block();
    let mut ids = Vec::new();
    for b in 0..geo.blocks() {
        for v in &module.variables {
            if v.space == StateSpace::Shared && cx.analysis.used.contains(&v.name) {
                let key = (None, v.name.clone());
                let mem = new_variable(
                    program,
                    &cx.analysis,
                    &key,
                    v,
                    &format!("{}@cta{b}", v.name),
                )?;
                memory.shared.insert((key, b), mem);
            }
        }
        for t in 0..per_block {
            let n = b * per_block + t;
            let name = format!("P{}", launch.first_thread + n);
            let sp = geo.specials(b, t);
            let placement = Placement::Device(DevicePlacement {
                gpu: launch.gpu,
                cluster: sp.cluster_linear,
                cta: b,
                warp: Some(t / 32),
            });
            let mut lw = Lower::new(&cx, program, &mut memory, sp, name.clone(), b);
            lw.kernel()?;
            let (registers, code) = lw.finish();
            let id = ThreadId(program.threads.len() as u32);
            program.threads.push(Thread {
                name,
                placement,
                span: Some(kernel.span),
                registers,
                init_regs: vec![],
                code,
                after: vec![],
            });
            ids.push(id);
        }
    }
    Ok(ids)
}

// ---- kernels by name ----

fn find_kernel<'m>(module: &'m Module, name: &str) -> R<&'m Function> {
    let entries: Vec<&Function> = module.functions.iter().filter(|f| f.entry).collect();
    if let Some(f) = entries.iter().find(|f| f.name == name) {
        return Ok(f);
    }
    let matching: Vec<&&Function> = entries
        .iter()
        .filter(|f| {
            demangle(&f.name).is_some_and(|(base, qualified)| base == name || qualified == name)
        })
        .collect();
    let names = || {
        entries
            .iter()
            .map(|f| format!("`{}`", f.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match matching.as_slice() {
        [f] => Ok(f),
        [] => Err(LowerError::new(
            Span::default(),
            format!(
                "no kernel `{name}` in the module; its kernels are {}",
                names()
            ),
        )),
        _ => Err(LowerError::new(
            Span::default(),
            format!(
                "`{name}` names several kernels ({}); give the mangled name",
                matching
                    .iter()
                    .map(|f| format!("`{}`", f.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The base name and the `::`-qualified name an Itanium-mangled function name declares
/// (`_Z7produceriPi` gives `producer`; `_ZN2ns6kernelEv` gives `kernel` and `ns::kernel`).
fn demangle(mangled: &str) -> Option<(String, String)> {
    let rest = mangled.strip_prefix("_Z")?;
    let b = rest.as_bytes();
    let nested = b.first() == Some(&b'N');
    let mut i = usize::from(nested);
    // CV-qualifiers of a member function come before the names.
    while nested && i < b.len() && matches!(b[i], b'r' | b'V' | b'K') {
        i += 1;
    }
    let mut parts = Vec::new();
    loop {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            break;
        }
        let n: usize = rest[start..i].parse().ok()?;
        parts.push(rest.get(i..i + n)?);
        i += n;
        if !nested {
            break;
        }
    }
    let base = parts.last()?.to_string();
    Some((base, parts.join("::")))
}

// ---- the launch's shape and the special registers ----

struct Geometry {
    grid: [u32; 3],
    block: [u32; 3],
    cluster: [u32; 3],
}

fn coords(i: u32, d: [u32; 3]) -> [u32; 3] {
    [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])]
}

fn linear(c: [u32; 3], d: [u32; 3]) -> u32 {
    c[0] + d[0] * (c[1] + d[1] * c[2])
}

impl Geometry {
    fn new(l: &Launch, span: Span) -> R<Self> {
        for (what, d) in [("grid", l.grid), ("block", l.block), ("cluster", l.cluster)] {
            if d.contains(&0) {
                return Err(LowerError::new(
                    span,
                    format!("the launch's {what} dimensions {d:?} contain a 0"),
                ));
            }
        }
        if (0..3).any(|k| !l.grid[k].is_multiple_of(l.cluster[k])) {
            return Err(LowerError::new(
                span,
                format!(
                    "the grid {:?} is not a whole number of clusters {:?}",
                    l.grid, l.cluster
                ),
            ));
        }
        let total = l
            .grid
            .iter()
            .chain(&l.block)
            .try_fold(1u32, |n, &d| n.checked_mul(d));
        if total.is_none() {
            return Err(LowerError::new(span, "the launch has too many threads"));
        }
        Ok(Geometry {
            grid: l.grid,
            block: l.block,
            cluster: l.cluster,
        })
    }

    fn blocks(&self) -> u32 {
        self.grid.iter().product()
    }

    fn threads_per_block(&self) -> u32 {
        self.block.iter().product()
    }

    /// The special registers of thread `t` of block `b` (both linear, x fastest).
    fn specials(&self, b: u32, t: u32) -> Specials {
        let ctaid = coords(b, self.grid);
        let cluster_ctaid = [0, 1, 2].map(|k| ctaid[k] % self.cluster[k]);
        let clusterid = [0, 1, 2].map(|k| ctaid[k] / self.cluster[k]);
        let nclusterid = [0, 1, 2].map(|k| self.grid[k] / self.cluster[k]);
        Specials {
            tid: coords(t, self.block),
            ntid: self.block,
            ctaid,
            nctaid: self.grid,
            cluster_ctaid,
            cluster_nctaid: self.cluster,
            clusterid,
            nclusterid,
            cluster_ctarank: linear(cluster_ctaid, self.cluster),
            cluster_nctarank: self.cluster.iter().product(),
            cluster_linear: linear(clusterid, nclusterid),
            linear_tid: t,
            nwarps: self.threads_per_block().div_ceil(32),
        }
    }
}

/// The values of the special registers for one thread (PTX ISA, "Special Registers").
#[derive(Clone, Copy, Debug)]
struct Specials {
    tid: [u32; 3],
    ntid: [u32; 3],
    ctaid: [u32; 3],
    nctaid: [u32; 3],
    cluster_ctaid: [u32; 3],
    cluster_nctaid: [u32; 3],
    clusterid: [u32; 3],
    nclusterid: [u32; 3],
    cluster_ctarank: u32,
    cluster_nctarank: u32,
    cluster_linear: u32,
    linear_tid: u32,
    nwarps: u32,
}

impl Specials {
    fn get(&self, name: &str) -> Option<Value> {
        let lane = self.linear_tid % 32;
        let v3 = |v: [u32; 3], c: &str| match c {
            "x" => Some(v[0]),
            "y" => Some(v[1]),
            "z" => Some(v[2]),
            _ => None,
        };
        let v = match name.split_once('.') {
            Some((reg, c)) => match reg {
                "%tid" => v3(self.tid, c),
                "%ntid" => v3(self.ntid, c),
                "%ctaid" => v3(self.ctaid, c),
                "%nctaid" => v3(self.nctaid, c),
                "%cluster_ctaid" => v3(self.cluster_ctaid, c),
                "%cluster_nctaid" => v3(self.cluster_nctaid, c),
                "%clusterid" => v3(self.clusterid, c),
                "%nclusterid" => v3(self.nclusterid, c),
                _ => None,
            },
            None => match name {
                "%laneid" => Some(lane),
                // The PTX %warpid is the hardware warp slot, which may change under
                // preemption; the warp's number in its CTA is what a test can rely on.
                "%warpid" => Some(self.linear_tid / 32),
                // Likewise the number of warps of the CTA, not the hardware's maximum.
                "%nwarpid" => Some(self.nwarps),
                "%cluster_ctarank" => Some(self.cluster_ctarank),
                "%cluster_nctarank" => Some(self.cluster_nctarank),
                "%gridid" => Some(0),
                "%lanemask_eq" => Some(1 << lane),
                "%lanemask_lt" => Some((1u32 << lane) - 1),
                "%lanemask_le" => Some(((1u64 << (lane + 1)) - 1) as u32),
                "%lanemask_gt" => Some(!(((1u64 << (lane + 1)) - 1) as u32)),
                "%lanemask_ge" => Some(!((1u32 << lane) - 1)),
                _ => None,
            },
        }?;
        Some(Value::from(v))
    }
}

/// Special registers whose value the program does not determine.
fn unmodelled_special(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(
        base,
        "%clock"
            | "%clock64"
            | "%clock_hi"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%smid"
            | "%nsmid"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%aggr_smem_size"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
            | "%is_explicit_cluster"
    ) || base.starts_with("%envreg")
        || base.starts_with("%pm")
}

// ---- types and qualifiers ----

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

fn bits_of(t: ScalarType) -> u8 {
    match t {
        ScalarType::B(n) | ScalarType::U(n) | ScalarType::S(n) | ScalarType::F(n) => n,
        ScalarType::Pred => 1,
    }
}

/// The integer type of a PTX type: `.b` types are untyped bits, unsigned here (as in the
/// litmus dialect); floats are their bits when only moved (`bits_only`).
fn int_of(t: ScalarType, bits_only: bool) -> Option<IntType> {
    match t {
        ScalarType::B(n) | ScalarType::U(n) => Some(IntType::new(n, false)),
        ScalarType::S(n) => Some(IntType::new(n, true)),
        ScalarType::F(n) if bits_only => Some(IntType::new(n, false)),
        ScalarType::F(_) | ScalarType::Pred => None,
    }
}

/// The IR type predicates compute in (they hold 0 or 1).
const PRED: IntType = IntType::U32;

/// A qualifier of an instruction, classified.
#[derive(Default)]
struct Quals<'a> {
    types: Vec<ScalarType>,
    space: Option<StateSpace>,
    sem: Option<&'a str>,
    scope: Option<Scope>,
    vec: Option<usize>,
    /// The rest, in order, for the opcode to interpret.
    other: Vec<&'a str>,
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

// Mirrors the scope table of crates/litmus/src/instr.rs (`SCOPES`).
fn scope_of(m: &str) -> Option<Scope> {
    Some(match m {
        "cta" => Scope::Cta,
        "cluster" => Scope::Cluster,
        "gpu" => Scope::Gpu,
        "sys" => Scope::Sys,
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

fn quals(ins: &Instruction, memory: bool) -> Quals<'_> {
    let mut q = Quals::default();
    for m in &ins.modifiers {
        let m = m.as_str();
        if let Some(t) = scalar(m) {
            q.types.push(t);
        } else if let (true, Some(s)) = (memory, space_of(m)) {
            q.space = Some(s);
        } else if memory
            && matches!(
                m,
                "weak" | "relaxed" | "acquire" | "release" | "acq_rel" | "sc" | "volatile" | "mmio"
            )
        {
            q.sem = Some(m);
        } else if let (true, Some(s)) = (memory, scope_of(m)) {
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

fn mnemonic(ins: &Instruction) -> String {
    let mut s = ins.opcode.clone();
    for m in &ins.modifiers {
        s.push('.');
        s.push_str(m);
    }
    s
}

fn float_error(ins: &Instruction) -> LowerError {
    LowerError::at(
        ins,
        format!(
            "floating-point `{}` is not supported (floats are computed by `add`, `sub`, `mul`, `div.rn`, `fma.rn`, `min`, `max`, `neg`, `abs`, `sqrt.rn`, `setp`, `cvt`, `atom.add` on `.f32`/`.f64`)",
            mnemonic(ins)
        ),
    )
}

/// The one type of an integer instruction.
fn one_type(ins: &Instruction, q: &Quals) -> R<ScalarType> {
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
fn arith_type(ins: &Instruction, q: &Quals, pred_ok: bool) -> R<IntType> {
    match one_type(ins, q)? {
        ScalarType::Pred if pred_ok => Ok(PRED),
        ScalarType::F(_) => Err(float_error(ins)),
        t => int_of(t, false).ok_or_else(|| {
            LowerError::at(ins, format!("`{}`: a predicate type here", mnemonic(ins)))
        }),
    }
}

/// Fails on the first qualifier of `q.other` not in `allowed`.
fn only(ins: &Instruction, q: &Quals, allowed: &[&str]) -> R<()> {
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

fn no_memory_quals(ins: &Instruction, q: &Quals) -> R<()> {
    if q.space.is_some() || q.sem.is_some() || q.scope.is_some() || q.vec.is_some() {
        return Err(LowerError::at(
            ins,
            format!("unexpected qualifiers on `{}`", mnemonic(ins)),
        ));
    }
    Ok(())
}

// ---- the instruction as text ----

fn render_operand(o: &Op) -> String {
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
fn render(ins: &Instruction) -> String {
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

// ---- walking bodies ----

fn visit<'m>(body: &'m Body, f: &mut impl FnMut(&'m Instruction)) {
    for s in &body.statements {
        match s {
            Statement::Instruction(i) => f(i),
            Statement::Block(b) => visit(b, f),
            Statement::Label(..) => {}
        }
    }
}

fn all_locals<'m>(body: &'m Body, out: &mut Vec<&'m Variable>) {
    out.extend(&body.locals);
    for s in &body.statements {
        if let Statement::Block(b) = s {
            all_locals(b, out);
        }
    }
}

/// Every symbol an operand names (address bases, vector and list elements included).
fn symbols<'m>(o: &'m Op, out: &mut Vec<&'m str>) {
    match o {
        Op::Symbol(s) => out.push(s),
        Op::Address { base, .. } | Op::Not(base) => symbols(base, out),
        Op::Vector(v) | Op::List(v) | Op::Texture(v) => v.iter().for_each(|o| symbols(o, out)),
        Op::Reg(_) | Op::Int(_) | Op::Float { .. } | Op::Sink => {}
    }
}

/// `call (ret), f, (args)`: the return list, the callee operand, the argument list.
fn call_parts(ins: &Instruction) -> (&[Op], Option<&Op>, &[Op]) {
    let ops = ins.operands.as_slice();
    let (rets, rest) = match ops.first() {
        Some(Op::List(r)) => (r.as_slice(), &ops[1..]),
        _ => (&[][..], ops),
    };
    let args = match rest.get(1) {
        Some(Op::List(a)) => a.as_slice(),
        _ => &[],
    };
    (rets, rest.first(), args)
}

/// The function `name`: its definition when the module has one (a module may declare a
/// function before defining it).
fn find_function<'m>(module: &'m Module, name: &str) -> Option<&'m Function> {
    let mut named = module.functions.iter().filter(|f| f.name == name);
    let first = named.clone().next();
    named.find(|f| f.body.is_some()).or(first)
}

fn is_memory_op(op: &str) -> bool {
    matches!(op, "ld" | "ldu" | "st" | "atom" | "red")
}

// ---- the analysis before lowering ----

/// A variable: a module one (`None`) or a function's own (`Some(function name)`), by name.
type VarKey = (Option<String>, String);

/// The taint of a register that holds an address of no known variable (no variable has an
/// empty name).
static SOME_ADDRESS: VarKey = (None, String::new());

/// What lowering needs to know about the code before it starts: which module variables the
/// kernel uses, the width of the accesses made to byte arrays, and which registers may hold
/// a variable's address.
struct Analysis {
    used: HashSet<String>,
    /// The type of the accesses to a `.b8` variable (the width its locations get).
    widths: HashMap<VarKey, IntType>,
    /// Per function: registers that may hold the address of a variable (flow-insensitive:
    /// `nvcc` and NVRTC write fresh registers for fresh values, so this is precise there).
    addr_regs: HashMap<String, HashSet<String>>,
    /// Per function: registers that hold addresses of `.local` variables only, with the
    /// width of those variables' locations (wider accesses through them are split).
    local_regs: HashMap<String, HashMap<String, IntType>>,
    /// Bytes of dynamic shared memory the launch gives each CTA.
    dynamic_shared: u64,
}

impl Analysis {
    fn new(module: &Module, kernel: &Function) -> R<Self> {
        let mut a = Analysis {
            used: HashSet::new(),
            widths: HashMap::new(),
            addr_regs: HashMap::new(),
            local_regs: HashMap::new(),
            dynamic_shared: 0,
        };
        let module_vars: HashMap<&str, &Variable> = module
            .variables
            .iter()
            .map(|v| (v.name.as_str(), v))
            .collect();
        let mut todo = vec![kernel];
        let mut seen: HashSet<&str> = HashSet::from([kernel.name.as_str()]);
        let mut first_width: HashMap<VarKey, Span> = HashMap::new();
        while let Some(func) = todo.pop() {
            let Some(body) = &func.body else { continue };
            let mut locals = Vec::new();
            all_locals(body, &mut locals);
            let locals: HashMap<&str, &Variable> = locals
                .into_iter()
                .filter(|v| !matches!(v.space, StateSpace::Param | StateSpace::Reg))
                .map(|v| (v.name.as_str(), v))
                .collect();
            let var = |s: &str| -> Option<(VarKey, &Variable)> {
                if let Some(v) = locals.get(s) {
                    Some(((Some(func.name.clone()), s.to_string()), *v))
                } else {
                    module_vars.get(s).map(|v| ((None, s.to_string()), *v))
                }
            };
            let mut instrs = Vec::new();
            visit(body, &mut |i| instrs.push(i));
            for ins in &instrs {
                let mut syms = Vec::new();
                ins.operands.iter().for_each(|o| symbols(o, &mut syms));
                for s in syms {
                    if !locals.contains_key(s) && module_vars.contains_key(s) {
                        a.used.insert(s.to_string());
                    }
                }
                if ins.opcode == "call" {
                    if let (_, Some(Op::Symbol(name)), _) = call_parts(ins) {
                        if let Some(callee) = find_function(module, name) {
                            if seen.insert(&callee.name) {
                                todo.push(callee);
                            }
                        }
                    }
                }
            }
            // Registers that may hold a variable's address, and which variables.
            let mut taint: HashMap<&str, BTreeSet<VarKey>> = HashMap::new();
            loop {
                let mut changed = false;
                for ins in &instrs {
                    let Some(Op::Reg(dst)) = ins.operands.first() else {
                        continue;
                    };
                    let srcs = match ins.opcode.as_str() {
                        "mov" | "cvta" | "cvt" | "add" | "sub" | "and" | "or" => &ins.operands[1..],
                        "mad" => ins.operands.get(3..4).unwrap_or(&[]),
                        "selp" => ins.operands.get(1..3).unwrap_or(&[]),
                        _ => continue,
                    };
                    let mut set = BTreeSet::new();
                    // A 32-bit `cvta` result is a shared-window address, whatever it came
                    // from (a pointer through a parameter, say).
                    if ins.opcode == "cvta" && ins.modifiers.iter().any(|m| m == "u32") {
                        set.insert(SOME_ADDRESS.clone());
                    }
                    for s in srcs {
                        match s {
                            Op::Reg(r) => {
                                set.extend(taint.get(r.as_str()).into_iter().flatten().cloned())
                            }
                            Op::Symbol(v) => set.extend(var(v).map(|(k, _)| k)),
                            _ => {}
                        }
                    }
                    if !set.is_empty() {
                        let e = taint.entry(dst).or_default();
                        let before = e.len();
                        e.extend(set);
                        changed |= e.len() != before;
                    }
                }
                if !changed {
                    break;
                }
            }
            // The widths of the accesses to byte arrays.
            for ins in &instrs {
                if !is_memory_op(&ins.opcode) {
                    continue;
                }
                let q = quals(ins, true);
                if q.space == Some(StateSpace::Param) {
                    continue;
                }
                let Some(ty) = q.types.last().and_then(|t| int_of(*t, true)) else {
                    continue;
                };
                let Some(Op::Address { base, .. }) = ins
                    .operands
                    .iter()
                    .find(|o| matches!(o, Op::Address { .. }))
                else {
                    continue;
                };
                let targets: Vec<(VarKey, &Variable, bool)> = match base.as_ref() {
                    Op::Symbol(s) => var(s).map(|(k, v)| (k, v, true)).into_iter().collect(),
                    Op::Reg(r) => taint
                        .get(r.as_str())
                        .into_iter()
                        .flatten()
                        .filter_map(|k| var(&k.1).map(|(k, v)| (k, v, false)))
                        .collect(),
                    _ => vec![],
                };
                for (key, v, direct) in targets {
                    let declared = bits_of(v.ty);
                    if declared != 8 {
                        // A typed variable keeps its type; a pointer that may point to it
                        // but accesses it at another width faults at run time, if ever.
                        if direct && declared != ty.bits {
                            return Err(LowerError::at(
                                ins,
                                format!(
                                    "mixed-size access to `{}` is not supported: it holds {}-bit values, `{}` accesses {} bits",
                                    v.name,
                                    declared,
                                    mnemonic(ins),
                                    ty.bits
                                ),
                            ));
                        }
                        continue;
                    }
                    match a.widths.get(&key) {
                        // `.local` memory is the thread's own: no other thread can see how
                        // wide an access was, so its locations take the narrowest width and
                        // a wider access is split (printf's argument buffer needs this).
                        Some(w) if v.space == StateSpace::Local => {
                            if ty.bits < w.bits {
                                a.widths.insert(key, IntType::new(ty.bits, false));
                            }
                        }
                        Some(w) if w.bits != ty.bits => {
                            let first = first_width[&key];
                            return Err(LowerError::at(
                                ins,
                                format!(
                                    "mixed-size access to `{}` is not supported: accessed as {} bits at line {} and as {} bits here",
                                    v.name, w.bits, first.line, ty.bits
                                ),
                            ));
                        }
                        Some(_) => {}
                        None => {
                            a.widths.insert(key.clone(), IntType::new(ty.bits, false));
                            first_width.insert(key, ins.span);
                        }
                    }
                }
            }
            let mut local_regs = HashMap::new();
            for (reg, keys) in &taint {
                let widths: BTreeSet<u8> = keys
                    .iter()
                    .filter_map(|k| var(&k.1))
                    .filter(|(_, v)| v.space == StateSpace::Local)
                    .map(|(k, v)| a.widths.get(&k).map_or(bits_of(v.ty), |w| w.bits))
                    .collect();
                let all_local = keys
                    .iter()
                    .all(|k| var(&k.1).is_some_and(|(_, v)| v.space == StateSpace::Local));
                if let (true, [w]) = (all_local, widths.iter().collect::<Vec<_>>().as_slice()) {
                    local_regs.insert(reg.to_string(), IntType::new(**w, false));
                }
            }
            a.local_regs.insert(func.name.clone(), local_regs);
            a.addr_regs.insert(
                func.name.clone(),
                taint.keys().map(|s| s.to_string()).collect(),
            );
        }
        // A used variable initialised with another's address uses that one too.
        loop {
            let more: Vec<String> = module
                .variables
                .iter()
                .filter(|v| a.used.contains(&v.name))
                .flat_map(|v| &v.init_symbols)
                .filter(|s| module_vars.contains_key(s.symbol.as_str()))
                .map(|s| s.symbol.clone())
                .filter(|s| !a.used.contains(s))
                .collect();
            if more.is_empty() {
                break;
            }
            a.used.extend(more);
        }
        Ok(a)
    }
}

// ---- memory ----

/// A variable's locations: `len` consecutive ones of type `ty` from `first`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mem {
    first: LocId,
    len: u32,
    ty: IntType,
    /// `.local`: the thread's own.
    private: bool,
}

/// The most elements one variable may have (each is a location).
pub const MAX_VARIABLE_ELEMENTS: u64 = 65_536;

/// The most locations the variables of the kernels of one program may make together.
pub const MAX_LOCATIONS: usize = 262_144;

#[derive(Default)]
struct Memory {
    globals: HashMap<VarKey, Mem>,
    shared: HashMap<(VarKey, u32), Mem>,
}

/// A variable's element type, element count and initial values: its declared type, or for a
/// `.b8` array the width the kernel accesses it with.
fn layout(a: &Analysis, key: &VarKey, v: &Variable) -> R<(IntType, u32, Vec<Value>)> {
    let err = |m: String| LowerError::new(v.span, m);
    let declared = match v.ty {
        ScalarType::Pred => return Err(err(format!("`.pred` variable `{}`", v.name))),
        t => int_of(t, true).expect("an integer or float type"),
    };
    let mut count: u64 = 1;
    for d in &v.dims {
        match d {
            Some(n) => count = count.saturating_mul(*n),
            None if !v.init.is_empty() && v.dims.len() == 1 => count = v.init.len() as u64,
            // Dynamic shared memory: as many elements as the launch's bytes hold.
            None if v.space == StateSpace::Shared && v.dims.len() == 1 && a.dynamic_shared > 0 => {
                count = a.dynamic_shared / declared.bytes();
            }
            None => {
                return Err(err(format!(
                    "`{}` has no size{}: not supported yet",
                    v.name,
                    if v.space == StateSpace::Shared {
                        " (dynamic shared memory, and the launch gives none: pass its size as the third <<<...>>> argument)"
                    } else {
                        ""
                    }
                )))
            }
        }
    }
    let elem = match a.widths.get(key) {
        Some(w) if w.bits != declared.bits => *w,
        _ => declared,
    };
    let bytes = count.saturating_mul(declared.bytes());
    if bytes % elem.bytes() != 0 {
        return Err(err(format!(
            "`{}` ({bytes} bytes) is not a whole number of the {}-byte values it is accessed as",
            v.name,
            elem.bytes()
        )));
    }
    let len = bytes / elem.bytes();
    if len == 0 {
        return Err(err(format!("`{}` has {len} elements", v.name)));
    }
    // Each element is a location: checked before any is made.
    if len > MAX_VARIABLE_ELEMENTS {
        return Err(err(format!(
            "`{}` has {len} elements: more than the {MAX_VARIABLE_ELEMENTS} a variable may have (each is a location)",
            v.name
        )));
    }
    let init = if elem == declared {
        v.init.iter().map(|&x| elem.wrap(x)).collect()
    } else {
        // Regroup the declared elements' little-endian bytes into the accessed width.
        let raw: Vec<u8> = v
            .init
            .iter()
            .flat_map(|x| x.to_le_bytes().into_iter().take(declared.bytes() as usize))
            .collect();
        raw.chunks(elem.bytes() as usize)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                elem.wrap(i64::from_le_bytes(b))
            })
            .collect()
    };
    Ok((elem, len as u32, init))
}

fn space(v: &Variable) -> MemorySpace {
    match v.space {
        StateSpace::Shared | StateSpace::SharedCluster => MemorySpace::Shared,
        _ => MemorySpace::Global,
    }
}

/// Appends the locations of variable `v` under a fresh name built from `base`.
fn new_variable(
    program: &mut Program,
    a: &Analysis,
    key: &VarKey,
    v: &Variable,
    base: &str,
) -> R<Mem> {
    let (ty, len, init) = layout(a, key, v)?;
    if program.locations.len().saturating_add(len as usize) > MAX_LOCATIONS {
        return Err(LowerError::new(
            v.span,
            format!(
                "too many locations: with `{}`'s {len} elements the program would have more than {MAX_LOCATIONS}",
                v.name
            ),
        ));
    }
    let taken = |p: &Program, n: &str| p.loc(n).is_some() || p.arrays.iter().any(|a| a.name == n);
    let mut name = base.to_string();
    let mut k = 2;
    while taken(program, &name) || (len > 1 && taken(program, &format!("{name}[0]"))) {
        name = format!("{base}#{k}");
        k += 1;
    }
    let first = LocId(program.locations.len() as u32);
    for i in 0..len {
        program.locations.push(Location {
            name: if len == 1 {
                name.clone()
            } else {
                format!("{name}[{i}]")
            },
            space: space(v),
            init: init.get(i as usize).copied().unwrap_or(0),
            ty,
            span: Some(v.span),
        });
    }
    if len > 1 {
        program
            .arrays
            .push(scopecheck_ir::Array { name, first, len });
    }
    Ok(Mem {
        first,
        len,
        ty,
        private: v.space == StateSpace::Local,
    })
}

/// A `.global` / `.const` variable: the program's location or array of that name when there
/// is one (a harness may have made it, or an earlier launch), else new locations.
fn global_variable(program: &mut Program, a: &Analysis, key: &VarKey, v: &Variable) -> R<Mem> {
    let existing = program
        .arrays
        .iter()
        .find(|x| x.name == v.name)
        .map(|x| (x.first, x.len))
        .or_else(|| {
            program
                .loc(&v.name)
                .filter(|l| program.array_of(*l).is_none())
                .map(|l| (l, 1))
        });
    let Some((first, len)) = existing else {
        return new_variable(program, a, key, v, &v.name);
    };
    let (ty, want, _) = layout(a, key, v)?;
    let held = program.location(first).ty;
    if want != len || held.bits != ty.bits {
        return Err(LowerError::new(
            v.span,
            format!(
                "`{}` exists in the program already as {len} value(s) of {} bits; the module declares {want} of {} bits",
                v.name, held.bits, ty.bits
            ),
        ));
    }
    Ok(Mem {
        first,
        len,
        ty: held,
        private: false,
    })
}

/// Sets the initial values of `v` (just made as `mem`) that are addresses (`= generic(x)`,
/// `= x+4`): generic and state-space addresses are the same values here.
fn address_inits(
    program: &mut Program,
    module: &Module,
    memory: &Memory,
    v: &Variable,
    mem: Mem,
) -> R<()> {
    for s in &v.init_symbols {
        let err = |m: String| LowerError::new(v.span, m);
        let Some(target) = memory.globals.get(&(None, s.symbol.clone())) else {
            return Err(err(
                if module.functions.iter().any(|f| f.name == s.symbol) {
                    format!(
                    "`{}` is initialised with the address of function `{}`: function pointers are not supported yet",
                    v.name, s.symbol
                )
                } else {
                    format!(
                        "`{}` is initialised with the address of `{}`, which is no global variable",
                        v.name, s.symbol
                    )
                },
            ));
        };
        if mem.ty.bits != bits_of(v.ty) || s.index >= mem.len as usize {
            return Err(err(format!(
                "`{}`: an address among its initial values, but it is accessed as {}-bit values",
                v.name, mem.ty.bits
            )));
        }
        let address = program.address_of(target.first).wrapping_add(s.offset);
        program.locations[mem.first.0 as usize + s.index].init = mem.ty.wrap(address);
    }
    Ok(())
}

// ---- lowering one thread ----

struct Cx<'m> {
    module: &'m Module,
    launch: &'m Launch,
    kernel: &'m Function,
    analysis: Analysis,
}

/// What a name in a function stands for.
#[derive(Clone, Copy, Debug)]
enum Var {
    Mem(Mem),
    /// A `.param` passed between caller and callee: registers by byte offset.
    Slot(usize),
    /// The kernel's parameter of that index.
    KernelParam(usize),
}

/// One function being lowered (the kernel, or an inlined device function).
struct Frame<'m> {
    func: &'m Function,
    /// Suffix of the IR names of its registers (empty for the kernel).
    suffix: String,
    /// Register scopes, innermost last: declared type and IR register once used.
    regs: Vec<HashMap<String, (ScalarType, Option<RegId>)>>,
    /// Variable scopes (parameters first), innermost last.
    vars: Vec<HashMap<&'m str, Var>>,
    labels: HashMap<&'m str, usize>,
    /// Where `ret` goes.
    ret: usize,
}

struct Lower<'a, 'm> {
    cx: &'a Cx<'m>,
    program: &'a mut Program,
    memory: &'a mut Memory,
    sp: Specials,
    thread: String,
    cta: u32,
    registers: Vec<String>,
    names: HashSet<String>,
    code: Vec<Instr>,
    /// Label targets, once placed.
    labels: Vec<Option<usize>>,
    /// (branch instruction, label) to patch at the end.
    fixups: Vec<(usize, usize)>,
    slots: Vec<HashMap<i64, RegId>>,
    /// Scratch registers, reused from one PTX instruction to the next.
    scratch: Vec<RegId>,
    scratch_used: usize,
    /// Functions being inlined, outermost first.
    stack: Vec<&'m str>,
    inlined: u32,
    /// The thread's copies of module `.local` variables.
    thread_mem: HashMap<String, Mem>,
    /// The end of the thread (`exit`, the kernel's `ret`).
    exit: usize,
    span: Span,
    text: String,
}

/// The register of a thread that a failed device `assert` (`call __assertfail`) sets to 1;
/// it starts at 0. The PTX view requires it to be 0 at the end.
pub const ASSERT_REGISTER: &str = "$assertfail";

/// The deepest inlining of calls.
const MAX_CALL_DEPTH: usize = 16;

impl<'a, 'm> Lower<'a, 'm> {
    fn new(
        cx: &'a Cx<'m>,
        program: &'a mut Program,
        memory: &'a mut Memory,
        sp: Specials,
        thread: String,
        cta: u32,
    ) -> Self {
        Lower {
            cx,
            program,
            memory,
            sp,
            thread,
            cta,
            registers: vec![],
            names: HashSet::new(),
            code: vec![],
            labels: vec![None],
            fixups: vec![],
            slots: vec![],
            scratch: vec![],
            scratch_used: 0,
            stack: vec![],
            inlined: 0,
            thread_mem: HashMap::new(),
            exit: 0,
            span: Span::default(),
            text: String::new(),
        }
    }

    fn kernel(&mut self) -> R<()> {
        let k = self.cx.kernel;
        let params = k
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.as_str(), Var::KernelParam(i)))
            .collect();
        // Module `.local` variables: the thread's own.
        for v in &self.cx.module.variables {
            if v.space == StateSpace::Local && self.cx.analysis.used.contains(&v.name) {
                let base = format!("{}@{}", v.name, self.thread);
                let key = (None, v.name.clone());
                let m = new_variable(self.program, &self.cx.analysis, &key, v, &base)?;
                self.thread_mem.insert(v.name.clone(), m);
            }
        }
        let exit = self.exit;
        let mut frame = self.frame(k, String::new(), params, exit)?;
        self.stack.push(&k.name);
        if let Some(body) = &k.body {
            self.body(&mut frame, body)?;
        }
        Ok(())
    }

    fn finish(mut self) -> (Vec<String>, Vec<Instr>) {
        self.place(self.exit);
        for (at, label) in std::mem::take(&mut self.fixups) {
            let target = self.labels[label].expect("every label is placed");
            if let InstrKind::Branch { target: t, .. } = &mut self.code[at].kind {
                *t = target;
            }
        }
        (self.registers, self.code)
    }

    fn frame(
        &mut self,
        func: &'m Function,
        suffix: String,
        params: HashMap<&'m str, Var>,
        ret: usize,
    ) -> R<Frame<'m>> {
        let mut labels = HashMap::new();
        fn collect<'m>(
            b: &'m Body,
            labels: &mut HashMap<&'m str, usize>,
            next: &mut Vec<Option<usize>>,
        ) -> R<()> {
            for s in &b.statements {
                match s {
                    Statement::Label(name, span) => {
                        if labels.insert(name.as_str(), next.len()).is_some() {
                            return Err(LowerError::new(
                                *span,
                                format!("label `{name}` is defined twice"),
                            ));
                        }
                        next.push(None);
                    }
                    Statement::Block(b) => collect(b, labels, next)?,
                    Statement::Instruction(_) => {}
                }
            }
            Ok(())
        }
        if let Some(b) = &func.body {
            collect(b, &mut labels, &mut self.labels)?;
        }
        Ok(Frame {
            func,
            suffix,
            regs: vec![],
            vars: vec![params],
            labels,
            ret,
        })
    }

    // ---- emitting ----

    fn emit(&mut self, kind: InstrKind) {
        self.code.push(Instr {
            kind,
            span: self.span,
            text: self.text.clone(),
        });
    }

    fn new_label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    fn place(&mut self, label: usize) {
        self.labels[label] = Some(self.code.len());
    }

    fn branch(&mut self, cond: BranchCond, label: usize) {
        self.fixups.push((self.code.len(), label));
        self.emit(InstrKind::Branch {
            cond,
            target: usize::MAX,
        });
    }

    fn fresh_reg(&mut self, base: &str) -> RegId {
        let mut name = base.to_string();
        let mut k = 2;
        while self.names.contains(&name) {
            name = format!("{base}#{k}");
            k += 1;
        }
        self.names.insert(name.clone());
        self.registers.push(name);
        RegId((self.registers.len() - 1) as u32)
    }

    fn scratch(&mut self) -> RegId {
        if self.scratch_used == self.scratch.len() {
            let r = self.fresh_reg(&format!("$t{}", self.scratch.len()));
            self.scratch.push(r);
        }
        self.scratch_used += 1;
        self.scratch[self.scratch_used - 1]
    }

    fn binary(&mut self, dst: RegId, op: BinOp, ty: IntType, a: Operand, b: Operand) {
        self.emit(InstrKind::Binary { dst, op, ty, a, b });
    }

    /// `dst = src` made canonical in `ty` (its low bits, sign- or zero-extended).
    fn wrap(&mut self, dst: RegId, src: Operand, ty: IntType) {
        match src {
            Operand::Imm(v) => self.emit(InstrKind::Mov {
                dst,
                src: Operand::Imm(ty.wrap(v)),
            }),
            _ if ty.bits >= 64 => self.emit(InstrKind::Mov { dst, src }),
            _ => self.binary(dst, BinOp::Or, ty, src, Operand::Imm(0)),
        }
    }

    /// `src` as a value canonical in `ty` (an immediate wrapped now, a register into a
    /// scratch register).
    fn wrapped(&mut self, src: Operand, ty: IntType) -> Operand {
        match src {
            Operand::Imm(v) => Operand::Imm(ty.wrap(v)),
            Operand::Reg(_) if ty.bits >= 64 => src,
            Operand::Reg(_) => {
                let t = self.scratch();
                self.wrap(t, src, ty);
                Operand::Reg(t)
            }
        }
    }

    /// `cvt.to.from`: a wider target extends as the source's signedness says, a narrower one
    /// keeps the low bits (PTX ISA, "Conversion: cvt", integer rules).
    fn convert(&mut self, dst: RegId, src: Operand, from: IntType, to: IntType) {
        if let Operand::Imm(v) = src {
            return self.emit(InstrKind::Mov {
                dst,
                src: Operand::Imm(to.wrap(from.wrap(v))),
            });
        }
        if to.bits > from.bits {
            self.wrap(dst, src, from);
            // A sign-extended value is not canonical in a narrower-than-64 unsigned type.
            if from.signed && !to.signed && to.bits < 64 {
                self.wrap(dst, Operand::Reg(dst), to);
            }
        } else {
            self.wrap(dst, src, to);
        }
    }

    /// `dst = c ? a : b` for a predicate value `c` (0 or 1), as `b ^ ((a ^ b) & -c)`: the
    /// result depends on `a`, `b` and `c` by data, as `selp`'s does in hardware; a branch
    /// would make `c` a control dependency instead.
    fn select(&mut self, dst: RegId, c: Operand, a: Operand, b: Operand, ty: IntType) {
        let m = self.scratch();
        self.binary(m, BinOp::Sub, IntType::S64, Operand::Imm(0), c);
        let t = self.scratch();
        self.binary(t, BinOp::Xor, ty, a, b);
        self.binary(t, BinOp::And, ty, Operand::Reg(t), Operand::Reg(m));
        self.binary(dst, BinOp::Xor, ty, b, Operand::Reg(t));
    }

    /// The full product of two `ty` values in the type twice as wide (`mul.wide`).
    fn mul_wide(&mut self, dst: RegId, a: Operand, b: Operand, ty: IntType) {
        let wide = IntType::new(ty.bits * 2, ty.signed);
        let a = self.wrapped(a, ty);
        let b = self.wrapped(b, ty);
        self.binary(dst, BinOp::Mul, wide, a, b);
    }

    /// The high half of the product (`mul.hi`), through the wide product.
    fn mul_hi(
        &mut self,
        ins: &Instruction,
        dst: RegId,
        a: Operand,
        b: Operand,
        ty: IntType,
    ) -> R<()> {
        if ty.bits > 32 {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` is not supported yet: its {}-bit product has no IR operation",
                    mnemonic(ins),
                    2 * ty.bits
                ),
            ));
        }
        let t = self.scratch();
        self.mul_wide(t, a, b, ty);
        let wide = IntType::new(ty.bits * 2, ty.signed);
        self.binary(
            dst,
            BinOp::Shr,
            wide,
            Operand::Reg(t),
            Operand::Imm(i64::from(ty.bits)),
        );
        Ok(())
    }

    // ---- names ----

    fn lookup_reg(&mut self, f: &mut Frame<'m>, name: &str) -> Option<RegId> {
        let idx = f.regs.iter().rposition(|s| s.contains_key(name))?;
        let (_, id) = f.regs[idx][name];
        if let Some(id) = id {
            return Some(id);
        }
        let id = self.fresh_reg(&format!("{name}{}", f.suffix));
        f.regs[idx].get_mut(name).expect("found above").1 = Some(id);
        Some(id)
    }

    fn lookup_var(&mut self, f: &Frame<'m>, name: &str) -> Option<Var> {
        if let Some(v) = f.vars.iter().rev().find_map(|s| s.get(name)) {
            return Some(*v);
        }
        let key = (None, name.to_string());
        if let Some(m) = self.memory.globals.get(&key) {
            return Some(Var::Mem(*m));
        }
        if let Some(m) = self.memory.shared.get(&(key, self.cta)) {
            return Some(Var::Mem(*m));
        }
        self.thread_mem.get(name).map(|m| Var::Mem(*m))
    }

    /// A variable of this function's own (a body's `.local`, `.shared`, `.param`).
    fn declare_local(&mut self, f: &Frame<'m>, v: &'m Variable) -> R<Var> {
        let key = (Some(f.func.name.clone()), v.name.clone());
        Ok(match v.space {
            StateSpace::Param => {
                self.slots.push(HashMap::new());
                Var::Slot(self.slots.len() - 1)
            }
            // A function's `.shared` variable is one per CTA, however often it is called.
            StateSpace::Shared | StateSpace::SharedCluster => {
                let k = (key, self.cta);
                match self.memory.shared.get(&k) {
                    Some(m) => Var::Mem(*m),
                    None => {
                        let base = format!("{}@cta{}", v.name, self.cta);
                        let m = new_variable(self.program, &self.cx.analysis, &k.0, v, &base)?;
                        self.memory.shared.insert(k, m);
                        Var::Mem(m)
                    }
                }
            }
            StateSpace::Global | StateSpace::Const => match self.memory.globals.get(&key) {
                Some(m) => Var::Mem(*m),
                None => {
                    let m = new_variable(self.program, &self.cx.analysis, &key, v, &v.name)?;
                    self.memory.globals.insert(key, m);
                    Var::Mem(m)
                }
            },
            // `.local`: the thread's own, one per activation of the function.
            _ => {
                let base = format!("{}@{}", v.name, self.thread);
                Var::Mem(new_variable(
                    self.program,
                    &self.cx.analysis,
                    &key,
                    v,
                    &base,
                )?)
            }
        })
    }

    fn slot_reg(&mut self, slot: usize, offset: i64, name: &str) -> RegId {
        if let Some(r) = self.slots[slot].get(&offset) {
            return *r;
        }
        let r = self.fresh_reg(&format!("{name}+{offset}"));
        self.slots[slot].insert(offset, r);
        r
    }

    fn is_address(&self, f: &Frame<'m>, o: &Op) -> bool {
        match o {
            Op::Reg(r) => self
                .cx
                .analysis
                .addr_regs
                .get(&f.func.name)
                .is_some_and(|s| s.contains(r)),
            Op::Symbol(s) => {
                f.vars
                    .iter()
                    .any(|v| matches!(v.get(s.as_str()), Some(Var::Mem(_))))
                    || self.cx.analysis.used.contains(s)
            }
            _ => false,
        }
    }

    /// A source operand, as a value of type `ty` for immediates.
    fn src(&mut self, f: &mut Frame<'m>, ins: &Instruction, o: &Op, ty: IntType) -> R<Operand> {
        match o {
            Op::Reg(name) => {
                if let Some(r) = self.lookup_reg(f, name) {
                    return Ok(Operand::Reg(r));
                }
                if let Some(v) = self.sp.get(name) {
                    return Ok(Operand::Imm(ty.wrap(v)));
                }
                Err(self.bad_register(ins, name))
            }
            Op::Int(v) => Ok(Operand::Imm(ty.wrap(*v))),
            // A float is its bits in every view (scopecheck_ir::float); PTX converts a
            // literal to the instruction's width.
            Op::Float { bits, double } => Ok(Operand::Imm(float::literal(*bits, *double, ty))),
            Op::Symbol(s) => match self.lookup_var(f, s) {
                // An address is not wrapped: it keeps its allocation number (module docs).
                Some(Var::Mem(m)) => Ok(Operand::Imm(self.program.address_of(m.first))),
                Some(Var::KernelParam(_)) => Err(LowerError::at(
                    ins,
                    format!("the address of kernel parameter `{s}` is not supported: read it with `ld.param`"),
                )),
                Some(Var::Slot(_)) => Err(LowerError::at(
                    ins,
                    format!("the address of parameter `{s}` is not supported"),
                )),
                None if self.cx.module.functions.iter().any(|g| &g.name == s) => Err(
                    LowerError::at(ins, format!("function pointers (`{s}`) are not supported yet")),
                ),
                None => Err(LowerError::at(ins, format!("unknown symbol `{s}`"))),
            },
            Op::Not(p) => {
                let p = self.src(f, ins, p, PRED)?;
                let t = self.scratch();
                self.binary(t, BinOp::Xor, PRED, p, Operand::Imm(1));
                Ok(Operand::Reg(t))
            }
            _ => Err(LowerError::at(
                ins,
                format!("unexpected operand `{}` in `{}`", render_operand(o), mnemonic(ins)),
            )),
        }
    }

    fn bad_register(&self, ins: &Instruction, name: &str) -> LowerError {
        const VECTORS: [&str; 8] = [
            "%tid",
            "%ntid",
            "%ctaid",
            "%nctaid",
            "%cluster_ctaid",
            "%cluster_nctaid",
            "%clusterid",
            "%nclusterid",
        ];
        let base = name.split('.').next().unwrap_or(name);
        if base == "%envreg1" || base == "%envreg2" {
            LowerError::at(
                ins,
                format!("special register `{name}`: the grid workspace a cooperative launch passes (cooperative groups' `this_grid().sync()`) is not modelled in the PTX view yet"),
            )
        } else if unmodelled_special(name) {
            LowerError::at(
                ins,
                format!("special register `{name}` is not supported: the program does not determine its value"),
            )
        } else if VECTORS.contains(&base) {
            LowerError::at(
                ins,
                format!(
                    "special register `{name}`: only its `.x`, `.y`, `.z` components are supported"
                ),
            )
        } else {
            LowerError::at(ins, format!("register `{name}` is not declared"))
        }
    }

    /// A destination register (`_` gives a scratch one).
    fn dst(&mut self, f: &mut Frame<'m>, ins: &Instruction, o: &Op) -> R<RegId> {
        match o {
            Op::Reg(name) => match self.lookup_reg(f, name) {
                Some(r) => Ok(r),
                None if self.sp.get(name).is_some() => Err(LowerError::at(
                    ins,
                    format!("special register `{name}` is read-only"),
                )),
                None => Err(self.bad_register(ins, name)),
            },
            Op::Sink => Ok(self.scratch()),
            _ => Err(LowerError::at(
                ins,
                format!(
                    "expected a destination register, found `{}`",
                    render_operand(o)
                ),
            )),
        }
    }

    /// A source operand that, in a 32-bit operation on an address, is computed in 64 bits:
    /// the address as it is, anything else sign-extended (an offset).
    fn promoted(&mut self, f: &mut Frame<'m>, ins: &Instruction, o: &Op) -> R<Operand> {
        let v = self.src(f, ins, o, IntType::S64)?;
        if self.is_address(f, o) {
            Ok(v)
        } else {
            Ok(self.wrapped(v, IntType::S32))
        }
    }

    fn operands<'o>(&self, ins: &'o Instruction, n: usize) -> R<&'o [Op]> {
        if ins.operands.len() != n {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` takes {n} operands, found {}",
                    mnemonic(ins),
                    ins.operands.len()
                ),
            ));
        }
        Ok(&ins.operands)
    }

    /// The operands of a memory access, without the cache policy operand that
    /// `.L2::cache_hint` adds at the end (a hint only).
    fn memory_operands<'o>(&self, ins: &'o Instruction, n: usize) -> R<&'o [Op]> {
        if ins.modifiers.iter().any(|m| m == "L2::cache_hint") && ins.operands.len() == n + 1 {
            return Ok(&ins.operands[..n]);
        }
        self.operands(ins, n)
    }

    // ---- statements ----

    fn body(&mut self, f: &mut Frame<'m>, b: &'m Body) -> R<()> {
        let mut regs = HashMap::new();
        for d in &b.regs {
            for (name, n) in &d.names {
                match n {
                    Some(n) => {
                        for i in 0..*n {
                            regs.insert(format!("{name}{i}"), (d.ty, None));
                        }
                    }
                    None => {
                        regs.insert(name.clone(), (d.ty, None));
                    }
                }
            }
        }
        f.regs.push(regs);
        let mut vars = HashMap::new();
        f.vars.push(HashMap::new());
        for v in &b.locals {
            let var = self.declare_local(f, v)?;
            vars.insert(v.name.as_str(), var);
        }
        *f.vars.last_mut().expect("pushed above") = vars;
        for s in &b.statements {
            match s {
                Statement::Label(name, _) => {
                    let l = f.labels[name.as_str()];
                    self.place(l);
                }
                Statement::Instruction(ins) => self.instruction(f, ins)?,
                Statement::Block(inner) => self.body(f, inner)?,
            }
        }
        f.regs.pop();
        f.vars.pop();
        Ok(())
    }

    fn label(&self, f: &Frame<'m>, ins: &Instruction) -> R<usize> {
        match ins.operands.as_slice() {
            [Op::Symbol(l)] => {
                f.labels.get(l.as_str()).copied().ok_or_else(|| {
                    LowerError::at(ins, format!("no label `{l}` in `{}`", f.func.name))
                })
            }
            _ => Err(LowerError::at(
                ins,
                format!(
                    "`{}` needs one label (indirect branches are not supported)",
                    mnemonic(ins)
                ),
            )),
        }
    }

    fn instruction(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        self.span = ins.span;
        self.text = render(ins);
        self.scratch_used = 0;
        let op = ins.opcode.as_str();
        // No effect on the memory the model sees (`nanosleep` only delays a thread, which the
        // explorer's schedules cover; prefetches only warm caches).
        if matches!(op, "nanosleep" | "prefetch" | "prefetchu") {
            return Ok(());
        }
        let guard = match &ins.guard {
            Some((p, neg)) => {
                let declared = f.regs.iter().rev().find_map(|s| s.get(p.as_str()));
                if declared.is_some_and(|(t, _)| *t != ScalarType::Pred) {
                    return Err(LowerError::at(
                        ins,
                        format!("the guard `{p}` is not a `.pred` register"),
                    ));
                }
                let r = self
                    .lookup_reg(f, p)
                    .ok_or_else(|| self.bad_register(ins, p))?;
                Some((Operand::Reg(r), *neg))
            }
            None => None,
        };
        // The branch when the guard lets the instruction run, and when it does not.
        let runs = |g: Option<(Operand, bool)>| match g {
            None => BranchCond::Always,
            Some((p, false)) => BranchCond::Ne(p, Operand::Imm(0)),
            Some((p, true)) => BranchCond::Eq(p, Operand::Imm(0)),
        };
        match op {
            "bra" => {
                only(ins, &quals(ins, false), &["uni"])?;
                let l = self.label(f, ins)?;
                self.branch(runs(guard), l);
            }
            "ret" | "exit" => {
                only(ins, &quals(ins, false), &["uni"])?;
                let l = if op == "ret" { f.ret } else { self.exit };
                self.branch(runs(guard), l);
            }
            _ => {
                let skip = guard.map(|(p, neg)| {
                    let l = self.new_label();
                    let skip = if neg {
                        BranchCond::Ne(p, Operand::Imm(0))
                    } else {
                        BranchCond::Eq(p, Operand::Imm(0))
                    };
                    self.branch(skip, l);
                    l
                });
                self.op(f, ins)?;
                if let Some(l) = skip {
                    self.place(l);
                }
            }
        }
        Ok(())
    }

    fn op(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        if float::is_float_op(ins) {
            return self.float_op(f, ins);
        }
        match ins.opcode.as_str() {
            "mov" => self.mov(f, ins),
            "add" | "sub" | "and" | "or" | "xor" | "div" | "rem" | "shl" | "shr" => {
                self.arith(f, ins)
            }
            "mul" | "mad" => self.mul(f, ins),
            "bfi" => self.bfi(f, ins),
            "not" | "cnot" | "neg" | "abs" => self.unary(f, ins),
            "min" | "max" => self.min_max(f, ins),
            "setp" => self.setp(f, ins),
            "selp" => self.selp(f, ins),
            "cvt" => self.cvt(f, ins),
            "cvta" => self.cvta(f, ins),
            "ld" | "ldu" => self.load(f, ins),
            "st" => self.store(f, ins),
            "atom" | "red" => self.rmw(f, ins),
            "fence" => self.fence(ins),
            "membar" => self.membar(ins),
            "bar" | "barrier" => self.barrier(f, ins),
            "call" => self.call(f, ins),
            // A trap aborts the kernel with an error: a fault of the test at its line.
            "trap" => {
                only(ins, &quals(ins, false), &[])?;
                let t = self.scratch();
                self.binary(
                    t,
                    BinOp::Trap,
                    IntType::S32,
                    Operand::Imm(0),
                    Operand::Imm(0),
                );
                Ok(())
            }
            "shfl" => self.shfl(f, ins),
            "vote" => self.vote(f, ins),
            "popc" | "clz" | "brev" | "bfind" => self.bits(f, ins),
            "activemask" => self.activemask(f, ins),
            "match" | "redux" | "elect" => Err(LowerError::at(
                ins,
                format!("warp-collective `{}` is not supported yet", ins.opcode),
            )),
            other => Err(LowerError::at(
                ins,
                format!(
                    "instruction `{other}` (`{}`) is not supported",
                    mnemonic(ins)
                ),
            )),
        }
    }

    // ---- arithmetic ----

    fn mov(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let t = one_type(ins, &q)?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        if t == ScalarType::Pred {
            let d = self.dst(f, ins, d)?;
            let src = match self.src(f, ins, a, PRED)? {
                Operand::Imm(v) => Operand::Imm(Value::from(v != 0)),
                r => r,
            };
            self.emit(InstrKind::Mov { dst: d, src });
            return Ok(());
        }
        let ty = int_of(t, true).expect("not a predicate");
        match (d, a) {
            // Packing (`mov.b64 %rd1, {%r1, %r2}`): the first element in the low bits.
            (d, Op::Vector(parts)) => {
                let d = self.dst(f, ins, d)?;
                let w = self.vector_part(ins, ty, parts.len())?;
                let acc = self.scratch();
                self.emit(InstrKind::Mov {
                    dst: acc,
                    src: Operand::Imm(0),
                });
                for (k, p) in parts.iter().enumerate() {
                    let v = self.src(f, ins, p, w)?;
                    let v = self.wrapped(v, w);
                    let s = self.scratch();
                    self.binary(
                        s,
                        BinOp::Shl,
                        ty,
                        v,
                        Operand::Imm(i64::from(w.bits) * k as i64),
                    );
                    self.binary(acc, BinOp::Or, ty, Operand::Reg(acc), Operand::Reg(s));
                }
                self.emit(InstrKind::Mov {
                    dst: d,
                    src: Operand::Reg(acc),
                });
            }
            // Unpacking (`mov.b64 {%r1, %r2}, %rd1`).
            (Op::Vector(parts), a) => {
                let w = self.vector_part(ins, ty, parts.len())?;
                let v = self.src(f, ins, a, ty)?;
                let src = self.scratch();
                self.emit(InstrKind::Mov { dst: src, src: v });
                for (k, p) in parts.iter().enumerate() {
                    if *p == Op::Sink {
                        continue;
                    }
                    let d = self.dst(f, ins, p)?;
                    let s = self.scratch();
                    let u = IntType::new(ty.bits, false);
                    self.binary(
                        s,
                        BinOp::Shr,
                        u,
                        Operand::Reg(src),
                        Operand::Imm(i64::from(w.bits) * k as i64),
                    );
                    self.wrap(d, Operand::Reg(s), w);
                }
            }
            (d, a) => {
                let d = self.dst(f, ins, d)?;
                let src = self.src(f, ins, a, ty)?;
                self.emit(InstrKind::Mov { dst: d, src });
            }
        }
        Ok(())
    }

    fn vector_part(&self, ins: &Instruction, ty: IntType, n: usize) -> R<IntType> {
        if n == 0
            || !(ty.bits as usize).is_multiple_of(n)
            || !matches!(ty.bits as usize / n, 8 | 16 | 32)
        {
            return Err(LowerError::at(
                ins,
                format!("`{}` cannot pack {n} values", mnemonic(ins)),
            ));
        }
        Ok(IntType::new(ty.bits / n as u8, false))
    }

    fn arith(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let op = match ins.opcode.as_str() {
            "add" => BinOp::Add,
            "sub" => BinOp::Sub,
            "and" => BinOp::And,
            "or" => BinOp::Or,
            "xor" => BinOp::Xor,
            "div" => BinOp::Div,
            "rem" => BinOp::Rem,
            "shl" => BinOp::Shl,
            _ => BinOp::Shr,
        };
        let logic = matches!(op, BinOp::And | BinOp::Or | BinOp::Xor);
        let ty = arith_type(ins, &q, logic)?;
        let [d, a, b] = self.operands(ins, 3)? else {
            unreachable!()
        };
        let promote = ty.bits == 32
            && matches!(op, BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or)
            && (self.is_address(f, a) || self.is_address(f, b));
        if promote {
            let (a, b) = (self.promoted(f, ins, a)?, self.promoted(f, ins, b)?);
            let d = self.dst(f, ins, d)?;
            self.binary(d, op, IntType::S64, a, b);
            return Ok(());
        }
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            return self.shift(f, ins, op, ty, d, a, b);
        }
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let d = self.dst(f, ins, d)?;
        self.binary(d, op, ty, a, b);
        Ok(())
    }

    /// `shl` / `shr`: the amount is a `.u32` whatever the type, clamped to the width (PTX ISA,
    /// "Logic and Shift Instructions"). `BinOp` clamps in its own type, which for 16-bit types
    /// would first cut the amount to 16 bits; those shift in 32 bits instead.
    #[allow(clippy::too_many_arguments)]
    fn shift(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        op: BinOp,
        ty: IntType,
        d: &Op,
        a: &Op,
        b: &Op,
    ) -> R<()> {
        let a = self.src(f, ins, a, ty)?;
        let amount = match self.src(f, ins, b, IntType::U32)? {
            Operand::Imm(v) => Operand::Imm(v.min(i64::from(ty.bits))),
            r => r,
        };
        let d = self.dst(f, ins, d)?;
        if ty.bits >= 32 || matches!(amount, Operand::Imm(_)) {
            self.binary(d, op, ty, a, amount);
            return Ok(());
        }
        let wide = IntType::new(32, ty.signed);
        let a = self.wrapped(a, ty);
        let t = self.scratch();
        self.binary(t, op, wide, a, amount);
        self.wrap(d, Operand::Reg(t), ty);
        Ok(())
    }

    /// `mul.{lo,hi,wide}` and `mad.{lo,hi,wide}` (PTX ISA, "Integer Arithmetic").
    fn mul(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &["lo", "hi", "wide"])?;
        let ty = arith_type(ins, &q, false)?;
        if q.other.len() > 1 {
            return Err(LowerError::at(
                ins,
                format!("`{}`: one of `.lo`, `.hi`, `.wide`", mnemonic(ins)),
            ));
        }
        let mode = q.other.first().copied().unwrap_or("lo");
        let mad = ins.opcode == "mad";
        let ops = self.operands(ins, if mad { 4 } else { 3 })?;
        if mode == "wide" && !matches!(ty.bits, 16 | 32) {
            return Err(LowerError::at(
                ins,
                format!("`{}`: `.wide` takes a 16- or 32-bit type", mnemonic(ins)),
            ));
        }
        let a = self.src(f, ins, &ops[1], ty)?;
        let b = self.src(f, ins, &ops[2], ty)?;
        let wide = IntType::new(ty.bits.saturating_mul(2).min(64), ty.signed);
        // The product goes to the destination directly for `mul`, through a scratch
        // register for `mad` (the destination may be the addend).
        let p = if mad {
            self.scratch()
        } else {
            self.dst(f, ins, &ops[0])?
        };
        match mode {
            "lo" => self.binary(p, BinOp::Mul, ty, a, b),
            "hi" => self.mul_hi(ins, p, a, b, ty)?,
            _ => self.mul_wide(p, a, b, ty),
        }
        if mad {
            let sum_ty = if mode == "wide" { wide } else { ty };
            let c = &ops[3];
            let d = self.dst(f, ins, &ops[0])?;
            if sum_ty.bits == 32 && mode == "lo" && self.is_address(f, c) {
                let c = self.promoted(f, ins, c)?;
                let p = self.wrapped(Operand::Reg(p), IntType::S32);
                self.binary(d, BinOp::Add, IntType::S64, p, c);
            } else {
                let c = self.src(f, ins, c, sum_ty)?;
                self.binary(d, BinOp::Add, sum_ty, Operand::Reg(p), c);
            }
        }
        Ok(())
    }

    /// `bfi.b32/.b64 d, a, b, pos, len`: `b` with bits `pos..pos+len` taken from the low bits
    /// of `a` (PTX ISA, "bfi"). NVRTC emits it to pack two 32-bit halves into a 64-bit value;
    /// the position and the length must be constants.
    fn bfi(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let ty = arith_type(ins, &q, true)?;
        let [d, a, b, pos, len] = self.operands(ins, 5)? else {
            unreachable!()
        };
        let (Op::Int(pos), Op::Int(len)) = (pos, len) else {
            return Err(LowerError::at(
                ins,
                "`bfi` with its position or length in a register is not supported yet",
            ));
        };
        let width = i64::from(ty.bits);
        // The ISA takes both from their low 8 bits; past the msb nothing is inserted.
        let (pos, len) = (
            pos & 0xff,
            (len & 0xff).min(width - (pos & 0xff).min(width)),
        );
        let field: i128 = if len == 0 {
            0
        } else {
            ((1i128 << len) - 1) << pos
        };
        let mask = ty.wrap(field as i64);
        let keep = ty.wrap(!(field as i64));
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let d = self.dst(f, ins, d)?;
        let shifted = self.scratch();
        self.binary(shifted, BinOp::Shl, ty, a, Operand::Imm(pos.min(width)));
        let inserted = self.scratch();
        self.binary(
            inserted,
            BinOp::And,
            ty,
            Operand::Reg(shifted),
            Operand::Imm(mask),
        );
        let kept = self.scratch();
        self.binary(kept, BinOp::And, ty, b, Operand::Imm(keep));
        self.binary(d, BinOp::Or, ty, Operand::Reg(inserted), Operand::Reg(kept));
        Ok(())
    }

    /// `popc`, `clz`, `brev`, `bfind[.shiftamt]`: bit operations of one operand (`popc`,
    /// `clz` and `bfind` give a `.u32` whatever their operand's type).
    fn bits(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let shiftamt = ins.opcode == "bfind" && q.other.contains(&"shiftamt");
        only(
            ins,
            &q,
            if ins.opcode == "bfind" {
                &["shiftamt"]
            } else {
                &[]
            },
        )?;
        let ty = arith_type(ins, &q, false)?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let a = self.src(f, ins, a, ty)?;
        let d = self.dst(f, ins, d)?;
        let op = match ins.opcode.as_str() {
            "popc" => BinOp::Popc,
            "clz" => BinOp::Clz,
            "brev" => BinOp::Brev,
            _ if shiftamt => BinOp::BfindShift,
            _ => BinOp::Bfind,
        };
        if op == BinOp::Brev {
            self.binary(d, op, ty, a, Operand::Imm(0));
        } else {
            // The count is a `.u32`, whatever the operand's width (`bfind`'s "none" too).
            let t = self.scratch();
            self.binary(t, op, ty, a, Operand::Imm(0));
            self.binary(
                d,
                BinOp::And,
                IntType::U32,
                Operand::Reg(t),
                Operand::Imm(0xffff_ffff),
            );
        }
        Ok(())
    }

    /// `shfl.sync.MODE.b32 d[|p], a, b, c, membermask`.
    fn shfl(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let mode = match q.other.as_slice() {
            ["sync", "up"] => ShflMode::Up,
            ["sync", "down"] => ShflMode::Down,
            ["sync", "bfly"] => ShflMode::Bfly,
            ["sync", "idx"] => ShflMode::Idx,
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: expected `shfl.sync.up`, `.down`, `.bfly` or `.idx` (the `shfl` without `.sync` of sm_6x and before is not supported)",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        let ty = arith_type(ins, &q, false)?;
        let ops = &ins.operands;
        let (d, p, rest) = match ops.len() {
            5 => (&ops[0], None, &ops[1..]),
            6 => (&ops[0], Some(&ops[1]), &ops[2..]),
            n => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}` takes 5 operands (6 with a predicate destination), found {n}",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        let value = self.src(f, ins, &rest[0], ty)?;
        let lane = self.src(f, ins, &rest[1], IntType::U32)?;
        let clamp = self.src(f, ins, &rest[2], IntType::U32)?;
        let mask = self.src(f, ins, &rest[3], IntType::U32)?;
        let dst = Some(self.dst(f, ins, d)?);
        let pred_dst = p.map(|p| self.dst(f, ins, p)).transpose()?;
        self.emit(InstrKind::Warp {
            op: WarpOp::Shfl { mode, lane, clamp },
            mask,
            value,
            dst,
            pred_dst,
        });
        Ok(())
    }

    /// `vote.sync.ballot.b32 d, {!}a, membermask` and `vote.sync.{any,all,uni}.pred d, {!}a,
    /// membermask`.
    fn vote(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let op = match q.other.as_slice() {
            ["sync", "ballot"] => VoteOp::Ballot,
            ["sync", "any"] => VoteOp::Any,
            ["sync", "all"] => VoteOp::All,
            ["sync", "uni"] => VoteOp::Uni,
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: expected `vote.sync.ballot`, `.any`, `.all` or `.uni` (the `vote` without `.sync` of sm_6x and before is not supported)",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        let [d, a, m] = self.operands(ins, 3)? else {
            unreachable!()
        };
        let value = self.src(f, ins, a, PRED)?;
        let mask = self.src(f, ins, m, IntType::U32)?;
        let dst = Some(self.dst(f, ins, d)?);
        self.emit(InstrKind::Warp {
            op: WarpOp::Vote(op),
            mask,
            value,
            dst,
            pred_dst: None,
        });
        Ok(())
    }

    /// `activemask.b32 d`: the lanes that run it converged with this thread (the explorer
    /// chooses them, [`WarpOp::ActiveMask`]).
    fn activemask(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        if !q.other.is_empty() || q.types.as_slice() != [ScalarType::B(32)] {
            return Err(LowerError::at(
                ins,
                format!("expected `activemask.b32`, found `{}`", mnemonic(ins)),
            ));
        }
        let [d] = self.operands(ins, 1)? else {
            unreachable!()
        };
        let dst = Some(self.dst(f, ins, d)?);
        self.emit(InstrKind::Warp {
            op: WarpOp::ActiveMask,
            mask: Operand::Imm(0),
            value: Operand::Imm(0),
            dst,
            pred_dst: None,
        });
        Ok(())
    }

    /// `bar.warp.sync membermask`: `__syncwarp`.
    fn warp_sync(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        if ins
            .modifiers
            .iter()
            .any(|m| !matches!(m.as_str(), "warp" | "sync"))
        {
            return Err(LowerError::at(
                ins,
                format!("expected `bar.warp.sync`, found `{}`", mnemonic(ins)),
            ));
        }
        let [m] = self.operands(ins, 1)? else {
            unreachable!()
        };
        let mask = self.src(f, ins, m, IntType::U32)?;
        self.emit(InstrKind::Warp {
            op: WarpOp::Sync,
            mask,
            value: Operand::Imm(0),
            dst: None,
            pred_dst: None,
        });
        Ok(())
    }

    fn unary(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let op = ins.opcode.as_str();
        let ty = arith_type(ins, &q, op == "not")?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let is_pred = one_type(ins, &q)? == ScalarType::Pred;
        let a = self.src(f, ins, a, ty)?;
        let d = self.dst(f, ins, d)?;
        match op {
            "not" if is_pred => self.binary(d, BinOp::Xor, ty, a, Operand::Imm(1)),
            "not" => self.binary(d, BinOp::Xor, ty, a, Operand::Imm(ty.wrap(-1))),
            "cnot" => self.binary(d, BinOp::Eq, ty, a, Operand::Imm(0)),
            "neg" => self.binary(d, BinOp::Sub, ty, Operand::Imm(0), a),
            _ => {
                // abs: PTX gives the most negative value back unchanged, as `0 - x` wraps.
                let neg = self.scratch();
                self.binary(neg, BinOp::Sub, ty, Operand::Imm(0), a);
                let c = self.scratch();
                self.binary(c, BinOp::Lt, ty, a, Operand::Imm(0));
                self.select(d, Operand::Reg(c), Operand::Reg(neg), a, ty);
            }
        }
        Ok(())
    }

    fn min_max(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let ty = arith_type(ins, &q, false)?;
        let [d, a, b] = self.operands(ins, 3)? else {
            unreachable!()
        };
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let d = self.dst(f, ins, d)?;
        let c = self.scratch();
        if ins.opcode == "min" {
            self.binary(c, BinOp::Lt, ty, a, b);
        } else {
            self.binary(c, BinOp::Lt, ty, b, a);
        }
        self.select(d, Operand::Reg(c), a, b, ty);
        Ok(())
    }

    /// `setp.CmpOp{.BoolOp}.type p, a, b{, {!}c}` (PTX ISA, "Comparison and Selection").
    fn setp(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        let t = one_type(ins, &q)?;
        if matches!(t, ScalarType::F(_)) {
            return Err(float_error(ins));
        }
        let ty = arith_type(ins, &q, false)?;
        let unsigned = IntType::new(ty.bits, false);
        let mut cmp = None;
        let mut combine = None;
        for m in &q.other {
            // (operation, swap the operands, compare unsigned)
            let c = match *m {
                "eq" => (BinOp::Eq, false, false),
                "ne" => (BinOp::Ne, false, false),
                "lt" => (BinOp::Lt, false, false),
                "le" => (BinOp::Le, false, false),
                "gt" => (BinOp::Lt, true, false),
                "ge" => (BinOp::Le, true, false),
                "lo" => (BinOp::Lt, false, true),
                "ls" => (BinOp::Le, false, true),
                "hi" => (BinOp::Lt, true, true),
                "hs" => (BinOp::Le, true, true),
                "and" => {
                    combine = Some(BinOp::And);
                    continue;
                }
                "or" => {
                    combine = Some(BinOp::Or);
                    continue;
                }
                "xor" => {
                    combine = Some(BinOp::Xor);
                    continue;
                }
                "equ" | "neu" | "ltu" | "leu" | "gtu" | "geu" | "num" | "nan" | "ftz" => {
                    return Err(float_error(ins))
                }
                other => {
                    return Err(LowerError::at(
                        ins,
                        format!("unknown comparison `.{other}` on `setp`"),
                    ))
                }
            };
            cmp = Some(c);
        }
        let Some((op, swap, force_unsigned)) = cmp else {
            return Err(LowerError::at(
                ins,
                "`setp` needs a comparison (`.eq`, `.lt`, ...)",
            ));
        };
        let cty = if force_unsigned { unsigned } else { ty };
        self.setp_with(f, ins, (op, cty, swap), combine)
    }

    /// The destinations and sources of `setp`: `p{|q}, a, b{, c}`, `p = (a op b) BoolOp c`
    /// computed in `cty`, the operands swapped when `swap` says so.
    fn setp_with(
        &mut self,
        f: &mut Frame<'m>,
        ins: &'m Instruction,
        (op, cty, swap): (BinOp, IntType, bool),
        combine: Option<BinOp>,
    ) -> R<()> {
        // `p|q, a, b{, c}`: the parser gives the pair as two operands.
        let single = 3 + usize::from(combine.is_some());
        let pair = ins.operands.len() == single + 1;
        let ops = self.operands(ins, if pair { single + 1 } else { single })?;
        let (dsts, srcs) = ops.split_at(1 + usize::from(pair));
        let a = self.src(f, ins, &srcs[0], cty)?;
        let b = self.src(f, ins, &srcs[1], cty)?;
        let (a, b) = if swap { (b, a) } else { (a, b) };
        let c = match srcs.get(2) {
            Some(c) => Some(self.src(f, ins, c, PRED)?),
            None => None,
        };
        if !pair && c.is_none() {
            let d = self.dst(f, ins, &dsts[0])?;
            self.binary(d, op, cty, a, b);
            return Ok(());
        }
        let t = self.scratch();
        self.binary(t, op, cty, a, b);
        // p = t BoolOp c; q = !t BoolOp c (PTX ISA, "setp").
        for (k, d) in dsts.iter().enumerate() {
            let v = if k == 0 {
                Operand::Reg(t)
            } else {
                let n = self.scratch();
                self.binary(n, BinOp::Xor, PRED, Operand::Reg(t), Operand::Imm(1));
                Operand::Reg(n)
            };
            if *d == Op::Sink {
                continue;
            }
            let d = self.dst(f, ins, d)?;
            match (combine, c) {
                (Some(bool_op), Some(c)) => self.binary(d, bool_op, PRED, v, c),
                _ => self.emit(InstrKind::Mov { dst: d, src: v }),
            }
        }
        Ok(())
    }

    fn selp(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        only(ins, &q, &[])?;
        let t = one_type(ins, &q)?;
        let ty = int_of(t, true).ok_or_else(|| float_error(ins))?;
        let [d, a, b, c] = self.operands(ins, 4)? else {
            unreachable!()
        };
        if ty.bits == 32 && (self.is_address(f, a) || self.is_address(f, b)) {
            // Choosing between addresses (`p ? smem_a : smem_b`): keep them whole.
            let (a, b) = (self.promoted(f, ins, a)?, self.promoted(f, ins, b)?);
            let c = self.src(f, ins, c, PRED)?;
            let d = self.dst(f, ins, d)?;
            self.select(d, c, a, b, IntType::S64);
            return Ok(());
        }
        let a = self.src(f, ins, a, ty)?;
        let b = self.src(f, ins, b, ty)?;
        let c = self.src(f, ins, c, PRED)?;
        let d = self.dst(f, ins, d)?;
        self.select(d, c, a, b, ty);
        Ok(())
    }

    fn cvt(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        if q.types.iter().any(|t| matches!(t, ScalarType::F(_))) {
            return Err(float_error(ins));
        }
        only(ins, &q, &[])?;
        let (to, from) = match q.types.as_slice() {
            [to, from] => (int_of(*to, false), int_of(*from, false)),
            _ => (None, None),
        };
        let (Some(to), Some(from)) = (to, from) else {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` needs two integer types (`cvt.u64.u32`)",
                    mnemonic(ins)
                ),
            ));
        };
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let address = self.is_address(f, a);
        let a = self.src(f, ins, a, from)?;
        let d = self.dst(f, ins, d)?;
        if address {
            // An address keeps its allocation number through width changes (module docs).
            self.emit(InstrKind::Mov { dst: d, src: a });
        } else {
            self.convert(d, a, from, to);
        }
        Ok(())
    }

    /// `cvta{.to}.space.size`: generic and state-space addresses are the same values here.
    fn cvta(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, true);
        if q.space == Some(StateSpace::Param) {
            return Err(LowerError::at(
                ins,
                "`cvta.param` (the address of a kernel parameter) is not supported yet",
            ));
        }
        if q.sem.is_some() || q.scope.is_some() || q.vec.is_some() {
            return Err(LowerError::at(
                ins,
                format!("unexpected qualifiers on `{}`", mnemonic(ins)),
            ));
        }
        only(ins, &q, &["to"])?;
        let ty = arith_type(ins, &q, false)?;
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let a = match a {
            Op::Symbol(_) => self.src(f, ins, a, IntType::U64)?,
            _ => self.src(f, ins, a, ty)?,
        };
        let d = self.dst(f, ins, d)?;
        self.emit(InstrKind::Mov { dst: d, src: a });
        Ok(())
    }

    // ---- memory ----

    /// The access type of `ld`/`st`/`atom`/`red` (floats are their bits when moved).
    fn access_type(&self, ins: &Instruction, q: &Quals, bits_only: bool) -> R<IntType> {
        let t = one_type(ins, q)?;
        match t {
            ScalarType::F(_) if !bits_only => Err(float_error(ins)),
            ScalarType::Pred => Err(LowerError::at(
                ins,
                format!("`{}`: a `.pred` access", mnemonic(ins)),
            )),
            t => Ok(int_of(t, true).expect("an integer or float")),
        }
    }

    /// The address of element `k` of a vector access of type `ty`.
    fn address(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        o: &Op,
        ty: IntType,
        extra: i64,
    ) -> R<Address> {
        let Op::Address { base, offset } = o else {
            return Err(LowerError::at(
                ins,
                format!("expected an address `[...]`, found `{}`", render_operand(o)),
            ));
        };
        let disp = offset + extra;
        match base.as_ref() {
            Op::Reg(name) => match self.lookup_reg(f, name) {
                Some(reg) => Ok(Address::Ptr { reg, disp }),
                None => Err(self.bad_register(ins, name)),
            },
            Op::Symbol(s) => match self.lookup_var(f, s) {
                Some(Var::Mem(m)) => {
                    if m.ty.bits != ty.bits {
                        return Err(LowerError::at(
                            ins,
                            format!(
                                "mixed-size access to `{s}` is not supported: it holds {}-bit values, `{}` accesses {} bits",
                                m.ty.bits,
                                mnemonic(ins),
                                ty.bits
                            ),
                        ));
                    }
                    let w = m.ty.bytes() as i64;
                    if disp % w != 0 {
                        return Err(LowerError::at(
                            ins,
                            format!("`[{s}+{disp}]` is misaligned for {w}-byte values"),
                        ));
                    }
                    let i = disp / w;
                    if !(0..i64::from(m.len)).contains(&i) {
                        return Err(LowerError::at(
                            ins,
                            format!(
                                "`[{s}+{disp}]` is out of bounds of `{s}` ({} bytes)",
                                i64::from(m.len) * w
                            ),
                        ));
                    }
                    Ok(Address::loc(LocId(m.first.0 + i as u32)))
                }
                Some(Var::KernelParam(_) | Var::Slot(_)) => Err(LowerError::at(
                    ins,
                    format!("parameter `{s}` is read with `ld.param` and written with `st.param`"),
                )),
                None => Err(LowerError::at(ins, format!("unknown variable `{s}`"))),
            },
            _ => Err(LowerError::at(
                ins,
                format!("unsupported address `{}`", render_operand(o)),
            )),
        }
    }

    /// The width of the parts an access of type `ty` through `addr` is split into: when it
    /// only reaches `.local` variables whose locations are narrower.
    fn local_split(&mut self, f: &Frame<'m>, addr: &Op, ty: IntType) -> Option<IntType> {
        let Op::Address { base, .. } = addr else {
            return None;
        };
        let part = match base.as_ref() {
            Op::Symbol(s) => match self.lookup_var(f, s) {
                Some(Var::Mem(m)) if m.private => m.ty,
                _ => return None,
            },
            Op::Reg(r) => *self.cx.analysis.local_regs.get(&f.func.name)?.get(r)?,
            _ => return None,
        };
        (part.bits < ty.bits).then_some(part)
    }

    /// The registers and values of a scalar or vector operand, checked against `.vN`.
    fn elements<'o>(&self, ins: &Instruction, q: &Quals, o: &'o Op) -> R<Vec<&'o Op>> {
        let v: Vec<&Op> = match o {
            Op::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if v.len() != q.vec.unwrap_or(1) {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` takes {} value(s), found {}",
                    mnemonic(ins),
                    q.vec.unwrap_or(1),
                    v.len()
                ),
            ));
        }
        Ok(v)
    }

    fn memory_quals(&self, ins: &Instruction, q: &Quals, allowed: &[&str]) -> R<()> {
        only(ins, q, allowed)?;
        if q.space == Some(StateSpace::SharedCluster) {
            // Another CTA's shared memory is reached through `mapa`, which is not supported.
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}`: distributed shared memory (`.shared::cluster`) is not supported yet",
                    mnemonic(ins)
                ),
            ));
        }
        if q.sem == Some("mmio") {
            return Err(LowerError::at(
                ins,
                format!("`{}`: `.mmio` is not supported", mnemonic(ins)),
            ));
        }
        Ok(())
    }

    fn load(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, true);
        // `.nc` reads through the non-coherent cache: a weak load that is only correct when
        // nothing writes the data during the kernel (PTX ISA, "ld.global.nc"); as a weak
        // load here, a racing write shows up as the data race it is.
        self.memory_quals(ins, &q, &["nc"])?;
        let ty = self.access_type(ins, &q, true)?;
        let [dsts, addr] = self.memory_operands(ins, 2)? else {
            unreachable!()
        };
        let dsts = self.elements(ins, &q, dsts)?;
        if q.space == Some(StateSpace::Param) {
            return self.load_param(f, ins, ty, &dsts, addr);
        }
        let (order, scope) = access_order(ins, &q, true)?;
        let split = self.local_split(f, addr, ty);
        for (k, d) in dsts.into_iter().enumerate() {
            let at = (k as i64) * ty.bytes() as i64;
            let dst = self.dst(f, ins, d)?;
            let Some(part) = split else {
                let addr = self.address(f, ins, addr, ty, at)?;
                self.emit(InstrKind::Load {
                    dst,
                    addr,
                    ty,
                    order,
                    scope,
                });
                continue;
            };
            // The parts, little-endian, or-ed together.
            let wide = IntType::new(ty.bits, false);
            let acc = self.scratch();
            self.emit(InstrKind::Mov {
                dst: acc,
                src: Operand::Imm(0),
            });
            for j in 0..ty.bits / part.bits {
                let addr =
                    self.address(f, ins, addr, part, at + i64::from(j) * part.bytes() as i64)?;
                let t = self.scratch();
                self.emit(InstrKind::Load {
                    dst: t,
                    addr,
                    ty: part,
                    order,
                    scope,
                });
                let shift = Operand::Imm(i64::from(j) * i64::from(part.bits));
                self.binary(t, BinOp::Shl, wide, Operand::Reg(t), shift);
                self.binary(acc, BinOp::Or, wide, Operand::Reg(acc), Operand::Reg(t));
            }
            self.wrap(dst, Operand::Reg(acc), ty);
        }
        Ok(())
    }

    fn load_param(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        ty: IntType,
        dsts: &[&Op],
        addr: &Op,
    ) -> R<()> {
        let Op::Address { base, offset } = addr else {
            return Err(LowerError::at(ins, "`ld.param` needs an address `[param]`"));
        };
        let Op::Symbol(name) = base.as_ref() else {
            return Err(LowerError::at(
                ins,
                "`ld.param` through a register is not supported: name the parameter",
            ));
        };
        match self.lookup_var(f, name) {
            Some(Var::KernelParam(i)) => {
                let arg = &self.cx.launch.args[i];
                if dsts.len() != 1 && !matches!(arg, Arg::Struct(_)) {
                    return Err(LowerError::at(
                        ins,
                        format!("`{name}` read as a vector: only struct parameters are"),
                    ));
                }
                let mut values = Vec::with_capacity(dsts.len());
                for k in 0..dsts.len() {
                    let at = offset + (k as i64) * ty.bytes() as i64;
                    let piece = match arg {
                        Arg::Struct(fields) => match fields.iter().find(|(o, _)| *o == at) {
                            Some((_, a)) => a,
                            None => {
                                return Err(LowerError::at(
                                    ins,
                                    format!("`{name}` read at byte {at}, where argument {i} (a struct) has no field"),
                                ))
                            }
                        },
                        a if at == 0 => a,
                        _ => {
                            return Err(LowerError::at(
                                ins,
                                format!("`{name}` read at an offset, but argument {i} is not a struct"),
                            ))
                        }
                    };
                    let value = match *piece {
                        Arg::Value(v) => ty.wrap(v),
                        Arg::Pointer(_) | Arg::PointerAt(..) if ty.bits != 64 => {
                            return Err(LowerError::at(
                                ins,
                                format!(
                                    "argument {i} is a pointer, but `{}` reads {} bits of it",
                                    mnemonic(ins),
                                    ty.bits
                                ),
                            ));
                        }
                        Arg::Pointer(l) => self.program.address_of(l),
                        Arg::PointerAt(l, off) => self.program.address_of(l).wrapping_add(off),
                        Arg::Struct(_) => {
                            return Err(LowerError::at(
                                ins,
                                format!(
                                    "`{name}` read at byte {at}: a nested struct, not supported"
                                ),
                            ))
                        }
                    };
                    values.push(value);
                }
                for (d, value) in dsts.iter().zip(values) {
                    let dst = self.dst(f, ins, d)?;
                    self.emit(InstrKind::Mov {
                        dst,
                        src: Operand::Imm(value),
                    });
                }
                Ok(())
            }
            Some(Var::Slot(s)) => {
                for (k, d) in dsts.iter().enumerate() {
                    let r = self.slot_reg(s, offset + (k as i64) * ty.bytes() as i64, name);
                    let dst = self.dst(f, ins, d)?;
                    self.wrap(dst, Operand::Reg(r), ty);
                }
                Ok(())
            }
            Some(Var::Mem(_)) | None => Err(LowerError::at(
                ins,
                format!("`{name}` is not a parameter of `{}`", f.func.name),
            )),
        }
    }

    fn store(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, true);
        self.memory_quals(ins, &q, &[])?;
        let ty = self.access_type(ins, &q, true)?;
        let [addr, values] = self.memory_operands(ins, 2)? else {
            unreachable!()
        };
        let values = self.elements(ins, &q, values)?;
        if q.space == Some(StateSpace::Param) {
            let Op::Address { base, offset } = addr else {
                return Err(LowerError::at(ins, "`st.param` needs an address `[param]`"));
            };
            let slot = match base.as_ref() {
                Op::Symbol(name) => match self.lookup_var(f, name) {
                    Some(Var::Slot(s)) => Some((s, name)),
                    _ => None,
                },
                _ => None,
            };
            let Some((s, name)) = slot else {
                return Err(LowerError::at(
                    ins,
                    format!("`{}` writes no call parameter", render_operand(addr)),
                ));
            };
            for (k, v) in values.into_iter().enumerate() {
                let v = self.src(f, ins, v, ty)?;
                let r = self.slot_reg(s, offset + (k as i64) * ty.bytes() as i64, name);
                self.wrap(r, v, ty);
            }
            return Ok(());
        }
        let (order, scope) = access_order(ins, &q, false)?;
        let split = self.local_split(f, addr, ty);
        for (k, v) in values.into_iter().enumerate() {
            let at = (k as i64) * ty.bytes() as i64;
            let value = self.src(f, ins, v, ty)?;
            let Some(part) = split else {
                let addr = self.address(f, ins, addr, ty, at)?;
                self.emit(InstrKind::Store {
                    addr,
                    value,
                    ty,
                    order,
                    scope,
                });
                continue;
            };
            // The value's parts, little-endian (the store keeps each part's low bits).
            let wide = IntType::new(ty.bits, false);
            let value = self.wrapped(value, ty);
            for j in 0..ty.bits / part.bits {
                let addr =
                    self.address(f, ins, addr, part, at + i64::from(j) * part.bytes() as i64)?;
                let t = self.scratch();
                let shift = Operand::Imm(i64::from(j) * i64::from(part.bits));
                self.binary(t, BinOp::Shr, wide, value, shift);
                self.emit(InstrKind::Store {
                    addr,
                    value: Operand::Reg(t),
                    ty: part,
                    order,
                    scope,
                });
            }
        }
        Ok(())
    }

    /// `atom` and `red` (PTX ISA, "Parallel Synchronization and Communication").
    fn rmw(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let is_atom = ins.opcode == "atom";
        let q = quals(ins, true);
        if q.vec.is_some() {
            return Err(LowerError::at(
                ins,
                format!("vector `{}` is not supported", mnemonic(ins)),
            ));
        }
        if q.other.contains(&"noftz") {
            return Err(float_error(ins));
        }
        let op_names: Vec<&str> = RmwOp::PTX_NAMES
            .iter()
            .map(|(n, _)| *n)
            .chain(["cas"])
            .collect();
        self.memory_quals(ins, &q, &op_names)?;
        let sel: Vec<&str> = q.other.clone();
        let [sel] = sel.as_slice() else {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` needs one operation (`.add`, `.cas`, ...)",
                    mnemonic(ins)
                ),
            ));
        };
        if *sel == "cas" && !is_atom {
            return Err(LowerError::at(ins, "`red` has no `.cas`"));
        }
        if q.space == Some(StateSpace::Param) || q.space == Some(StateSpace::Const) {
            return Err(LowerError::at(
                ins,
                format!("`{}` on this state space", mnemonic(ins)),
            ));
        }
        // `atom.add.f32`/`.f64` and `red.add.f32`/`.f64`: a float add (the IR's float RMW
        // rounds to nearest, and for `.f32` flushes subnormals as the ISA says).
        let ty = match one_type(ins, &q)? {
            ScalarType::F(n @ (32 | 64)) if *sel == "add" => IntType::float(n),
            _ => self.access_type(ins, &q, false)?,
        };
        if !(matches!(ty.bits, 32 | 64) || (ty.bits == 16 && *sel == "cas")) {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}`: {}-bit atomics are not supported",
                    mnemonic(ins),
                    ty.bits
                ),
            ));
        }
        // Mirrors crates/litmus/src/instr.rs (`rmw`): no semantics is `.relaxed`, no scope
        // `.gpu` (PTX ISA, "atom": "the default is .relaxed ... .gpu").
        let order = match q.sem {
            None | Some("relaxed") => Order::Relaxed,
            Some("acquire") => Order::Acquire,
            Some("release") => Order::Release,
            Some("acq_rel") => Order::AcqRel,
            Some(other) => {
                return Err(LowerError::at(
                    ins,
                    format!("`.{other}` is not allowed on `{}`", ins.opcode),
                ))
            }
        };
        let scope = q.scope.unwrap_or(Scope::Gpu);
        let ops =
            self.memory_operands(ins, usize::from(is_atom) + 2 + usize::from(*sel == "cas"))?;
        let ops = if is_atom { &ops[1..] } else { ops };
        let addr = self.address(f, ins, &ops[0], ty, 0)?;
        if self.local_split(f, &ops[0], ty).is_some() {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` on `.local` memory accessed at other widths too",
                    mnemonic(ins)
                ),
            ));
        }
        let kind = if *sel == "cas" {
            RmwKind::Cas {
                expected: self.src(f, ins, &ops[1], ty)?,
                new: self.src(f, ins, &ops[2], ty)?,
            }
        } else {
            let op = RmwOp::from_ptx(sel).expect("checked above");
            RmwKind::Op(op, self.src(f, ins, &ops[1], ty)?)
        };
        let dst = if is_atom {
            Some(self.dst(f, ins, &ins.operands[0])?)
        } else {
            None
        };
        self.emit(InstrKind::Rmw {
            dst,
            addr,
            kind,
            ty,
            order,
            scope,
        });
        Ok(())
    }

    // ---- fences and barriers ----

    /// `fence{.sem}.scope`; mirrors crates/litmus/src/instr.rs (`fence`): the default
    /// semantics is `.acq_rel` (PTX ISA, "membar/fence"), the scope is required.
    fn fence(&mut self, ins: &Instruction) -> R<()> {
        if ins
            .modifiers
            .iter()
            .any(|m| m.starts_with("proxy") || m.starts_with("mbarrier"))
        {
            return Err(LowerError::at(
                ins,
                format!(
                    "proxy fence `{}` is not supported yet: the model has one proxy (generic)",
                    mnemonic(ins)
                ),
            ));
        }
        let mut order = FenceOrder::AcqRel;
        let mut scope = None;
        for m in &ins.modifiers {
            match m.as_str() {
                "sc" => order = FenceOrder::Sc,
                "acq_rel" => order = FenceOrder::AcqRel,
                s => match scope_of(s) {
                    Some(sc) if scope.is_none() => scope = Some(sc),
                    _ => {
                        return Err(LowerError::at(
                            ins,
                            format!("`.{s}` is not supported on `fence`"),
                        ))
                    }
                },
            }
        }
        let Some(scope) = scope else {
            return Err(LowerError::at(
                ins,
                "`fence` needs a scope; expected one of .cta, .cluster, .gpu, .sys",
            ));
        };
        self.emit(InstrKind::Fence {
            order,
            scope,
            spaces: FenceSpaces::ALL,
        });
        Ok(())
    }

    /// `membar.level`: `membar` is `fence.sc` (PTX ISA, "membar/fence"); mirrors
    /// crates/litmus/src/instr.rs (`membar`).
    fn membar(&mut self, ins: &Instruction) -> R<()> {
        let scope = match ins
            .modifiers
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["cta"] => Scope::Cta,
            ["gl"] => Scope::Gpu,
            ["sys"] => Scope::Sys,
            [p, ..] if p.starts_with("proxy") => {
                return Err(LowerError::at(
                    ins,
                    format!("proxy fence `{}` is not supported yet", mnemonic(ins)),
                ))
            }
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: `membar` takes one level, .cta, .gl or .sys",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        self.emit(InstrKind::Fence {
            order: FenceOrder::Sc,
            scope,
            spaces: FenceSpaces::ALL,
        });
        Ok(())
    }

    /// `bar{.cta}.sync a{, b}`, `bar{.cta}.arrive a, b`, `bar{.cta}.red.op.type d, a{, b},
    /// {!}c` and the same with `barrier` (`bar.sync` is `barrier.sync.aligned`); mirrors
    /// crates/litmus/src/instr.rs (`barrier`).
    fn barrier(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let mut mode = None;
        let mut red = None;
        for m in &ins.modifiers {
            match m.as_str() {
                "sync" | "arrive" | "red" if mode.is_none() => mode = Some(m.as_str()),
                "popc" => red = Some(BarrierRedOp::Popc),
                "and" => red = Some(BarrierRedOp::And),
                "or" => red = Some(BarrierRedOp::Or),
                // `.cta` is the only barrier scope here, `.aligned` a promise about
                // convergence: neither changes what the barrier does.
                "cta" | "aligned" | "u32" | "pred" => {}
                "warp" => return self.warp_sync(f, ins),
                "cluster" => {
                    return Err(LowerError::at(
                        ins,
                        format!("cluster barrier `{}` is not supported yet", mnemonic(ins)),
                    ))
                }
                other => {
                    return Err(LowerError::at(
                        ins,
                        format!("`.{other}` is not supported on `{}`", ins.opcode),
                    ))
                }
            }
        }
        // An id or count in a register is checked when it runs (the explorer's fault).
        let id_of = |lw: &mut Self, f: &mut Frame<'m>, o: &Op| -> R<Operand> {
            let id = lw.src(f, ins, o, IntType::U32)?;
            if let Operand::Imm(v) = id {
                if !(0..Value::from(scopecheck_ir::BARRIER_IDS)).contains(&v) {
                    return Err(LowerError::at(
                        ins,
                        format!("barrier number {v} is out of range; PTX has barriers 0 to 15"),
                    ));
                }
            }
            Ok(id)
        };
        let count_of = |lw: &mut Self, f: &mut Frame<'m>, o: &Op| -> R<Operand> {
            let c = lw.src(f, ins, o, IntType::U32)?;
            if c == Operand::Imm(0) {
                return Err(LowerError::at(
                    ins,
                    "a barrier's thread count must be positive",
                ));
            }
            Ok(c)
        };
        let ops = &ins.operands;
        let kind = match (mode, red) {
            (Some("sync"), None) if matches!(ops.len(), 1 | 2) => InstrKind::Barrier {
                id: id_of(self, f, &ops[0])?,
                kind: BarrierKind::Sync,
                count: match ops.get(1) {
                    Some(o) => Some(count_of(self, f, o)?),
                    None => None,
                }, spaces: scopecheck_ir::FenceSpaces::ALL,
            },
            (Some("arrive"), None) if ops.len() == 2 => InstrKind::Barrier {
                id: id_of(self, f, &ops[0])?,
                kind: BarrierKind::Arrive,
                count: Some(count_of(self, f, &ops[1])?), spaces: scopecheck_ir::FenceSpaces::ALL,
            },
            (Some("red"), Some(op)) if matches!(ops.len(), 3 | 4) => {
                let id = id_of(self, f, &ops[1])?;
                let count = if ops.len() == 4 {
                    Some(count_of(self, f, &ops[2])?)
                } else {
                    None
                };
                let pred = self.src(f, ins, ops.last().expect("3 or 4"), PRED)?;
                let dst = self.dst(f, ins, &ops[0])?;
                InstrKind::Barrier {
                    id,
                    kind: BarrierKind::Red { op, dst, pred },
                    count, spaces: scopecheck_ir::FenceSpaces::ALL,
                }
            }
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: expected `.sync a{{, b}}`, `.arrive a, b` or `.red.{{popc,and,or}} d, a{{, b}}, p`",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        self.emit(kind);
        Ok(())
    }

    // ---- calls ----

    /// `call{.uni} (ret), f, (args)`: the callee's body, inlined. Parameters pass through
    /// slots: the caller's `st.param [param0+0]` and the callee's `ld.param [f_param_0]` are
    /// the same registers, as are the callee's `st.param [func_retval0]` and the caller's
    /// `ld.param [retval0]` (PTX ISA, "Function declarations and definitions").
    fn call(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        only(ins, &quals(ins, false), &["uni"])?;
        let (rets, callee, args) = call_parts(ins);
        let name = match callee {
            Some(Op::Symbol(n)) => n.as_str(),
            _ => {
                return Err(LowerError::at(
                    ins,
                    "indirect calls (through a register) are not supported yet",
                ))
            }
        };
        let Some(func) = find_function(self.cx.module, name) else {
            return Err(LowerError::at(
                ins,
                format!("call to undeclared function `{name}`"),
            ));
        };
        let Some(body) = &func.body else {
            // printf only writes to the host's output, which the model does not see.
            if name == "vprintf" {
                return Ok(());
            }
            // A device `assert` that fails: the requirement of the thread's register
            // ASSERT_REGISTER (0 until here) breaks; the view's condition requires it 0.
            if name == "__assertfail" {
                let r = match self.registers.iter().position(|n| n == ASSERT_REGISTER) {
                    Some(k) => RegId(k as u32),
                    None => self.fresh_reg(ASSERT_REGISTER),
                };
                self.emit(InstrKind::Mov {
                    dst: r,
                    src: Operand::Imm(1),
                });
                return Ok(());
            }
            return Err(LowerError::at(
                ins,
                format!(
                    "call to external function `{name}` (no body in the module): not supported"
                ),
            ));
        };
        if func.entry {
            return Err(LowerError::at(
                ins,
                format!("`{name}` is a kernel, not a function"),
            ));
        }
        if self.stack.contains(&name) {
            return Err(LowerError::at(
                ins,
                format!("recursive call to `{name}` is not supported"),
            ));
        }
        if self.stack.len() > MAX_CALL_DEPTH {
            return Err(LowerError::at(
                ins,
                format!("calls nested more than {MAX_CALL_DEPTH} deep are not supported"),
            ));
        }
        if args.len() != func.params.len() || rets.len() != func.returns.len() {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{name}` takes {} argument(s) and returns {} value(s); the call passes {} and receives {}",
                    func.params.len(),
                    func.returns.len(),
                    args.len(),
                    rets.len()
                ),
            ));
        }
        let mut params: HashMap<&'m str, Var> = HashMap::new();
        // Register results, copied out after the body.
        let mut copy_out = Vec::new();
        for (p, a) in func.params.iter().zip(args) {
            params.insert(p.name.as_str(), self.binding(f, ins, a, p, true)?);
        }
        for (p, r) in func.returns.iter().zip(rets) {
            let v = self.binding(f, ins, r, p, false)?;
            if let (Op::Reg(_), Var::Slot(s)) = (r, v) {
                copy_out.push((r, s, p));
            }
            params.insert(p.name.as_str(), v);
        }
        self.inlined += 1;
        let end = self.new_label();
        let suffix = format!("@{name}#{}", self.inlined);
        let mut frame = self.frame(func, suffix, params, end)?;
        self.stack.push(name);
        self.body(&mut frame, body)?;
        self.stack.pop();
        self.span = ins.span;
        self.text = render(ins);
        self.scratch_used = 0;
        self.place(end);
        for (r, s, p) in copy_out {
            let ty = int_of(p.ty, true).unwrap_or(PRED);
            let src = self.slot_reg(s, 0, &p.name);
            let d = self.dst(f, ins, r)?;
            self.wrap(d, Operand::Reg(src), ty);
        }
        Ok(())
    }

    /// The slot a call argument or result goes through: the caller's `.param` variable, or
    /// for a register or constant (non-ABI calls) a fresh one.
    fn binding(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        o: &Op,
        p: &crate::ast::Param,
        input: bool,
    ) -> R<Var> {
        if let Op::Symbol(s) = o {
            return match self.lookup_var(f, s) {
                Some(v @ Var::Slot(_)) => Ok(v),
                _ => Err(LowerError::at(
                    ins,
                    format!("`{s}` is not a `.param` variable"),
                )),
            };
        }
        self.slots.push(HashMap::new());
        let s = self.slots.len() - 1;
        if input {
            let ty = int_of(p.ty, true).unwrap_or(PRED);
            let v = self.src(f, ins, o, ty)?;
            let r = self.slot_reg(s, 0, &p.name);
            self.wrap(r, v, ty);
        }
        Ok(Var::Slot(s))
    }
}

/// The order and scope of `ld` (`load`) or `st`; mirrors `access_order` of
/// crates/litmus/src/instr.rs: no semantics or `.weak` is a weak access (its scope is
/// irrelevant: `Sys`); `.volatile` is `.relaxed.sys`; `.relaxed`, `.acquire` (loads) and
/// `.release` (stores) need a scope (PTX ISA, "ld", "st").
fn access_order(ins: &Instruction, q: &Quals, load: bool) -> R<(Order, Scope)> {
    match q.sem {
        None | Some("weak") => {
            if q.scope.is_some() {
                return Err(LowerError::at(
                    ins,
                    format!("a weak `{}` takes no scope", ins.opcode),
                ));
            }
            Ok((Order::Weak, Scope::Sys))
        }
        Some("volatile") => {
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
                ("relaxed", _) => Order::Relaxed,
                ("acquire", true) => Order::Acquire,
                ("release", false) => Order::Release,
                _ => {
                    return Err(LowerError::at(
                        ins,
                        format!("`.{sem}` is not allowed on `{}`", ins.opcode),
                    ))
                }
            };
            match q.scope {
                Some(scope) => Ok((order, scope)),
                None => Err(LowerError::at(
                    ins,
                    format!(
                        "`{}.{sem}` needs a scope; expected one of .cta, .cluster, .gpu, .sys",
                        ins.opcode
                    ),
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Param, RegDecl};
    use scopecheck_ir::{Arch, Arithmetic, Condition, Prop, Quantifier};

    // ---- building modules by hand ----

    fn span(line: u32) -> Span {
        Span {
            offset: line as usize * 100,
            len: 10,
            line,
            column: 5,
        }
    }
    pub(super) fn r(n: &str) -> Op {
        Op::Reg(n.into())
    }
    pub(super) fn imm(v: i64) -> Op {
        Op::Int(v)
    }
    fn sym(n: &str) -> Op {
        Op::Symbol(n.into())
    }
    fn at(base: Op, offset: i64) -> Op {
        Op::Address {
            base: Box::new(base),
            offset,
        }
    }
    fn vector(v: &[&str]) -> Op {
        Op::Vector(v.iter().map(|n| r(n)).collect())
    }
    fn list(v: &[&str]) -> Op {
        Op::List(v.iter().map(|n| sym(n)).collect())
    }

    /// `mnemonic operands;` at line `line`.
    pub(super) fn i(line: u32, mnemonic: &str, operands: Vec<Op>) -> Statement {
        let mut parts = mnemonic.split('.');
        Statement::Instruction(Instruction {
            inlined_at: Vec::new(),
            guard: None,
            opcode: parts.next().unwrap().into(),
            modifiers: parts.map(Into::into).collect(),
            operands,
            span: span(line),
            loc: Some((1, line, 5)),
        })
    }
    fn guarded(p: &str, negated: bool, s: Statement) -> Statement {
        match s {
            Statement::Instruction(mut ins) => {
                ins.guard = Some((p.into(), negated));
                Statement::Instruction(ins)
            }
            s => s,
        }
    }
    fn label(n: &str) -> Statement {
        Statement::Label(n.into(), span(0))
    }
    fn param(name: &str, ty: ScalarType) -> Param {
        Param {
            ty,
            name: name.into(),
            ptr_space: None,
            align: None,
            array: None,
            span: span(1),
        }
    }
    /// The registers every test kernel declares.
    fn regs() -> Vec<RegDecl> {
        [
            (ScalarType::Pred, "%p"),
            (ScalarType::B(16), "%rs"),
            (ScalarType::B(32), "%r"),
            (ScalarType::B(64), "%rd"),
        ]
        .into_iter()
        .map(|(ty, prefix)| RegDecl {
            ty,
            names: vec![(prefix.into(), Some(20))],
            span: span(2),
        })
        .collect()
    }
    fn body(statements: Vec<Statement>) -> Body {
        Body {
            regs: regs(),
            locals: vec![],
            statements,
        }
    }
    fn block(locals: Vec<Variable>, statements: Vec<Statement>) -> Statement {
        Statement::Block(Body {
            regs: vec![],
            locals,
            statements,
        })
    }
    fn function(
        entry: bool,
        name: &str,
        returns: Vec<Param>,
        params: Vec<Param>,
        b: Option<Body>,
    ) -> Function {
        Function {
            entry,
            name: name.into(),
            returns,
            params,
            directives: vec![],
            body: b,
            span: span(1),
        }
    }
    fn kernel(name: &str, params: Vec<Param>, statements: Vec<Statement>) -> Function {
        function(true, name, vec![], params, Some(body(statements)))
    }
    fn var(
        space: StateSpace,
        ty: ScalarType,
        name: &str,
        dims: Vec<Option<u64>>,
        init: Vec<i64>,
    ) -> Variable {
        Variable {
            space,
            external: false,
            linkage: None,
            align: Some(4),
            ty,
            name: name.into(),
            dims,
            init,
            init_symbols: vec![],
            span: span(3),
        }
    }
    fn module(variables: Vec<Variable>, functions: Vec<Function>) -> Module {
        Module {
            version: Some("8.5".into()),
            target: Some("sm_90".into()),
            address_size: Some(64),
            files: vec![],
            variables,
            functions,
        }
    }
    fn program() -> Program {
        Program {
            arch: Arch::Ptx,
            name: "t".into(),
            description: None,
            locations: vec![],
            arrays: vec![],
            threads: vec![],
            condition: Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::True,
                span: None,
            },
            extra_observables: vec![],
        }
    }
    fn launch(kernel: &str, grid: [u32; 3], block: [u32; 3], args: Vec<Arg>) -> Launch {
        Launch {
            kernel: kernel.into(),
            grid,
            block,
            cluster: [1, 1, 1],
            gpu: 0,
            args,
            first_thread: 0,
            shared_bytes: 0,
        }
    }
    /// The program of a one-thread launch of a kernel `k` without parameters.
    pub(super) fn one_thread(variables: Vec<Variable>, statements: Vec<Statement>) -> Program {
        let m = module(variables, vec![kernel("k", vec![], statements)]);
        let mut p = program();
        lower(&m, &launch("k", [1, 1, 1], [1, 1, 1], vec![]), &mut p).expect("lowers");
        p
    }
    fn lower_err(m: &Module, l: &Launch) -> LowerError {
        lower(m, l, &mut program()).expect_err("does not lower")
    }
    pub(super) fn one_thread_err(statements: Vec<Statement>) -> LowerError {
        let m = module(vec![], vec![kernel("k", vec![], statements)]);
        lower_err(&m, &launch("k", [1, 1, 1], [1, 1, 1], vec![]))
    }

    // ---- a tiny evaluator of the generated code ----

    /// Runs thread `t` alone: registers, branches, loads of what it stored or else of the
    /// initial values; returns the final registers and the stores made, in order (location
    /// and value).
    pub(super) fn run(p: &Program, t: &Thread) -> (Vec<Value>, Vec<(LocId, Value)>) {
        let mut regs = vec![0; t.registers.len()];
        let mut stores: Vec<(LocId, Value)> = vec![];
        let mut pc = 0;
        let mut steps = 0;
        let loc = |regs: &[Value], a: &Address, ty: IntType| match *a {
            Address::Ptr { reg, disp } => p
                .resolve(regs[reg.0 as usize].wrapping_add(disp), ty)
                .unwrap_or_else(|f| panic!("{}", f.0)),
            Address::Loc { loc, index: None } => loc,
            Address::Loc { .. } => panic!("an indexed address"),
        };
        while pc < t.code.len() {
            steps += 1;
            assert!(steps < 10_000, "runs too long");
            let val = |regs: &[Value], o: &Operand| match *o {
                Operand::Reg(r) => regs[r.0 as usize],
                Operand::Imm(v) => v,
            };
            match &t.code[pc].kind {
                InstrKind::Mov { dst, src } => regs[dst.0 as usize] = val(&regs, src),
                InstrKind::Binary { dst, op, ty, a, b } => {
                    regs[dst.0 as usize] = op
                        .eval(*ty, Arithmetic::Ptx, val(&regs, a), val(&regs, b))
                        .expect("defined")
                }
                InstrKind::Fma {
                    dst,
                    ty,
                    mode,
                    a,
                    b,
                    c,
                } => {
                    let [a, b, c] = [a, b, c].map(|o| val(&regs, o));
                    regs[dst.0 as usize] =
                        scopecheck_ir::float::fma(*ty, *mode, a, b, c).expect("defined")
                }
                InstrKind::Branch { cond, target } => {
                    let taken = match cond {
                        BranchCond::Always => true,
                        BranchCond::Eq(a, b) => val(&regs, a) == val(&regs, b),
                        BranchCond::Ne(a, b) => val(&regs, a) != val(&regs, b),
                    };
                    if taken {
                        pc = *target;
                        continue;
                    }
                }
                InstrKind::Load { dst, addr, ty, .. } => {
                    let l = loc(&regs, addr, *ty);
                    let last = stores.iter().rev().find(|s| s.0 == l);
                    regs[dst.0 as usize] = ty.wrap(last.map_or(p.location(l).init, |s| s.1));
                }
                InstrKind::Store {
                    addr, value, ty, ..
                } => {
                    let l = loc(&regs, addr, *ty);
                    stores.push((l, ty.wrap(val(&regs, value))));
                }
                _ => {}
            }
            pc += 1;
        }
        (regs, stores)
    }

    /// The final value of register `name` of thread `t`, as `ty` reads it.
    pub(super) fn value(p: &Program, t: usize, name: &str, ty: IntType) -> i128 {
        let th = &p.threads[t];
        let (regs, _) = run(p, th);
        let reg = th.reg(name).unwrap_or_else(|| panic!("no register {name}"));
        ty.exact(ty.wrap(regs[reg.0 as usize]))
    }

    fn kinds(p: &Program, t: usize) -> Vec<&InstrKind> {
        p.threads[t].code.iter().map(|i| &i.kind).collect()
    }

    fn reg_of(p: &Program, t: usize, name: &str) -> RegId {
        p.threads[t].reg(name).unwrap()
    }

    // ---- tests ----

    #[test]
    fn a_store_through_a_pointer_parameter_goes_where_the_pointer_says() {
        let m = module(
            vec![],
            vec![kernel(
                "_Z5storePj",
                vec![param("_Z5storePj_param_0", ScalarType::U(64))],
                vec![
                    i(
                        10,
                        "ld.param.u64",
                        vec![r("%rd1"), at(sym("_Z5storePj_param_0"), 0)],
                    ),
                    i(11, "cvta.to.global.u64", vec![r("%rd2"), r("%rd1")]),
                    i(12, "mov.u32", vec![r("%r1"), r("%tid.x")]),
                    i(13, "mul.wide.u32", vec![r("%rd3"), r("%r1"), imm(4)]),
                    i(14, "add.s64", vec![r("%rd4"), r("%rd2"), r("%rd3")]),
                    i(15, "st.global.u32", vec![at(r("%rd4"), 4), imm(7)]),
                ],
            )],
        );
        let mut p = program();
        // The harness's array `a` of four unsigned ints.
        for k in 0..4 {
            p.locations.push(Location {
                name: format!("a[{k}]"),
                space: MemorySpace::Global,
                init: 0,
                ty: IntType::U32,
                span: None,
            });
        }
        p.arrays.push(scopecheck_ir::Array {
            name: "a".into(),
            first: LocId(0),
            len: 4,
        });
        let l = launch("store", [1, 1, 1], [2, 1, 1], vec![Arg::Pointer(LocId(0))]);
        let ids = lower(&m, &l, &mut p).unwrap();
        assert_eq!(ids, vec![ThreadId(0), ThreadId(1)]);
        assert_eq!(p.threads[1].name, "P1");
        let k = kinds(&p, 1);
        assert_eq!(
            k[0],
            &InstrKind::Mov {
                dst: reg_of(&p, 1, "%rd1"),
                src: Operand::Imm(p.address_of(LocId(0))),
            }
        );
        let store = p.threads[1].code.last().unwrap();
        assert_eq!(
            store.kind,
            InstrKind::Store {
                addr: Address::Ptr {
                    reg: reg_of(&p, 1, "%rd4"),
                    disp: 4
                },
                value: Operand::Imm(7),
                ty: IntType::U32,
                order: Order::Weak,
                scope: Scope::Sys,
            }
        );
        assert_eq!(store.text, "st.global.u32 [%rd4+4], 7");
        assert_eq!(store.span, span(15));
        // Thread 1 writes a[1 + 1]; thread 0 a[1].
        assert_eq!(run(&p, &p.threads[1]).1, vec![(LocId(2), 7)]);
        assert_eq!(run(&p, &p.threads[0]).1, vec![(LocId(1), 7)]);
    }

    /// A struct passed by value (`.param .b8 p[16]`): `ld.param` at each field's offset reads
    /// that field of the argument; a read where the struct has no field is an error.
    #[test]
    fn struct_parameters_are_read_at_their_fields_offsets() {
        let mut s = param("_Z1k1S_param_0", ScalarType::B(8));
        s.array = Some(16);
        let body = |off: i64| {
            vec![
                i(
                    1,
                    "ld.param.u64",
                    vec![r("%rd1"), at(sym("_Z1k1S_param_0"), 0)],
                ),
                i(
                    2,
                    "ld.param.u32",
                    vec![r("%r1"), at(sym("_Z1k1S_param_0"), off)],
                ),
                i(3, "cvta.to.global.u64", vec![r("%rd2"), r("%rd1")]),
                i(4, "st.global.u32", vec![at(r("%rd2"), 0), r("%r1")]),
            ]
        };
        let m = module(vec![], vec![kernel("_Z1k1S", vec![s.clone()], body(8))]);
        let mut p = program();
        p.locations.push(Location {
            name: "out".into(),
            space: MemorySpace::Global,
            init: 0,
            ty: IntType::U32,
            span: None,
        });
        p.arrays.push(scopecheck_ir::Array {
            name: "out".into(),
            first: LocId(0),
            len: 1,
        });
        // struct S { unsigned *out; unsigned n; } with n = 5: out at byte 0, n at byte 8.
        let arg = Arg::Struct(vec![(0, Arg::Pointer(LocId(0))), (8, Arg::Value(5))]);
        let l = launch("k", [1; 3], [1; 3], vec![arg]);
        lower(&m, &l, &mut p).unwrap();
        let k = kinds(&p, 0);
        assert_eq!(
            k[0],
            &InstrKind::Mov {
                dst: reg_of(&p, 0, "%rd1"),
                src: Operand::Imm(p.address_of(LocId(0))),
            }
        );
        assert_eq!(
            k[1],
            &InstrKind::Mov {
                dst: reg_of(&p, 0, "%r1"),
                src: Operand::Imm(5),
            }
        );
        // Byte 4 is padding: no field there (the pointer field is a number here: lower_err's
        // program has no locations).
        let m = module(vec![], vec![kernel("_Z1k1S", vec![s], body(4))]);
        let arg = Arg::Struct(vec![(0, Arg::Value(0)), (8, Arg::Value(5))]);
        let e = lower_err(&m, &launch("k", [1; 3], [1; 3], vec![arg]));
        assert!(e.message.contains("has no field"), "{}", e.message);
    }

    #[test]
    fn bfi_inserts_a_field_as_nvrtc_packs_two_halves() {
        // NVRTC's `((uint64_t)hi << 32) | lo`: bfi.b64 d, hi, lo, 32, 32; and an 8-bit field.
        let p = one_thread(
            vec![],
            vec![
                i(1, "mov.u64", vec![r("%rd1"), imm(0x1234_5678)]),
                i(2, "mov.u64", vec![r("%rd2"), imm(0xdead_beef)]),
                i(
                    3,
                    "bfi.b64",
                    vec![r("%rd3"), r("%rd2"), r("%rd1"), imm(32), imm(32)],
                ),
                i(4, "mov.u32", vec![r("%r1"), imm(0xffff_ffff)]),
                i(
                    5,
                    "bfi.b32",
                    vec![r("%r2"), imm(0x5a), r("%r1"), imm(8), imm(8)],
                ),
                // A field past the msb leaves b as it is.
                i(
                    6,
                    "bfi.b32",
                    vec![r("%r3"), imm(1), r("%r1"), imm(40), imm(4)],
                ),
            ],
        );
        let v = |name: &str, ty: IntType| value(&p, 0, name, ty);
        assert_eq!(v("%rd3", IntType::U64), 0xdead_beef_1234_5678);
        assert_eq!(v("%r2", IntType::U32), 0xffff_5aff);
        assert_eq!(v("%r3", IntType::U32), 0xffff_ffff);
    }

    #[test]
    fn register_arithmetic_extends_and_compares_as_its_types_say() {
        let p = one_thread(
            vec![],
            vec![
                i(1, "mov.u32", vec![r("%r1"), imm(-1)]),
                i(2, "mov.u32", vec![r("%r2"), imm(4)]),
                i(3, "mul.wide.s32", vec![r("%rd1"), r("%r1"), r("%r2")]),
                i(4, "mul.wide.u32", vec![r("%rd2"), r("%r1"), r("%r2")]),
                i(5, "cvt.u64.u32", vec![r("%rd3"), r("%r1")]),
                i(6, "cvt.s64.s32", vec![r("%rd4"), r("%r1")]),
                i(7, "setp.lt.u32", vec![r("%p1"), r("%r1"), imm(1)]),
                i(8, "setp.lt.s32", vec![r("%p2"), r("%r1"), imm(1)]),
                i(9, "selp.b32", vec![r("%r3"), imm(10), imm(20), r("%p2")]),
                i(10, "selp.b32", vec![r("%r4"), imm(10), imm(20), r("%p1")]),
                i(11, "min.s32", vec![r("%r5"), r("%r1"), r("%r2")]),
                i(12, "min.u32", vec![r("%r6"), r("%r1"), r("%r2")]),
                i(13, "max.s32", vec![r("%r7"), r("%r1"), r("%r2")]),
                i(14, "abs.s32", vec![r("%r8"), r("%r1")]),
                i(15, "neg.s32", vec![r("%r9"), r("%r2")]),
                i(16, "not.b32", vec![r("%r10"), r("%r2")]),
                i(17, "shr.s32", vec![r("%r11"), r("%r1"), imm(4)]),
                i(18, "shr.u32", vec![r("%r12"), r("%r1"), imm(28)]),
                i(19, "mul.hi.u32", vec![r("%r13"), r("%r1"), r("%r2")]),
                i(20, "mul.hi.s32", vec![r("%r14"), r("%r1"), r("%r2")]),
                i(
                    21,
                    "mad.lo.s32",
                    vec![r("%r15"), r("%r2"), r("%r2"), imm(1)],
                ),
                i(22, "mov.b64", vec![r("%rd5"), vector(&["%r2", "%r1"])]),
                i(23, "mov.b64", vec![vector(&["%r16", "%r17"]), r("%rd5")]),
                i(
                    24,
                    "setp.ne.and.s32",
                    vec![r("%p3"), r("%r2"), imm(0), r("%p1")],
                ),
                i(
                    25,
                    "setp.gt.s32",
                    vec![r("%p4"), r("%p5"), r("%r2"), r("%r1")],
                ),
                i(26, "cvt.u32.u64", vec![r("%r18"), r("%rd2")]),
                i(27, "mov.u32", vec![r("%r19"), imm(17)]),
                i(28, "mov.u16", vec![r("%rs1"), imm(1)]),
                i(29, "shl.b16", vec![r("%rs2"), r("%rs1"), r("%r19")]),
                i(
                    30,
                    "mad.wide.s32",
                    vec![r("%rd6"), r("%r1"), r("%r2"), r("%rd3")],
                ),
                i(31, "cvt.s32.s16", vec![r("%r0"), r("%rs1")]),
                i(
                    32,
                    "and.pred",
                    vec![r("%p6"), r("%p2"), Op::Not(Box::new(r("%p1")))],
                ),
                i(33, "div.s32", vec![r("%r0"), imm(-7), r("%r2")]),
                i(34, "rem.u32", vec![r("%r16"), r("%r1"), imm(10)]),
            ],
        );
        let v = |name: &str, ty: IntType| value(&p, 0, name, ty);
        let (s32, u32_, s64, u64_) = (IntType::S32, IntType::U32, IntType::S64, IntType::U64);
        assert_eq!(v("%rd1", s64), -4, "mul.wide.s32 -1 * 4");
        assert_eq!(v("%rd2", u64_), 0x3_ffff_fffc, "mul.wide.u32");
        assert_eq!(v("%rd3", u64_), 4_294_967_295, "cvt.u64.u32 zero-extends");
        assert_eq!(v("%rd4", s64), -1, "cvt.s64.s32 sign-extends");
        assert_eq!(v("%p1", u32_), 0, "0xffffffff < 1 unsigned");
        assert_eq!(v("%p2", u32_), 1, "-1 < 1 signed");
        assert_eq!(v("%r3", u32_), 10);
        assert_eq!(v("%r4", u32_), 20);
        assert_eq!(v("%r5", s32), -1);
        assert_eq!(v("%r6", u32_), 4);
        assert_eq!(v("%r7", s32), 4);
        assert_eq!(v("%r8", s32), 1);
        assert_eq!(v("%r9", s32), -4);
        assert_eq!(v("%r10", u32_), 0xffff_fffb);
        assert_eq!(v("%r11", s32), -1);
        assert_eq!(v("%r12", u32_), 15);
        assert_eq!(v("%r13", u32_), 3, "high half of 0xffffffff * 4");
        assert_eq!(v("%r14", s32), -1, "high half of -4");
        assert_eq!(v("%r15", s32), 17);
        assert_eq!(
            v("%rd5", u64_),
            0xffff_ffff_0000_0004,
            "packing: first is low"
        );
        assert_eq!(v("%r17", u32_), 0xffff_ffff);
        assert_eq!(v("%p3", u32_), 0, "4 != 0 and false");
        assert_eq!((v("%p4", u32_), v("%p5", u32_)), (1, 0), "p|q");
        assert_eq!(v("%r18", u32_), 0xffff_fffc, "cvt.u32.u64 truncates");
        assert_eq!(v("%rs2", IntType::U16), 0, "a 16-bit shift by 17 clamps");
        assert_eq!(v("%rd6", s64), 4_294_967_295 - 4, "mad.wide.s32");
        assert_eq!(v("%p6", u32_), 1);
        assert_eq!(v("%r0", s32), -1, "-7 / 4 truncates");
        assert_eq!(v("%r16", u32_), 5, "4294967295 % 10");
    }

    #[test]
    fn special_registers_are_the_threads_constants() {
        let stmts = vec![
            i(1, "mov.u32", vec![r("%r1"), r("%tid.x")]),
            i(2, "mov.u32", vec![r("%r2"), r("%tid.y")]),
            i(3, "mov.u32", vec![r("%r3"), r("%ctaid.x")]),
            i(4, "mov.u32", vec![r("%r4"), r("%laneid")]),
            i(5, "mov.u32", vec![r("%r5"), r("%ntid.y")]),
            i(6, "mov.u32", vec![r("%r6"), r("%nctaid.x")]),
            i(7, "mov.u32", vec![r("%r7"), r("%cluster_ctarank")]),
            i(8, "mov.u32", vec![r("%r8"), r("%clusterid.x")]),
            i(9, "mov.u32", vec![r("%r9"), r("%warpid")]),
        ];
        let m = module(vec![], vec![kernel("k", vec![], stmts)]);
        let mut p = program();
        let mut l = launch("k", [3, 1, 1], [4, 2, 1], vec![]);
        l.first_thread = 10;
        let ids = lower(&m, &l, &mut p).unwrap();
        assert_eq!(ids.len(), 24);
        // Thread 5 of block 2: block-major numbering, x fastest.
        let t = 2 * 8 + 5;
        assert_eq!(p.threads[t].name, "P31");
        let consts: Vec<Value> = kinds(&p, t)
            .iter()
            .map(|k| match k {
                InstrKind::Mov {
                    src: Operand::Imm(v),
                    ..
                } => *v,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(consts, vec![1, 1, 2, 5, 2, 3, 0, 2, 0]);
        assert_eq!(
            p.threads[t].placement,
            Placement::Device(DevicePlacement {
                gpu: 0,
                cluster: 2,
                cta: 2,
                warp: Some(0)
            })
        );
        // Clusters of 3 CTAs: one cluster, CTA 2 of it.
        let mut p = program();
        l.cluster = [3, 1, 1];
        lower(&m, &l, &mut p).unwrap();
        let Placement::Device(d) = p.threads[t].placement else {
            panic!()
        };
        assert_eq!((d.cluster, d.cta), (0, 2));
        assert!(matches!(
            kinds(&p, t)[6],
            InstrKind::Mov {
                src: Operand::Imm(2),
                ..
            }
        ));
        l.cluster = [2, 1, 1];
        assert!(lower_err(&m, &l)
            .message
            .contains("whole number of clusters"));
    }

    #[test]
    fn shared_variables_are_one_per_cta_and_globals_one_per_program() {
        let vars = vec![
            var(
                StateSpace::Shared,
                ScalarType::U(32),
                "flag",
                vec![],
                vec![],
            ),
            var(
                StateSpace::Global,
                ScalarType::U(32),
                "counter",
                vec![],
                vec![],
            ),
            var(
                StateSpace::Global,
                ScalarType::B(8),
                "table",
                vec![Some(16)],
                vec![1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0],
            ),
            // Not used by the kernel: no locations.
            var(
                StateSpace::Global,
                ScalarType::U(32),
                "unused",
                vec![],
                vec![],
            ),
        ];
        let stmts = vec![
            i(1, "st.shared.u32", vec![at(sym("flag"), 0), imm(1)]),
            i(2, "ld.global.u32", vec![r("%r1"), at(sym("table"), 8)]),
            i(
                3,
                "atom.global.add.u32",
                vec![r("%r2"), at(sym("counter"), 0), imm(1)],
            ),
            i(4, "mov.u64", vec![r("%rd1"), sym("table")]),
            i(5, "ld.global.s32", vec![r("%r3"), at(r("%rd1"), 12)]),
        ];
        let m = module(vars, vec![kernel("k", vec![], stmts)]);
        let mut p = program();
        // The harness made `counter` already.
        p.locations.push(Location {
            name: "counter".into(),
            space: MemorySpace::Global,
            init: 5,
            ty: IntType::U32,
            span: None,
        });
        lower(&m, &launch("k", [2, 1, 1], [1, 1, 1], vec![]), &mut p).unwrap();
        let names: Vec<&str> = p.locations.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "counter",
                "table[0]",
                "table[1]",
                "table[2]",
                "table[3]",
                "flag@cta0",
                "flag@cta1"
            ]
        );
        let table: Vec<(IntType, Value)> =
            p.locations[1..5].iter().map(|l| (l.ty, l.init)).collect();
        assert_eq!(
            table,
            [
                (IntType::U32, 1),
                (IntType::U32, 2),
                (IntType::U32, 0xffff_ffff),
                (IntType::U32, 4)
            ]
        );
        assert_eq!(p.locations[5].space, MemorySpace::Shared);
        assert_eq!(p.arrays.len(), 1);
        for t in 0..2 {
            let k = kinds(&p, t);
            assert_eq!(k[0].address(), Some(&Address::loc(LocId(5 + t as u32))));
            assert_eq!(k[1].address(), Some(&Address::loc(LocId(3))));
            assert!(matches!(
                k[2],
                InstrKind::Rmw {
                    addr,
                    kind: RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
                    order: Order::Relaxed,
                    scope: Scope::Gpu,
                    ..
                } if *addr == Address::loc(LocId(0))
            ));
        }
        assert_eq!(value(&p, 1, "%r3", IntType::S32), 4);
        assert_eq!(value(&p, 1, "%r1", IntType::S32), -1);
    }

    #[test]
    fn vector_accesses_are_consecutive_elements_in_order() {
        let p = one_thread(
            vec![],
            vec![
                i(
                    1,
                    "ld.global.v4.u32",
                    vec![vector(&["%r1", "%r2", "%r3", "%r4"]), at(r("%rd1"), 16)],
                ),
                i(
                    2,
                    "st.global.v2.u64",
                    vec![at(r("%rd1"), 0), vector(&["%rd2", "%rd3"])],
                ),
            ],
        );
        let k = kinds(&p, 0);
        assert_eq!(k.len(), 6);
        for (n, disp) in [16, 20, 24, 28].into_iter().enumerate() {
            let InstrKind::Load { dst, addr, ty, .. } = k[n] else {
                panic!("{:?}", k[n])
            };
            assert_eq!(*dst, reg_of(&p, 0, &format!("%r{}", n + 1)));
            assert_eq!(*ty, IntType::U32);
            assert!(matches!(addr, Address::Ptr { disp: d, .. } if *d == disp));
        }
        assert!(matches!(
            k[5],
            InstrKind::Store {
                addr: Address::Ptr { disp: 8, .. },
                ty: IntType::U64,
                ..
            }
        ));
    }

    #[test]
    fn guards_branch_around_their_instruction() {
        let p = one_thread(
            vec![],
            vec![
                i(1, "setp.eq.u32", vec![r("%p1"), r("%tid.x"), imm(0)]),
                guarded(
                    "%p1",
                    false,
                    i(2, "st.global.u32", vec![at(r("%rd1"), 0), imm(1)]),
                ),
                guarded("%p1", true, i(3, "bra.uni", vec![sym("$L__BB0_2")])),
                i(4, "mov.u32", vec![r("%r1"), imm(5)]),
                guarded("%p2", false, i(5, "ret", vec![])),
                label("$L__BB0_2"),
                i(6, "mov.u32", vec![r("%r2"), imm(6)]),
            ],
        );
        let p1 = Operand::Reg(reg_of(&p, 0, "%p1"));
        let p2 = Operand::Reg(reg_of(&p, 0, "%p2"));
        let k = kinds(&p, 0);
        assert_eq!(
            k[1],
            &InstrKind::Branch {
                cond: BranchCond::Eq(p1, Operand::Imm(0)),
                target: 3
            }
        );
        assert!(matches!(k[2], InstrKind::Store { .. }));
        assert_eq!(
            k[3],
            &InstrKind::Branch {
                cond: BranchCond::Eq(p1, Operand::Imm(0)),
                target: 6
            }
        );
        assert_eq!(
            k[5],
            &InstrKind::Branch {
                cond: BranchCond::Ne(p2, Operand::Imm(0)),
                target: 7
            }
        );
        assert_eq!(k.len(), 7);
        assert_eq!(p.threads[0].code[3].text, "@!%p1 bra.uni $L__BB0_2");
    }

    #[test]
    fn a_call_is_inlined_with_its_parameters_and_result() {
        let add = function(
            false,
            "_Z3addii",
            vec![param("func_retval0", ScalarType::B(32))],
            vec![
                param("_Z3addii_param_0", ScalarType::B(32)),
                param("_Z3addii_param_1", ScalarType::B(32)),
            ],
            Some(body(vec![
                i(
                    20,
                    "ld.param.u32",
                    vec![r("%r1"), at(sym("_Z3addii_param_0"), 0)],
                ),
                i(
                    21,
                    "ld.param.u32",
                    vec![r("%r2"), at(sym("_Z3addii_param_1"), 0)],
                ),
                i(22, "add.s32", vec![r("%r3"), r("%r1"), r("%r2")]),
                i(
                    23,
                    "st.param.b32",
                    vec![at(sym("func_retval0"), 0), r("%r3")],
                ),
                i(24, "ret", vec![]),
                i(25, "mov.u32", vec![r("%r3"), imm(99)]),
            ])),
        );
        let printf = function(
            false,
            "vprintf",
            vec![param("r", ScalarType::B(32))],
            vec![param("a", ScalarType::B(64)), param("b", ScalarType::B(64))],
            None,
        );
        let slot = |n: &str| var(StateSpace::Param, ScalarType::B(32), n, vec![], vec![]);
        let k = kernel(
            "k",
            vec![],
            vec![
                i(1, "mov.u32", vec![r("%r1"), imm(40)]),
                block(
                    vec![slot("param0"), slot("param1"), slot("retval0")],
                    vec![
                        i(2, "st.param.b32", vec![at(sym("param0"), 0), r("%r1")]),
                        i(3, "st.param.b32", vec![at(sym("param1"), 0), imm(2)]),
                        i(
                            4,
                            "call.uni",
                            vec![
                                list(&["retval0"]),
                                sym("_Z3addii"),
                                list(&["param0", "param1"]),
                            ],
                        ),
                        i(5, "ld.param.b32", vec![r("%r2"), at(sym("retval0"), 0)]),
                    ],
                ),
                i(6, "add.s32", vec![r("%r3"), r("%r2"), imm(1)]),
                block(
                    vec![slot("param0"), slot("param1"), slot("retval0")],
                    vec![i(
                        7,
                        "call.uni",
                        vec![
                            list(&["retval0"]),
                            sym("vprintf"),
                            list(&["param0", "param1"]),
                        ],
                    )],
                ),
            ],
        );
        let m = module(vec![], vec![add.clone(), printf, k]);
        let mut p = program();
        lower(&m, &launch("k", [1, 1, 1], [1, 1, 1], vec![]), &mut p).unwrap();
        assert_eq!(value(&p, 0, "%r2", IntType::S32), 42);
        assert_eq!(value(&p, 0, "%r3", IntType::S32), 43);
        // The callee's registers are its own.
        assert!(p.threads[0].reg("%r3@_Z3addii#1").is_some());
        // Another extern function is refused, by name; recursion too.
        let malloc = function(false, "malloc", vec![], vec![], None);
        let k = kernel(
            "k",
            vec![],
            vec![i(9, "call.uni", vec![sym("malloc"), Op::List(vec![])])],
        );
        let e = lower_err(
            &module(vec![], vec![malloc, k]),
            &launch("k", [1; 3], [1; 3], vec![]),
        );
        assert!(e.message.contains("`malloc`"), "{}", e.message);
        assert_eq!(e.span, span(9));
        let rec = function(
            false,
            "f",
            vec![],
            vec![],
            Some(body(vec![i(30, "call", vec![sym("f")])])),
        );
        let k = kernel("k", vec![], vec![i(9, "call", vec![sym("f")])]);
        let e = lower_err(
            &module(vec![], vec![rec, k]),
            &launch("k", [1; 3], [1; 3], vec![]),
        );
        assert!(e.message.contains("recursive"), "{}", e.message);
        assert_eq!(e.span, span(30));
    }

    #[test]
    fn fences_barriers_and_atomics_map_as_the_litmus_dialect_does() {
        let p = one_thread(
            vec![],
            vec![
                i(1, "fence.sc.gpu", vec![]),
                i(2, "fence.acq_rel.cta", vec![]),
                i(3, "membar.gl", vec![]),
                i(4, "bar.sync", vec![imm(0)]),
                i(5, "barrier.sync.aligned", vec![imm(1), imm(64)]),
                i(6, "bar.arrive", vec![imm(2), imm(32)]),
                i(7, "bar.red.popc.u32", vec![r("%r1"), imm(3), r("%p1")]),
                i(
                    8,
                    "ld.acquire.gpu.global.u32",
                    vec![r("%r2"), at(r("%rd1"), 0)],
                ),
                i(
                    9,
                    "st.release.sys.global.u32",
                    vec![at(r("%rd1"), 0), r("%r2")],
                ),
                i(
                    10,
                    "ld.volatile.global.L1::no_allocate.u32",
                    vec![r("%r2"), at(r("%rd1"), 0)],
                ),
                i(
                    11,
                    "atom.acq_rel.gpu.global.cas.b32",
                    vec![r("%r3"), at(r("%rd1"), 0), imm(0), imm(1)],
                ),
                i(
                    12,
                    "red.release.cta.shared.add.u64",
                    vec![at(r("%rd1"), 8), imm(1)],
                ),
                i(13, "nanosleep.u32", vec![imm(100)]),
                i(
                    14,
                    "ld.global.nc.v2.u32",
                    vec![vector(&["%r4", "%r5"]), at(r("%rd1"), 0)],
                ),
                i(
                    15,
                    "st.global.L2::cache_hint.u32",
                    vec![at(r("%rd1"), 0), imm(1), r("%rd9")],
                ),
            ],
        );
        let k = kinds(&p, 0);
        let fence = |order, scope| InstrKind::Fence {
            order,
            scope,
            spaces: FenceSpaces::ALL,
        };
        assert_eq!(k[0], &fence(FenceOrder::Sc, Scope::Gpu));
        assert_eq!(k[1], &fence(FenceOrder::AcqRel, Scope::Cta));
        assert_eq!(k[2], &fence(FenceOrder::Sc, Scope::Gpu));
        assert_eq!(
            k[3],
            &InstrKind::Barrier {
                id: Operand::Imm(0),
                kind: BarrierKind::Sync,
                count: None,
                spaces: scopecheck_ir::FenceSpaces::ALL,
            }
        );
        assert_eq!(
            k[4],
            &InstrKind::Barrier {
                id: Operand::Imm(1),
                kind: BarrierKind::Sync,
                count: Some(Operand::Imm(64)),
                spaces: scopecheck_ir::FenceSpaces::ALL,
            }
        );
        assert_eq!(
            k[5],
            &InstrKind::Barrier {
                id: Operand::Imm(2),
                kind: BarrierKind::Arrive,
                count: Some(Operand::Imm(32)),
                spaces: scopecheck_ir::FenceSpaces::ALL,
            }
        );
        assert!(matches!(
            k[6],
            InstrKind::Barrier {
                id: Operand::Imm(3),
                kind: BarrierKind::Red {
                    op: BarrierRedOp::Popc,
                    ..
                },
                count: None,
                spaces: scopecheck_ir::FenceSpaces::ALL,
            }
        ));
        assert!(matches!(
            k[7],
            InstrKind::Load {
                order: Order::Acquire,
                scope: Scope::Gpu,
                ..
            }
        ));
        assert!(matches!(
            k[8],
            InstrKind::Store {
                order: Order::Release,
                scope: Scope::Sys,
                ..
            }
        ));
        assert!(matches!(
            k[9],
            InstrKind::Load {
                order: Order::Relaxed,
                scope: Scope::Sys,
                ..
            }
        ));
        assert!(matches!(
            k[10],
            InstrKind::Rmw {
                dst: Some(_),
                kind: RmwKind::Cas {
                    expected: Operand::Imm(0),
                    new: Operand::Imm(1)
                },
                ty: IntType::U32,
                order: Order::AcqRel,
                scope: Scope::Gpu,
                ..
            }
        ));
        assert!(matches!(
            k[11],
            InstrKind::Rmw {
                dst: None,
                ty: IntType::U64,
                order: Order::Release,
                scope: Scope::Cta,
                ..
            }
        ));
        assert!(matches!(
            k[12],
            InstrKind::Load {
                order: Order::Weak,
                ..
            }
        ));
        assert!(matches!(
            k[14],
            InstrKind::Store {
                value: Operand::Imm(1),
                ..
            }
        ));
        assert_eq!(k.len(), 15, "nanosleep emits nothing");
    }

    #[test]
    fn addresses_in_32_bit_registers_keep_their_allocation() {
        // `mov.u32 %r1, smem` and 32-bit arithmetic on it, as nvcc writes shared indexing.
        let p = {
            let m = module(
                vec![
                    var(
                        StateSpace::Shared,
                        ScalarType::B(8),
                        "smem",
                        vec![Some(64)],
                        vec![],
                    ),
                    var(
                        StateSpace::Shared,
                        ScalarType::U(32),
                        "other",
                        vec![Some(2)],
                        vec![],
                    ),
                ],
                vec![kernel(
                    "k",
                    vec![],
                    vec![
                        i(1, "mov.u32", vec![r("%r1"), sym("smem")]),
                        i(2, "mov.u32", vec![r("%r2"), r("%tid.x")]),
                        i(3, "shl.b32", vec![r("%r3"), r("%r2"), imm(2)]),
                        i(4, "add.s32", vec![r("%r4"), r("%r1"), r("%r3")]),
                        i(5, "st.shared.u32", vec![at(r("%r4"), 4), r("%r2")]),
                        i(6, "cvt.u64.u32", vec![r("%rd1"), r("%r4")]),
                        i(7, "cvta.shared.u64", vec![r("%rd2"), r("%rd1")]),
                        i(8, "st.u32", vec![at(r("%rd2"), 0), imm(9)]),
                        // `p ? other : smem`, then back to a 32-bit shared address.
                        i(9, "mov.u32", vec![r("%r5"), sym("other")]),
                        i(10, "setp.eq.u32", vec![r("%p1"), r("%r2"), imm(2)]),
                        i(11, "selp.b32", vec![r("%r6"), r("%r5"), r("%r1"), r("%p1")]),
                        i(12, "cvta.shared.u64", vec![r("%rd3"), r("%r6")]),
                        i(13, "cvta.to.shared.u32", vec![r("%r7"), r("%rd3")]),
                        i(14, "add.s32", vec![r("%r8"), r("%r7"), imm(4)]),
                        i(15, "st.shared.u32", vec![at(r("%r8"), 0), imm(1)]),
                    ],
                )],
            );
            let mut p = program();
            lower(&m, &launch("k", [1, 1, 1], [3, 1, 1], vec![]), &mut p).unwrap();
            p
        };
        // The byte array takes the width of its accesses: 16 words.
        assert_eq!(p.arrays[0].len, 16);
        assert_eq!(p.arrays[0].name, "smem@cta0");
        let other = p.arrays[1].first;
        assert_eq!(p.arrays[1].name, "other@cta0");
        assert_eq!(
            run(&p, &p.threads[2]).1,
            vec![(LocId(3), 2), (LocId(2), 9), (LocId(other.0 + 1), 1)]
        );
        assert_eq!(run(&p, &p.threads[1]).1[2], (LocId(1), 1));
    }

    #[test]
    fn pointer_globals_and_local_depots() {
        let x = var(StateSpace::Global, ScalarType::U(32), "x", vec![], vec![3]);
        let mut px = var(StateSpace::Global, ScalarType::U(64), "px", vec![], vec![0]);
        px.init_symbols = vec![crate::ast::SymbolInit {
            index: 0,
            symbol: "x".into(),
            offset: 0,
            generic: true,
        }];
        let depot = var(
            StateSpace::Local,
            ScalarType::B(8),
            "__local_depot0",
            vec![Some(8)],
            vec![],
        );
        let mut k = kernel(
            "k",
            vec![],
            vec![
                i(1, "ld.global.u64", vec![r("%rd1"), at(sym("px"), 0)]),
                i(2, "ld.u32", vec![r("%r1"), at(r("%rd1"), 0)]),
                i(3, "mov.u64", vec![r("%rd2"), sym("__local_depot0")]),
                i(4, "cvta.local.u64", vec![r("%rd3"), r("%rd2")]),
                i(5, "st.u32", vec![at(r("%rd3"), 4), r("%r1")]),
                // A wider access to the private depot: split into its 32-bit words.
                i(6, "mov.u64", vec![r("%rd4"), imm(0x5_0000_0007)]),
                i(7, "st.local.u64", vec![at(r("%rd2"), 0), r("%rd4")]),
                i(8, "ld.local.u64", vec![r("%rd5"), at(r("%rd2"), 0)]),
            ],
        );
        k.body.as_mut().unwrap().locals.push(depot);
        let m = module(vec![px, x], vec![k]);
        let mut p = program();
        lower(&m, &launch("k", [1; 3], [2, 1, 1], vec![]), &mut p).unwrap();
        // `px` needs `x`, though the kernel names only `px`.
        assert_eq!(p.locations[0].name, "px");
        assert_eq!(p.locations[0].init, p.address_of(LocId(1)));
        assert_eq!(value(&p, 0, "%r1", IntType::U32), 3);
        // One depot per thread, of the width it is accessed with.
        assert_eq!(p.arrays[1].name, "__local_depot0@P1");
        assert_eq!(p.arrays[1].len, 2);
        let depot1 = p.arrays[1].first;
        let words = |k: u32| LocId(depot1.0 + k);
        assert_eq!(
            run(&p, &p.threads[1]).1,
            vec![(words(1), 3), (words(0), 7), (words(1), 5)]
        );
        assert_eq!(value(&p, 1, "%rd5", IntType::U64), 0x5_0000_0007);
    }

    #[test]
    fn kernels_are_found_by_mangled_or_base_name() {
        let m = module(
            vec![],
            vec![
                kernel("_Z8producerPi", vec![], vec![]),
                kernel("_ZN2ns8consumerEv", vec![], vec![]),
                kernel("_ZN3ns28consumerEv", vec![], vec![]),
            ],
        );
        for name in ["_Z8producerPi", "producer", "ns::consumer", "ns2::consumer"] {
            assert!(
                lower(&m, &launch(name, [1; 3], [1; 3], vec![]), &mut program()).is_ok(),
                "{name}"
            );
        }
        let e = lower_err(&m, &launch("consumer", [1; 3], [1; 3], vec![]));
        assert!(e.message.contains("several kernels"), "{}", e.message);
        let e = lower_err(&m, &launch("nope", [1; 3], [1; 3], vec![]));
        assert!(e.message.contains("no kernel `nope`"), "{}", e.message);
        let e = lower_err(&m, &launch("producer", [1; 3], [1; 3], vec![Arg::Value(1)]));
        assert!(e.message.contains("takes 0 parameter"), "{}", e.message);
    }

    #[test]
    fn warp_collectives_lower_to_the_ir_collective() {
        let p = one_thread(
            vec![],
            vec![
                i(1, "mov.u32", vec![r("%r1"), imm(5)]),
                i(
                    2,
                    "shfl.sync.down.b32",
                    vec![r("%r2"), r("%p1"), r("%r1"), imm(1), imm(31), imm(-1)],
                ),
                i(
                    3,
                    "shfl.sync.bfly.b32",
                    vec![r("%r3"), r("%r1"), imm(2), imm(4127), imm(3)],
                ),
                i(
                    4,
                    "vote.sync.ballot.b32",
                    vec![r("%r4"), Op::Not(Box::new(r("%p1"))), imm(-1)],
                ),
                i(5, "vote.sync.any.pred", vec![r("%p2"), r("%p1"), imm(-1)]),
                i(6, "bar.warp.sync", vec![imm(-1)]),
                i(7, "popc.b32", vec![r("%r5"), r("%r4")]),
                i(8, "activemask.b32", vec![r("%r6")]),
            ],
        );
        let t = &p.threads[0];
        let warp: Vec<&InstrKind> = t
            .code
            .iter()
            .map(|i| &i.kind)
            .filter(|k| matches!(k, InstrKind::Warp { .. }))
            .collect();
        let reg = |n: &str| Operand::Reg(reg_of(&p, 0, n));
        assert!(matches!(
            warp[0],
            InstrKind::Warp {
                op: WarpOp::Shfl {
                    mode: ShflMode::Down,
                    lane: Operand::Imm(1),
                    clamp: Operand::Imm(31)
                },
                mask: Operand::Imm(0xffff_ffff),
                dst: Some(_),
                pred_dst: Some(_),
                ..
            }
        ));
        // Without a predicate destination; the mask as written.
        assert!(matches!(
            warp[1],
            InstrKind::Warp {
                op: WarpOp::Shfl {
                    mode: ShflMode::Bfly,
                    ..
                },
                mask: Operand::Imm(3),
                pred_dst: None,
                ..
            }
        ));
        assert!(matches!(
            warp[2],
            InstrKind::Warp {
                op: WarpOp::Vote(VoteOp::Ballot),
                ..
            }
        ));
        assert!(
            matches!(warp[3], InstrKind::Warp { op: WarpOp::Vote(VoteOp::Any), value, .. } if *value == reg("%p1"))
        );
        assert!(matches!(
            warp[4],
            InstrKind::Warp {
                op: WarpOp::Sync,
                ..
            }
        ));
        assert_eq!(warp.len(), 6);
        assert!(matches!(
            warp[5],
            InstrKind::Warp {
                op: WarpOp::ActiveMask,
                dst: Some(d),
                ..
            } if Operand::Reg(*d) == reg("%r6")
        ));
        assert!(t.code.iter().any(|i| matches!(
            i.kind,
            InstrKind::Binary {
                op: BinOp::Popc,
                ..
            }
        )));
    }

    #[test]
    fn unsupported_instructions_are_errors_at_their_span() {
        let e = one_thread_err(vec![
            i(1, "mov.u32", vec![r("%r1"), imm(0)]),
            i(7, "prmt.b32", vec![r("%r1"), r("%r1"), r("%r1"), r("%r1")]),
        ]);
        assert!(e.message.contains("`prmt`"), "{}", e.message);
        assert_eq!((e.span, e.loc), (span(7), Some((1, 7, 5))));
        let e = one_thread_err(vec![i(
            8,
            "redux.sync.add.u32",
            vec![r("%r1"), r("%r1"), imm(-1)],
        )]);
        assert_eq!(e.message, "warp-collective `redux` is not supported yet");
        assert_eq!(e.span, span(8));
        let e = one_thread_err(vec![i(8, "activemask.u32", vec![r("%r1")])]);
        assert!(e.message.contains("`activemask.b32`"), "{}", e.message);
        // The pre-Volta forms without `.sync` name no lanes.
        let e = one_thread_err(vec![i(8, "vote.ballot.b32", vec![r("%r1"), imm(1)])]);
        assert!(e.message.contains("without `.sync`"), "{}", e.message);
        let e = one_thread_err(vec![i(9, "fence.proxy.async", vec![])]);
        assert!(e.message.contains("proxy"), "{}", e.message);
        let e = one_thread_err(vec![i(9, "add.f16", vec![r("%r1"), r("%r1"), r("%r1")])]);
        assert!(e.message.contains("half-precision"), "{}", e.message);
        let e = one_thread_err(vec![i(
            9,
            "ld.relaxed.global.u32",
            vec![r("%r1"), at(r("%rd1"), 0)],
        )]);
        assert!(e.message.contains("needs a scope"), "{}", e.message);
        let e = one_thread_err(vec![i(
            9,
            "mul.hi.u64",
            vec![r("%rd1"), r("%rd1"), r("%rd1")],
        )]);
        assert!(e.message.contains("not supported yet"), "{}", e.message);
        let e = one_thread_err(vec![i(9, "mov.u32", vec![r("%r1"), r("%clock")])]);
        assert!(e.message.contains("%clock"), "{}", e.message);
        let e = one_thread_err(vec![i(9, "mov.u32", vec![r("%r99"), imm(1)])]);
        assert!(e.message.contains("not declared"), "{}", e.message);
        let e = one_thread_err(vec![guarded("%r1", false, i(9, "exit", vec![]))]);
        assert!(e.message.contains("not a `.pred`"), "{}", e.message);
        // The program is left as it was.
        let m = module(
            vec![var(
                StateSpace::Global,
                ScalarType::U(32),
                "x",
                vec![],
                vec![],
            )],
            vec![kernel(
                "k",
                vec![],
                vec![
                    i(1, "st.global.u32", vec![at(sym("x"), 0), imm(1)]),
                    i(2, "prmt.b32", vec![r("%r1"), r("%r1"), r("%r1"), r("%r1")]),
                ],
            )],
        );
        let mut p = program();
        assert!(lower(&m, &launch("k", [1; 3], [1; 3], vec![]), &mut p).is_err());
        assert_eq!(p, program());
        // A struct passed by value: at the parameter.
        let mut s = param("_Z1k1S_param_0", ScalarType::B(8));
        s.array = Some(16);
        s.span = span(42);
        let m = module(vec![], vec![kernel("_Z1k1S", vec![s], vec![])]);
        let e = lower_err(&m, &launch("k", [1; 3], [1; 3], vec![Arg::Value(0)]));
        assert!(
            e.message.contains("struct passed by value") && e.message.contains("not one"),
            "{}",
            e.message
        );
        assert_eq!(e.span, span(42));
        // A byte array accessed at two widths.
        let m = module(
            vec![var(
                StateSpace::Global,
                ScalarType::B(8),
                "buf",
                vec![Some(8)],
                vec![],
            )],
            vec![kernel(
                "k",
                vec![],
                vec![
                    i(1, "ld.global.u32", vec![r("%r1"), at(sym("buf"), 0)]),
                    i(2, "ld.global.u64", vec![r("%rd1"), at(sym("buf"), 0)]),
                ],
            )],
        );
        let e = lower_err(&m, &launch("k", [1; 3], [1; 3], vec![]));
        assert!(
            e.message
                .contains("mixed-size access to `buf` is not supported"),
            "{}",
            e.message
        );
        assert_eq!(e.span, span(2));
    }
}
