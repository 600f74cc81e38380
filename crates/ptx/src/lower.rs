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

use std::collections::{HashMap, HashSet};

use scopecheck_ir::{
    DevicePlacement, Diagnostic, Instr, InstrKind, LocId, Placement, Program, RegId, Span, Thread,
    ThreadId,
};

mod analysis;
mod arith;
mod calls;
mod emit;
mod float;
mod geometry;
mod locations;
mod memory;
mod qualifiers;
mod statements;
mod sync;

use self::analysis::Analysis;
use self::geometry::{Geometry, Specials};
use self::locations::{address_inits, global_variable, new_variable, Mem, Memory};
use crate::ast::{
    Body, Function, Instruction, Module, ScalarType, StateSpace, Statement, Variable,
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
/// The diagnostic (read through it: `e.message`, `e.span`) and the `.loc` its caller turns
/// into a line of the compiled `.cu` file: a type of its own only for that.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", diagnostic.message)]
pub struct LowerError {
    pub diagnostic: Diagnostic,
    /// The `.loc` of the instruction: (file number, line, column).
    pub loc: Option<(u32, u32, u32)>,
}

impl std::ops::Deref for LowerError {
    type Target = Diagnostic;
    fn deref(&self) -> &Diagnostic {
        &self.diagnostic
    }
}

impl LowerError {
    pub(super) fn new(span: Span, message: impl Into<String>) -> Self {
        LowerError {
            diagnostic: Diagnostic::error(message).at(span),
            loc: None,
        }
    }

    fn at(ins: &Instruction, message: impl Into<String>) -> Self {
        LowerError {
            diagnostic: Diagnostic::error(message).at(ins.span),
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
    pub(super) fn new(
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
}

#[cfg(test)]
mod tests;
