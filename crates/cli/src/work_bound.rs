//! The bound on exploration work (`--max-shared-threads`): what a launch costs is not its
//! thread count but the threads that share a written location with another thread
//! (`scopecheck_explore::sharing`; docs/kernels.md, "Thread limits"). A kernel-only file's
//! launch past the bound is checked smaller and says so; a harness's is refused, naming the
//! flag that raises the bound.

use scopecheck_cuda::{CudaOptions, KernelChoice};
use scopecheck_frontend::{Input, Loaded};
use scopecheck_ir::{Diagnostic, Placement, Program, ThreadId};

/// What the bound says of a loaded file.
pub enum Bound {
    /// It may be explored as it is.
    Fits,
    /// A kernel's launch to check instead: smaller, and saying why.
    Shrink(KernelChoice),
    /// A harness whose launches share too much: the error to report.
    Refuse(Diagnostic),
}

/// The device threads of `program` that share a written location with another thread.
fn sharing_device_threads(program: &Program) -> Vec<ThreadId> {
    scopecheck_explore::sharing::sharing_threads(program)
        .into_iter()
        .filter(|t| matches!(program.thread(*t).placement, Placement::Device(_)))
        .collect()
}

/// Whether `loaded` (the file `input`, read with `cuda`) fits `cuda.max_shared_threads`: the
/// most sharing threads of its programs (the language view's and the PTX view's).
pub fn bound(input: &Input, loaded: &Loaded, cuda: &CudaOptions) -> Bound {
    // Litmus tests give their threads themselves: no launch to bound.
    if scopecheck_frontend::Kind::of(&input.path) == scopecheck_frontend::Kind::Litmus {
        return Bound::Fits;
    }
    let max = cuda.max_shared_threads;
    let (shared, program) = std::iter::once(&loaded.program)
        .chain(loaded.ptx_view.as_ref())
        .map(|p| (sharing_device_threads(p), p))
        .max_by_key(|(s, _)| s.len())
        .expect("a program");
    if shared.len() <= max {
        return Bound::Fits;
    }
    let Some(kernel) = &input.kernel else {
        let mut d = Diagnostic::error(format!(
            "{} device threads of this file's launches share a written location with another thread: more than the limit of {max} (their executions grow exponentially with their number); shrink the launches, or raise the limit with `--max-shared-threads N` (the default is {})",
            shared.len(),
            scopecheck_cuda::DEFAULT_MAX_SHARED_THREADS
        ));
        if let Some(span) = program.thread(shared[0]).span {
            d = d.at(span);
        }
        return Bound::Refuse(d);
    };
    // A launch of that many threads, scaled by the share of them that shared, fits when the
    // sharing threads are spread evenly; the caller measures it again and shrinks further if
    // not. Always strictly fewer threads than now, so this ends.
    let total = kernel
        .grid
        .iter()
        .chain(&kernel.block)
        .map(|&d| d as usize)
        .product::<usize>();
    let target = (total * max / shared.len()).clamp(1, total.saturating_sub(1).max(1));
    if total <= 1 {
        return Bound::Fits;
    }
    match replan(input, &loaded.source, kernel, cuda, target) {
        Some(mut smaller) => {
            smaller.shared = Some(kernel.shared.unwrap_or(shared.len()));
            Bound::Shrink(smaller)
        }
        None => Bound::Fits,
    }
}

/// `kernel` planned again with at most `max_threads` threads (the front-end's shrinking:
/// blocks first, down to two, then the largest dimension of the block halved).
fn replan(
    input: &Input,
    source: &str,
    kernel: &KernelChoice,
    cuda: &CudaOptions,
    max_threads: usize,
) -> Option<KernelChoice> {
    let mut options = scopecheck_frontend::list::file_options(cuda, input);
    options.kernel = None;
    let opencl = scopecheck_frontend::Kind::of(&input.path) == scopecheck_frontend::Kind::OpenCl;
    let mut max = max_threads;
    loop {
        options.max_threads = max;
        let planned = scopecheck_cuda::plan_kernels(source, opencl, &options).ok()??;
        let smaller = planned
            .into_iter()
            .filter_map(Result::ok)
            .find(|c| c.name == kernel.name)
            .filter(|c| c.grid != kernel.grid || c.block != kernel.block);
        if smaller.is_some() || max <= 1 {
            return smaller;
        }
        max /= 2;
    }
}
