//! The source's races where NVRTC's optimizer removed the racing accesses. A race in the
//! source is undefined behaviour whatever the optimizer then did, but the PTX view checks the
//! optimized code, where a store nobody reads is gone and a load may be forwarded from a
//! register. So the same device code is also compiled with `-G` (NVVM without optimization:
//! every access of the source stays, at its `.loc` line), and where that code accesses memory
//! at lines the optimized code does not, its races are looked for too (the caller checks
//! [`Unoptimized::program`] and reports its races with the PTX verdict).

use std::collections::BTreeSet;

use scopecheck_ir::{Diagnostic, InstrKind, Program};

use crate::ptx_view::compile_view;
use crate::{Compilation, CudaOptions, KernelLaunch};

/// The PTX view of NVRTC's unoptimized compile, where it accesses memory at lines the
/// optimized compile does not.
#[derive(Debug)]
pub struct Unoptimized {
    /// The harness with `-G`'s kernel code: the same threads (same ids) as the optimized
    /// view, and locations of the same names (module variables may be more).
    pub program: Program,
    pub compilation: Compilation,
    /// Per kernel (its name expression), the `.cu` lines whose accesses the optimizer removed.
    pub removed: Vec<(String, Vec<u32>)>,
    /// The first launch with removed accesses: where the warning points.
    span: scopecheck_ir::Span,
}

impl Unoptimized {
    /// The warning that says what was removed and that the unoptimized code's races count.
    pub fn warning(&self) -> Diagnostic {
        let kernels: Vec<String> = self
            .removed
            .iter()
            .map(|(k, lines)| {
                let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
                format!(
                    "`{k}` at line{} {}",
                    if lines.len() == 1 { "" } else { "s" },
                    lines.join(", ")
                )
            })
            .collect();
        Diagnostic::warning(format!(
            "NVRTC's optimizer removed memory accesses the source makes (kernel {}): the races of the source are also looked for in NVRTC's unoptimized compile (-G), and reported with the PTX verdict",
            kernels.join("; kernel ")
        ))
        .at(self.span)
    }
}

/// The `.cu` lines of `launch`'s memory accesses (loads, stores, read-modify-writes) and
/// barriers in `program`, over all its threads.
pub(crate) fn access_lines(program: &Program, launch: &KernelLaunch) -> BTreeSet<u32> {
    launch
        .threads
        .iter()
        .flat_map(|t| &program.threads[t.0 as usize].code)
        .filter(|i| {
            matches!(
                i.kind,
                InstrKind::Load { .. }
                    | InstrKind::Store { .. }
                    | InstrKind::Rmw { .. }
                    | InstrKind::Barrier { .. }
            )
        })
        .map(|i| i.span.line)
        .collect()
}

/// Compiles `source` with `-G` and compares each launch's access lines with the optimized
/// view's (`optimized`, `launches`): `None` when the optimizer removed none, the unoptimized
/// view when it did, or why it could not be built.
pub(crate) fn view(
    source: &str,
    name: &str,
    options: &CudaOptions,
    nvrtc: &scopecheck_nvrtc::Nvrtc,
    arch: &str,
    optimized: &Program,
    launches: &[KernelLaunch],
) -> Option<Result<Unoptimized, String>> {
    let debug = match compile_view(source, name, options, nvrtc, arch, true) {
        Ok(c) => c,
        Err(e) => return Some(Err(e.to_string())),
    };
    let mut removed = Vec::new();
    let mut span = None;
    for (l, g) in launches.iter().zip(&debug.launches) {
        let kept = access_lines(optimized, l);
        let lost: Vec<u32> = access_lines(&debug.program, g)
            .difference(&kept)
            .copied()
            .collect();
        if !lost.is_empty() && !removed.iter().any(|(k, _)| *k == l.expression) {
            span.get_or_insert(l.span);
            removed.push((l.expression.clone(), lost));
        }
    }
    let span = span?;
    Some(Ok(Unoptimized {
        program: debug.program,
        compilation: debug.compilation,
        removed,
        span,
    }))
}
