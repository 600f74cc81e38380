//! The PTX view of a `.cu` file: its harness as the language-level front-end interprets it
//! (locations, host threads, launch order, the checked condition), and every kernel thread's
//! code replaced by the PTX NVRTC compiles the kernel to, lowered for that launch. What is then
//! checked under the PTX model is what the compiler actually produced for the user's code.

use scopecheck_ir::{Arch, Diagnostic, Observable, Program, Span};

use crate::unoptimized::Unoptimized;
use crate::{Compilation, CudaOptions, KernelLaunch, LaunchArg};

/// Why the PTX view could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PtxViewError {
    /// The language-level front-end could not read the harness (shown as `LINE:COLUMN:
    /// MESSAGE`: the message alone would not say where).
    #[error("{}:{}: {}", .0.line(), .0.column(), .0.message)]
    Harness(#[from] Diagnostic),
    /// NVRTC is missing or rejected the device code.
    #[error(transparent)]
    Nvrtc(#[from] scopecheck_nvrtc::NvrtcError),
    /// The PTX NVRTC produced is beyond the PTX front-end (its message names the construct,
    /// the span is in the PTX, `line` the `.cu` line its `.loc` gives).
    #[error("{message}")]
    Ptx {
        message: String,
        line: Option<u32>,
        span: Span,
        ptx: String,
    },
}

impl From<PtxViewError> for scopecheck_ir::Diagnostic {
    /// A harness error is in the `.cu` file and a PTX error in the PTX (the caller knows which
    /// file that is); NVRTC's has no position.
    fn from(e: PtxViewError) -> Self {
        match e {
            PtxViewError::Harness(e) => e,
            PtxViewError::Ptx { message, span, .. } => {
                scopecheck_ir::Diagnostic::error(message).at(span)
            }
            e @ PtxViewError::Nvrtc(_) => scopecheck_ir::Diagnostic::error(e.to_string()),
        }
    }
}

/// The program of the PTX view, with the front-end's warnings and the PTX itself.
pub struct PtxView {
    pub program: Program,
    pub warnings: Vec<Diagnostic>,
    pub ptx: String,
    /// Which compilation `program`'s kernel code is (compiler, version, options).
    pub compilation: Compilation,
    /// Asked for and needed (the optimizer removed accesses the source makes): the same
    /// harness with NVRTC's unoptimized code (`-G`), whose races are the source's; or why it
    /// could not be built.
    pub unoptimized: Option<Result<Unoptimized, String>>,
}

/// Builds the PTX view of `source` (file `name`), compiling its device part with `nvrtc` for
/// `arch` (`compute_90`). With `unoptimized`, also compiles it with `-G` (no optimization)
/// and, where the optimized code lost memory accesses the unoptimized code makes (dead stores
/// removed, loads forwarded), keeps that view for a race check of the source's accesses
/// ([`PtxView::unoptimized`], docs/kernels.md "Honest about the compiler").
pub fn ptx_view(
    source: &str,
    name: &str,
    options: &CudaOptions,
    nvrtc: &scopecheck_nvrtc::Nvrtc,
    arch: &str,
    unoptimized: bool,
) -> Result<PtxView, PtxViewError> {
    let compiled = compile_view(source, name, options, nvrtc, arch, false)?;
    let Compiled {
        mut program,
        mut warnings,
        launches,
        ptx,
        compilation,
    } = compiled;
    // A kernel the optimizer reduced to no memory access (stores nobody reads are dead code):
    // whatever raced in the source is gone from this view, which must be said.
    for launch in &launches {
        let said = warnings
            .iter()
            .any(|w| w.span == Some(launch.span) && w.message.contains("no memory"));
        if crate::unoptimized::access_lines(&program, launch).is_empty() && !said {
            warnings.push(
                Diagnostic::warning(format!(
                    "kernel `{}`: NVRTC's optimized code ({arch}) accesses no memory: the optimizer removed every access (a store nobody reads is dead code), so the PTX verdict cannot see a race the source has{}",
                    launch.expression,
                    if unoptimized {
                        "; the race check runs on NVRTC's unoptimized compile (-G) too"
                    } else {
                        "; the language view checks the source"
                    }
                ))
                .at(launch.span),
            );
        }
    }
    let unoptimized = unoptimized
        .then(|| crate::unoptimized::view(source, name, options, nvrtc, arch, &program, &launches))
        .flatten();
    if let Some(Ok(u)) = &unoptimized {
        warnings.push(u.warning());
    }
    program.arch = Arch::Ptx;
    Ok(PtxView {
        program,
        warnings,
        ptx,
        compilation,
        unoptimized,
    })
}

/// What a compilation made: the harness with NVRTC's kernel code (a [`Program`] whose
/// threads run it), the warnings, the launches, the PTX and which compilation it was.
pub(crate) struct Compiled {
    pub program: Program,
    pub warnings: Vec<Diagnostic>,
    pub launches: Vec<KernelLaunch>,
    pub ptx: String,
    pub compilation: Compilation,
}

/// Reads the harness of `source`, compiles its device part with NVRTC (`debug`: with `-G`,
/// unoptimized) and gives each launch's threads the code of the PTX, at the `.cu` lines
/// their `.loc`s name.
pub(crate) fn compile_view(
    source: &str,
    name: &str,
    options: &CudaOptions,
    nvrtc: &scopecheck_nvrtc::Nvrtc,
    arch: &str,
    debug: bool,
) -> Result<Compiled, PtxViewError> {
    let (mut program, warnings, launches) = read_harness(source, options)?;
    let device = crate::device_source(source).ok_or_else(|| {
        Diagnostic::error("the grammar cannot read this file").at(Span::default())
    })?;
    // The language-level front-end knows libcu++ without its header; nvcc does not. A file
    // that uses `cuda::` without including it gets the header pre-included (lines unchanged),
    // and is told.
    let mut warnings = warnings;
    let mut extra = options.compile.nvrtc_options();
    if debug {
        extra.push("-G".to_string());
    }
    if source.contains("cuda::")
        && !source.contains("<cuda/atomic>")
        && !source.contains("<cuda/std/atomic>")
    {
        extra.push("--pre-include=cuda/atomic".to_string());
        warnings.push(Diagnostic::warning("this file uses `cuda::` without `#include <cuda/atomic>`: NVRTC was given the header (nvcc would reject the file)").at(Span { line: 1, column: 1, offset: 0, len: 0 }));
    }
    let mut names: Vec<String> = launches.iter().map(|l| l.expression.clone()).collect();
    names.sort();
    names.dedup();
    // The headers the file reads, each with its host code blanked as the file's is.
    let mut headers: Vec<(String, String)> = Vec::new();
    if let Ok((_, read)) = crate::run_preprocessor(source, false, options) {
        for h in read {
            if !headers.iter().any(|(n, _)| *n == h.name) {
                let text = crate::device_source(&h.text).unwrap_or(h.text);
                headers.push((h.name, text));
            }
        }
    }
    let compiled = nvrtc.compile_with_headers(&device, name, arch, &extra, &names, &headers)?;
    let compilation = Compilation::of(nvrtc, arch, &compiled.options, options);
    let ptx = compiled.ptx;
    let lowered = compiled.lowered;
    let module = scopecheck_ptx::parse(&ptx).map_err(|e| PtxViewError::Ptx {
        message: format!(
            "the PTX NVRTC produced does not parse: {}:{}: {}",
            e.line(),
            e.column(),
            e.message
        ),
        line: None,
        span: e.span.unwrap_or_default(),
        ptx: ptx.clone(),
    })?;
    // A device-side `assert` is a call to `__assertfail` in the PTX, which the PTX lowering
    // refuses (an external function); the condition names no kernel register either.
    let device_observed = program.observables().into_iter().any(|o| match o {
        Observable::Reg(t, _) => launches.iter().any(|l| l.threads.contains(&t)),
        Observable::Loc(_) => false,
    });
    if device_observed {
        return Err(Diagnostic::error("not supported in the PTX view yet: an `assert` inside a kernel (check the result in the harness instead)").at(program.condition.span.unwrap_or_default())
        .into());
    }
    check_layouts(
        &program,
        launches.first().map_or_else(Span::default, |l| l.span),
    )?;
    let lines = loc_lines(&module, name);
    let starts = line_starts(source);
    for launch in &launches {
        // The `.entry` NVRTC made of the launch's name expression, when it says.
        let entry = lowered
            .iter()
            .find(|(e, _)| *e == launch.expression)
            .map_or_else(|| launch.kernel.clone(), |(_, m)| m.clone());
        replace_code(&mut program, &module, launch, &entry, &ptx)?;
        // Each PTX instruction answers for the `.cu` line its `.loc` names. Unoptimized code
        // calls the headers' functions (`atomicAdd`) instead of inlining them, and the
        // lowering inlines them at the call: their instructions, whose `.loc`s are in the
        // header, answer for the call's line (the last mapped one before them).
        for t in &launch.threads {
            let mut last = None;
            for i in &mut program.threads[t.0 as usize].code {
                let mapped = lines.get(&i.span.line).and_then(|&(line, column)| {
                    let start = *starts.get(line as usize - 1)?;
                    Some(Span {
                        offset: start + column.saturating_sub(1) as usize,
                        len: 1,
                        line,
                        column: column.max(1),
                    })
                });
                match (mapped, last) {
                    (Some(span), _) => {
                        i.span = span;
                        last = Some(span);
                    }
                    (None, Some(span)) if debug => i.span = span,
                    _ => {}
                }
            }
        }
    }
    require_no_failed_asserts(&mut program, &launches);
    program.arch = Arch::Ptx;
    Ok(Compiled {
        program,
        warnings,
        launches,
        ptx,
        compilation,
    })
}

/// A kernel's device `assert`s: NVRTC compiles `assert(c)` to a call of `__assertfail` where
/// `c` is false, which sets the thread's `ASSERT_REGISTER`; the condition requires it 0 in
/// every thread, as the language-level view requires each `assert`'s condition to hold. The
/// condition's span is the first failing call's line (in the `.cu` file) when the harness
/// asserts nothing.
fn require_no_failed_asserts(program: &mut Program, launches: &[KernelLaunch]) {
    use scopecheck_ir::{CmpOp, InstrKind, Operand, Prop, Term};
    use scopecheck_ptx::lower::ASSERT_REGISTER;
    let mut atoms = Vec::new();
    for t in launches.iter().flat_map(|l| l.threads.iter()) {
        let thread = &program.threads[t.0 as usize];
        let Some(r) = thread.reg(ASSERT_REGISTER) else {
            continue;
        };
        if program.condition.span.is_none() {
            program.condition.span = thread
                .code
                .iter()
                .find(
                    |i| matches!(i.kind, InstrKind::Mov { dst, src: Operand::Imm(1) } if dst == r),
                )
                .map(|i| i.span);
        }
        atoms.push(Prop::Cmp(
            Term::Observable(Observable::Reg(*t, r)),
            CmpOp::Eq,
            Term::Const(0),
        ));
    }
    let Some(asserts) = Prop::chain(atoms, true) else {
        return;
    };
    program.condition.prop = match std::mem::replace(&mut program.condition.prop, Prop::True) {
        Prop::True => asserts,
        prop => Prop::And(Box::new(prop), Box::new(asserts)),
    };
}

/// Lowers `launch`'s kernel from the PTX module and gives each of the launch's threads the code
/// of its PTX thread (same position in the launch), keeping the thread's name, placement and
/// launch order; then names the locations its constant pointers reach (`fold_addresses`).
fn replace_code(
    program: &mut Program,
    module: &scopecheck_ptx::ast::Module,
    launch: &KernelLaunch,
    entry: &str,
    ptx: &str,
) -> Result<(), PtxViewError> {
    fn passable(a: &LaunchArg) -> bool {
        match a {
            LaunchArg::Other => false,
            LaunchArg::Struct(fields) => fields.iter().all(|(_, f)| passable(f)),
            _ => true,
        }
    }
    fn arg(a: &LaunchArg) -> scopecheck_ptx::lower::Arg {
        match a {
            LaunchArg::Value(v) => scopecheck_ptx::lower::Arg::Value(*v),
            LaunchArg::Pointer(loc) => scopecheck_ptx::lower::Arg::Pointer(*loc),
            LaunchArg::Struct(fields) => scopecheck_ptx::lower::Arg::Struct(
                fields.iter().map(|(o, f)| (*o, arg(f))).collect(),
            ),
            LaunchArg::Other => unreachable!("refused above"),
        }
    }
    if !launch.args.iter().all(passable) {
        return Err(Diagnostic::error(
            "not supported in the PTX view yet: a kernel argument that points to shared memory",
        )
        .at(launch.span)
        .into());
    }
    let first = program.threads.len();
    let l = scopecheck_ptx::lower::Launch {
        kernel: entry.to_string(),
        grid: launch.grid,
        block: launch.block,
        cluster: [1, 1, 1],
        gpu: 0,
        args: launch.args.iter().map(arg).collect(),
        first_thread: launch.threads.first().map_or(0, |t| t.0),
        shared_bytes: launch.shared_bytes,
    };
    let ids = scopecheck_ptx::lower::lower(module, &l, program).map_err(|e| PtxViewError::Ptx {
        line: e.loc.map(|(_, line, _)| line),
        message: format!("kernel `{}`: {}", launch.kernel, e.message),
        span: e.span.unwrap_or_default(),
        ptx: ptx.to_string(),
    })?;
    if ids.len() != launch.threads.len() {
        return Err(Diagnostic::error(format!(
            "internal: the PTX launch of `{}` made {} threads, the harness {}",
            launch.kernel,
            ids.len(),
            launch.threads.len()
        ))
        .at(launch.span)
        .into());
    }
    let made: Vec<_> = program.threads.drain(first..).collect();
    for (old, new) in launch.threads.iter().zip(made) {
        let t = &mut program.threads[old.0 as usize];
        t.registers = new.registers;
        t.init_regs = new.init_regs;
        t.code = new.code;
    }
    scopecheck_ptx::fold::fold_addresses(program, &launch.threads);
    Ok(())
}

/// The harness of `source`, read alone: the kernels' code comes from PTX.
fn read_harness(
    source: &str,
    options: &CudaOptions,
) -> Result<(Program, Vec<Diagnostic>, Vec<KernelLaunch>), Diagnostic> {
    let harness = CudaOptions {
        kernels: crate::KernelSource::Ptx,
        ..options.clone()
    };
    crate::parse_cuda_launches(source, &harness)
}

/// For each PTX line holding an instruction, the `.cu` line and column it answers for: its
/// `.loc` when that names the compiled file, else the call site in the file that code was
/// inlined at (libcu++ from a header), else (no `.loc`) the last such line before it in its
/// function, or the function's first.
fn loc_lines(
    module: &scopecheck_ptx::ast::Module,
    name: &str,
) -> std::collections::HashMap<u32, (u32, u32)> {
    use scopecheck_ptx::ast::{Body, Statement};
    let main: Vec<u32> = module
        .files
        .iter()
        .filter(|(_, f)| f == name || f.ends_with(&format!("/{name}")))
        .map(|(k, _)| *k)
        .collect();
    fn instructions<'a>(body: &'a Body, out: &mut Vec<&'a scopecheck_ptx::ast::Instruction>) {
        for s in &body.statements {
            match s {
                Statement::Instruction(i) => out.push(i),
                Statement::Block(b) => instructions(b, out),
                Statement::Label(..) => {}
            }
        }
    }
    let mut out = std::collections::HashMap::new();
    for f in &module.functions {
        let Some(b) = &f.body else { continue };
        let mut all = Vec::new();
        instructions(b, &mut all);
        // Its own `.loc` when in the file, else the innermost call site in the file that it
        // was inlined at (a user's device function inlined into the kernel answers for its
        // own lines; a library header's code for the user's call of it).
        let in_file = |i: &scopecheck_ptx::ast::Instruction| {
            i.loc
                .into_iter()
                .chain(i.inlined_at.iter().copied())
                .find(|(file, line, _)| main.contains(file) && *line > 0)
                .map(|(_, line, col)| (line, col))
        };
        let mut current = all.iter().find_map(|i| in_file(i));
        for i in all {
            if let Some(l) = in_file(i) {
                current = Some(l);
            }
            if let Some(l) = current {
                out.insert(i.span.line, l);
            }
        }
    }
    out
}

