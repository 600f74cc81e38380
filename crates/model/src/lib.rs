//! Memory models as named relations and axioms, and the judge that turns the consistent
//! executions of a program into final states and a verdict.

pub mod compare;
mod judge;
pub mod ptx;
pub mod src11;
mod verdict;

pub use scopecheck_explore::progress::{Progress, Scheduler};
pub use scopecheck_explore::RaceKind;
pub use verdict::{
    Access, FinalState, HangReport, Incomplete, Observation, Outcome, RaceReport, Spin, Verdict,
};

use scopecheck_ir::{Arch, Program, Span};

/// The models scopecheck knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelKind {
    /// The PTX memory consistency model (sm_70 and later).
    Ptx,
    /// Scoped C11: CUDA C++ (libcu++) and OpenCL 2.0 atomics with scopes.
    Src11,
}

impl ModelKind {
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Ptx => "ptx",
            ModelKind::Src11 => "src11",
        }
    }
}

/// Default bound on how often one backward branch may be taken in one execution.
pub const DEFAULT_UNROLL: u32 = 2;

/// How to check a program.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The model; `None`: the dialect's own (PTX tests under PTX, C tests under scoped C11).
    pub model: Option<ModelKind>,
    /// How often one backward branch may be taken before the path is cut.
    pub unroll: u32,
    /// The scheduler hangs are judged under.
    pub scheduler: Scheduler,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            model: None,
            unroll: DEFAULT_UNROLL,
            scheduler: Scheduler::default(),
        }
    }
}

/// An error in the test found while exploring it (not a parse error, not a bug in scopecheck).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// Some consistent execution does something the test may not do (e.g. an address offset
    /// that leaves its location), at `span`.
    #[error("{message}")]
    Program { message: String, span: Option<Span> },
}

impl CheckError {
    /// Where in the source the error is, when known.
    pub fn span(&self) -> Option<Span> {
        match self {
            CheckError::Program { span, .. } => *span,
        }
    }
}

impl ModelKind {
    /// The model a program's own dialect is written for.
    pub fn for_dialect(arch: Arch) -> ModelKind {
        match arch {
            Arch::Ptx => ModelKind::Ptx,
            Arch::C => ModelKind::Src11,
        }
    }
}

/// Explores every execution of `program` the chosen model allows and judges the condition. A C
/// program checked under PTX is first compiled with the PTX mapping (`ptx::mapping`).
pub fn check(program: &Program, opts: &CheckOptions) -> Result<Verdict, CheckError> {
    match opts.model.unwrap_or(ModelKind::for_dialect(program.arch)) {
        ModelKind::Ptx if program.arch == Arch::C => {
            judge::judge(&ptx::mapping::compile(program), &ptx::Ptx, opts)
        }
        ModelKind::Ptx => judge::judge(program, &ptx::Ptx, opts),
        ModelKind::Src11 => judge::judge(program, &src11::ScopedC11, opts),
    }
}
