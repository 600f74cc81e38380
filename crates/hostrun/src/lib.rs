//! The native host path (issue 35): a `.cu` file's host part runs for real, and only the
//! device is explored under the memory model.
//!
//! 1. [`split`]: the file is split as nvcc does; the host part (kernel bodies and device-only
//!    code removed, launches rewritten into calls of scopecheck's runtime, `__device__`
//!    variables registered by name) is compiled by the system C++ compiler ([`compile`])
//!    against scopecheck's own CUDA runtime (`runtime/`: headers and a small library shipped
//!    in this crate), with the user's `-I`, `-D`, `-U`, `-include` and `-std`.
//! 2. [`session`]: the host binary runs as a child process; every runtime call comes to
//!    scopecheck over a socket ([`wire`]), which keeps device memory and the launches
//!    ([`device`]). Where the host observes the device (a synchronization, a copy), the
//!    launches since the last observation are explored from the memory as it stands, the
//!    executions grouped by the memory they leave, and the child forks once per outcome.
//! 3. A failed `assert`, a non-zero exit, `abort()` or a signal in any fork is a failed
//!    requirement, reported with the device outcomes that led there; races, hangs and faults
//!    found at any observation are reported at their lines.

pub mod compile;
pub mod device;
pub mod session;
pub mod split;
pub mod wire;

pub use compile::{find_compiler, Built};
pub use session::{Ending, HostOptions, HostReport, ProcessResult};

/// Why the native host path could not check a file.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No C++ compiler on this machine (`c++`, `g++`, `clang++`, or `SCOPECHECK_CXX`).
    #[error("no C++ compiler found (looked for $SCOPECHECK_CXX, c++, g++, clang++): the native host path compiles the host part of the file; install one, or use --host interpreted")]
    NoCompiler,
    /// The host compiler refused the host part: its messages name the user's lines.
    #[error("the host part does not compile with {compiler}:\n{messages}")]
    Compile { compiler: String, messages: String },
    /// The device work at an observation cannot be explored (what, where).
    #[error("{0}")]
    Device(String),
    #[error("{0}")]
    Io(String),
    #[error("internal error of the native host path: {0}")]
    Internal(String),
}

/// Checks `source` (the file at `path`) on the native host path: split, build (cached), run.
pub fn check(
    path: &std::path::Path,
    source: &str,
    cuda: &scopecheck_cuda::CudaOptions,
    check: &scopecheck_model::CheckOptions,
    opts: &HostOptions,
) -> Result<HostReport, HostError> {
    let file = path.display().to_string();
    let begun = std::time::Instant::now();
    let parts = split::split(source)?;
    let built = compile::build(path, &parts.host, cuda)?;
    let compiled = begun.elapsed();
    // The device part as the front-end reads it: preprocessed with the file's options, the
    // host code blanked; every line stays where it was.
    let (pre, _) = scopecheck_cuda::run_preprocessor(source, false, cuda).map_err(|e| {
        HostError::Device(format!(
            "{file}:{}:{}: {}",
            e.span.line, e.span.column, e.message
        ))
    })?;
    let device_text = scopecheck_cuda::device_source(&pre.text)
        .map(|t| split::device_only(&t))
        .ok_or_else(|| HostError::Device(format!("{file}: the device part cannot be read")))?;
    let cx = device::Context {
        device_text,
        kernels: parts.kernels,
        cuda: cuda.clone(),
        check: check.clone(),
        file,
    };
    let mut report = session::run(&built.binary, cx, check, opts)?;
    report.compile_time = compiled;
    report.cached = built.cached;
    report.compiler = built.compiler;
    Ok(report)
}