/// The byte offset of each line's start.
fn line_starts(source: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(source.match_indices('\n').map(|(k, _)| k + 1))
        .collect()
}

/// The PTX view of a `.ptx` module (as `nvcc -ptx`, NVRTC or `cuobjdump` wrote it) with the
/// harness of a `.cu` file (`--harness`): the harness gives memory, host threads, launches and
/// the condition; each launch's kernel is the module's `.entry` of that name (mangled or not),
/// lowered for the launch. Instructions keep their PTX lines.
pub fn ptx_file_view(
    ptx: &str,
    harness_source: &str,
    options: &CudaOptions,
) -> Result<PtxView, PtxViewError> {
    let (mut program, warnings, launches) = read_harness(harness_source, options)?;
    let module = scopecheck_ptx::parse(ptx).map_err(|e| PtxViewError::Ptx {
        message: format!(
            "the PTX does not parse: {}:{}: {}",
            e.line(),
            e.column(),
            e.message
        ),
        line: Some(e.line()),
        span: e.span.unwrap_or_default(),
        ptx: ptx.to_string(),
    })?;
    check_layouts(
        &program,
        launches.first().map_or_else(Span::default, |l| l.span),
    )?;
    for launch in &launches {
        replace_code(&mut program, &module, launch, &launch.kernel, ptx)?;
    }
    require_no_failed_asserts(&mut program, &launches);
    program.arch = Arch::Ptx;
    Ok(PtxView {
        program,
        warnings,
        ptx: ptx.to_string(),
        compilation: Compilation::module(),
        unoptimized: None,
    })
}

/// Refuses an allocation whose elements differ in width (a struct of an `int` and a `long
/// long`): the IR lays such fields out one after the other without the padding C puts
/// between them, so the PTX's byte offsets would reach other fields.
fn check_layouts(program: &Program, span: Span) -> Result<(), PtxViewError> {
    for a in &program.arrays {
        let widths: Vec<u8> = (a.first.0..a.first.0 + a.len)
            .map(|l| program.locations[l as usize].ty.bits)
            .collect();
        if widths.windows(2).any(|w| w[0] != w[1]) {
            return Err(Diagnostic::error(format!(
                    "not supported in the PTX view yet: `{}` has fields of different widths, whose C layout (with padding) the PTX view does not model",
                    a.name
                )).at(span)
            .into());
        }
    }
    Ok(())
}
