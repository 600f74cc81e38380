//! The readers beside the language-level front-ends: a `.ptx` module with its `--harness`, a
//! `.cu` file as NVRTC compiles it (its PTX view), alone when the front-end refuses the file
//! or beside the program it read.

use scopecheck_cuda::CudaOptions;
use scopecheck_ir::{Diagnostic, Program};

use crate::{Failure, Input};

/// A `.cu` file the language-level front-end cannot read, as its PTX view alone. When that
/// cannot be built either, the caller reports the front-end's error, with why the PTX view
/// failed when it got that far (`Some`). `limit`: the largest file read.
pub(crate) fn ptx_only(
    input: &Input,
    cuda: &CudaOptions,
    limit: u64,
) -> Result<(String, Program, Vec<Diagnostic>, Compiler), Option<String>> {
    let source = crate::read::read_source(&input.file, &input.path, limit).map_err(|_| None)?;
    let Err(why) = scopecheck_cuda::parse_cuda_with(&source, cuda) else {
        return Err(None);
    };
    let nvrtc = NVRTC
        .get_or_init(scopecheck_nvrtc::Nvrtc::find)
        .as_ref()
        .map_err(|e| Some(e.to_string()))?;
    let name = input
        .path
        .file_name()
        .ok_or(None)?
        .to_string_lossy()
        .into_owned();
    // No language view checks the source here: the unoptimized compile is asked for.
    let view = scopecheck_cuda::ptx_view(
        &source,
        &name,
        cuda,
        nvrtc,
        &cuda.compile.nvrtc_arch(),
        true,
    )
    .map_err(|e| Some(e.to_string()))?;
    let mut warnings = vec![Diagnostic::warning(format!(
        "the language-level front-end cannot read this file ({}); it is checked as the PTX NVRTC compiles its kernels to, under the PTX model only",
        why.message
    ))
    .at_span(why.span)];
    warnings.extend(view.warnings);
    let mut program = view.program;
    if let Some(stem) = input.path.file_stem() {
        program.name = stem.to_string_lossy().into_owned();
    }
    let compiler = Compiler {
        compilation: view.compilation,
        unoptimized: view.unoptimized,
    };
    Ok((source, program, warnings, compiler))
}

/// Which compilation a PTX view is (`Loaded::compiler`): NVRTC's optimized code, and, where
/// the optimizer removed accesses of the source, its unoptimized compile for the race check.
#[derive(Debug)]
pub struct Compiler {
    pub compilation: scopecheck_cuda::Compilation,
    /// `Some` when the optimizer removed accesses (and the caller asked): the unoptimized
    /// view whose races are the source's, or why it could not be built.
    pub unoptimized: Option<Result<scopecheck_cuda::Unoptimized, String>>,
}

/// A `.ptx` module with the harness `--harness` names (`scopecheck_cuda::ptx_file_view`), read
/// within `limit` bytes as the module was.
pub(crate) fn read_ptx(
    input: &Input,
    source: String,
    cuda: &CudaOptions,
    limit: u64,
) -> Result<(String, Program, Vec<Diagnostic>, Compiler), Box<Failure>> {
    let Some(harness) = &cuda.harness else {
        return Err(Failure::io(
            &input.file,
            "a .ptx file needs --harness FILE.cu: the .cu file whose main() launches its kernels (declared there: `__global__ void k(int *p);`) and checks the results".into(),
        ));
    };
    let harness_file = harness.display().to_string();
    let harness_source =
        crate::read::read_source(&harness_file, harness, limit).map_err(|mut f| {
            f.diagnostic.message = format!("{} (the --harness file)", f.diagnostic.message);
            f
        })?;
    match scopecheck_cuda::ptx_file_view(&source, &harness_source, cuda) {
        Ok(view) => {
            let mut program = view.program;
            if let Some(stem) = input.path.file_stem() {
                program.name = stem.to_string_lossy().into_owned();
            }
            let warnings = view
                .warnings
                .into_iter()
                .map(|mut w| {
                    w.message = format!("{harness_file}: {}", w.message);
                    w
                })
                .collect();
            let compiler = Compiler {
                compilation: view.compilation,
                unoptimized: None,
            };
            Ok((source, program, warnings, compiler))
        }
        Err(scopecheck_cuda::PtxViewError::Harness(e)) => {
            Err(Failure::in_source(&harness_file, harness_source, e))
        }
        Err(e @ scopecheck_cuda::PtxViewError::Ptx { .. }) => {
            Err(Failure::in_source(&input.file, source, e))
        }
        Err(e) => Err(Failure::io(&input.file, e.to_string())),
    }
}

/// NVRTC, loaded once per process.
static NVRTC: std::sync::OnceLock<Result<scopecheck_nvrtc::Nvrtc, scopecheck_nvrtc::NvrtcError>> =
    std::sync::OnceLock::new();

/// The PTX view of a `.cu` file: its kernels compiled by NVRTC, lowered from that PTX (with
/// `unoptimized`, the unoptimized compile too where the optimizer removed accesses). When it
/// cannot be built (no NVRTC, PTX beyond the PTX front-end), a warning says why and that the
/// PTX verdict is then scopecheck's own mapping of the C++ operations to PTX.
pub(crate) fn nvrtc_view(
    input: &Input,
    source: &str,
    program: &Program,
    cuda: &CudaOptions,
    unoptimized: bool,
    warnings: &mut Vec<Diagnostic>,
) -> Option<(Program, Compiler)> {
    let fallback = "the PTX verdict below is scopecheck's own mapping of the C++ operations to PTX, not NVRTC's code";
    let nvrtc = match NVRTC.get_or_init(scopecheck_nvrtc::Nvrtc::find) {
        Ok(n) => n,
        Err(e) => {
            warnings.push(
                Diagnostic::warning(format!("{e}; {fallback}")).at(scopecheck_ir::Span::default()),
            );
            return None;
        }
    };
    let name = input
        .path
        .file_name()
        .map_or_else(|| input.file.clone(), |n| n.to_string_lossy().into_owned());
    let arch = cuda.compile.nvrtc_arch();
    match scopecheck_cuda::ptx_view(source, &name, cuda, nvrtc, &arch, unoptimized) {
        Ok(view) => {
            for w in view.warnings {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            let mut p = view.program;
            p.name = program.name.clone();
            let compiler = Compiler {
                compilation: view.compilation,
                unoptimized: view.unoptimized,
            };
            Some((p, compiler))
        }
        Err(e) => {
            let span = match &e {
                scopecheck_cuda::PtxViewError::Harness(h) => h.span.unwrap_or_default(),
                scopecheck_cuda::PtxViewError::Ptx { line: Some(l), .. } => scopecheck_ir::Span {
                    line: *l,
                    column: 1,
                    ..Default::default()
                },
                _ => scopecheck_ir::Span::default(),
            };
            warnings.push(
                Diagnostic::warning(format!("no PTX view from NVRTC: {e}; {fallback}")).at(span),
            );
            None
        }
    }
}
