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
pub mod concurrent;
pub mod device;
pub mod finding;
pub mod session;
pub mod split;
pub mod wire;

pub use compile::{find_compiler, Built};
pub use finding::Finding;
pub use session::{Ending, HostOptions, HostReport, ProcessResult, Step};

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
    /// The host code touches memory a running kernel may access: the interpreted harness's.
    #[error("the host program needs the interpreted harness: {0}")]
    Concurrent(concurrent::Concurrent),
    #[error("internal error of the native host path: {0}")]
    Internal(String),
}

/// A file prepared for the native host path ([`prepare`]).
#[derive(Debug)]
pub enum Prepared {
    /// Split and built: ready to run.
    Native(Box<Native>),
    /// The host code touches memory a running kernel may access ([`concurrent`]): the file
    /// needs the interpreted harness, for this reason.
    Interpreted(concurrent::Concurrent),
}

/// A host program built, with what its runs explore the device with.
#[derive(Debug)]
pub struct Native {
    pub file: String,
    pub built: Built,
    /// What splitting and building took (nothing to build when cached).
    pub compile_time: std::time::Duration,
    device_text: String,
    kernels: Vec<split::Kernel>,
    cuda: scopecheck_cuda::CudaOptions,
}

/// Prepares `source` (the file at `path`) for the native host path: split; when the host code
/// touches memory a running kernel may access, says so; otherwise builds the host part
/// (cached) and reads the device part.
pub fn prepare(
    path: &std::path::Path,
    source: &str,
    cuda: &scopecheck_cuda::CudaOptions,
) -> Result<Prepared, HostError> {
    let file = path.display().to_string();
    let begun = std::time::Instant::now();
    let parts = split::split(source)?;
    if let Some(c) = parts.concurrent {
        return Ok(Prepared::Interpreted(c));
    }
    let built = compile::build(path, &parts.host, cuda)?;
    let compile_time = begun.elapsed();
    // The device part as the front-end reads it: preprocessed with the file's options, the
    // host code blanked; every line stays where it was.
    let (pre, _) = scopecheck_cuda::run_preprocessor(source, false, cuda).map_err(|e| {
        HostError::Device(format!("{file}:{}:{}: {}", e.line(), e.column(), e.message))
    })?;
    let device_text = scopecheck_cuda::device_source(&pre.text)
        .map(|t| split::device_only(&t))
        .ok_or_else(|| HostError::Device(format!("{file}: the device part cannot be read")))?;
    Ok(Prepared::Native(Box::new(Native {
        file,
        built,
        compile_time,
        device_text,
        kernels: parts.kernels,
        cuda: cuda.clone(),
    })))
}

impl Native {
    /// Runs the host program, exploring the device under `check`'s model at each observation.
    pub fn run(
        &self,
        check: &scopecheck_model::CheckOptions,
        opts: &HostOptions,
    ) -> Result<HostReport, HostError> {
        let cx = device::Context {
            device_text: self.device_text.clone(),
            kernels: self.kernels.clone(),
            cuda: self.cuda.clone(),
            check: check.clone(),
            file: self.file.clone(),
        };
        let mut report = session::run(&self.built.binary, cx, check, opts)?;
        report.compile_time = self.compile_time;
        report.cached = self.built.cached;
        report.compiler = self.built.compiler.clone();
        Ok(report)
    }
}

/// Checks `source` (the file at `path`) on the native host path: prepare, then run; a file
/// that needs the interpreted harness is [`HostError::Concurrent`].
pub fn check(
    path: &std::path::Path,
    source: &str,
    cuda: &scopecheck_cuda::CudaOptions,
    check: &scopecheck_model::CheckOptions,
    opts: &HostOptions,
) -> Result<HostReport, HostError> {
    match prepare(path, source, cuda)? {
        Prepared::Native(n) => n.run(check, opts),
        Prepared::Interpreted(c) => Err(HostError::Concurrent(c)),
    }
}
