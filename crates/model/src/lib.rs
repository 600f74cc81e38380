//! Memory models as named relations and axioms, and the judge that turns the consistent
//! executions of a program into final states and a verdict.

mod capture;
pub mod compare;
mod judge;
pub mod lint;
mod platform;
pub mod ptx;
pub mod src11;
pub mod suggest;
pub mod tune;
mod verdict;

pub use lint::{Lint, LintKind};
pub use platform::Platform;
pub use scopecheck_explore::progress::{Progress, Scheduler};
pub use scopecheck_explore::{Counters, Engine, RaceKind};
pub use verdict::{
    Access, EdgeKind, ExecutionGraph, FinalState, GraphEdge, GraphEvent, HangReport, Incomplete,
    Observation, Outcome, RaceReport, Spin, Verdict, WitnessRead,
};

use scopecheck_ir::{Arch, Diagnostic, Program};

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
    /// The machine: what host-device programs may rely on.
    pub platform: Platform,
    /// Which explorer runs (the candidate enumerator only as the tests' oracle).
    pub engine: Engine,
    /// Stop after this many consistent executions (the verdict is then incomplete).
    pub max_executions: Option<u64>,
    /// Stop after this long (the verdict is then incomplete).
    pub timeout: Option<std::time::Duration>,
    /// Stop at this instant, whatever `timeout` says (the earlier of the two wins): one
    /// deadline for everything a file's check runs (`--model both`, `--suggest`, `tune`),
    /// set once by the caller from `--timeout`, so that each later search gets what is left.
    pub deadline: Option<std::time::Instant>,
    /// Stop when the process holds more memory than this (the verdict is then incomplete).
    pub memory: Option<scopecheck_explore::MemoryBound>,
    /// Running totals for a progress display.
    pub progress: Option<std::sync::Arc<Counters>>,
    /// Whether interchangeable threads may be explored in one order only.
    pub symmetry: bool,
    /// Whether relaxed RMWs of one commutative operation whose results nobody reads are
    /// explored in one coherence order and counted for all (`--commute`).
    pub commute: bool,
    /// Whether the verdict keeps pictures of its witness and race executions
    /// (`Verdict::witness_graph`, `Verdict::race_graph`).
    pub graphs: bool,
    /// Whether the verdict keeps, for each final state, the reads of one execution that ends
    /// in it (`Verdict::state_witnesses`): the native host path shows the device execution
    /// behind each outcome the host may see.
    pub state_witnesses: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            model: None,
            unroll: DEFAULT_UNROLL,
            scheduler: Scheduler::default(),
            platform: Platform::ideal(),
            engine: Engine::Auto,
            max_executions: None,
            timeout: None,
            deadline: None,
            memory: None,
            progress: None,
            symmetry: true,
            commute: true,
            graphs: false,
            state_witnesses: false,
        }
    }
}

impl ModelKind {
    /// The model a program's own dialect is written for.
    pub fn for_dialect(arch: Arch) -> ModelKind {
        match arch {
            Arch::Ptx => ModelKind::Ptx,
            Arch::C | Arch::OpenCl => ModelKind::Src11,
        }
    }
}

/// Explores every execution of `program` the chosen model allows and judges the condition. A C
/// program checked under PTX is first compiled with the PTX mapping (`ptx::mapping`). On a
/// platform lacking a capability, the verdict says which states only that lack makes reachable.
pub fn check(program: &Program, opts: &CheckOptions) -> Result<Verdict, Diagnostic> {
    platform::check_program(program, &opts.platform)?;
    let mut verdict = check_on(program, opts, &opts.platform)?;
    let talks_to_host = program
        .threads
        .iter()
        .any(|t| t.placement == scopecheck_ir::Placement::Host);
    let missing: Vec<&str> = opts
        .platform
        .missing()
        .into_iter()
        .filter(|c| talks_to_host && platform::affects_models(c))
        .collect();
    // Each missing capability alone, then all of them together (their effects can overlap).
    let mut trials: Vec<Vec<&str>> = missing.iter().map(|c| vec![*c]).collect();
    if missing.len() > 1 {
        trials.push(missing.clone());
    }
    for granted in trials {
        let mut with = opts.platform.clone();
        for c in &granted {
            with = with.with(c);
        }
        // Only its states are compared: nothing to draw.
        let quiet = CheckOptions {
            graphs: false,
            ..opts.clone()
        };
        let other = check_on(program, &quiet, &with)?;
        let extra: Vec<String> = verdict
            .states
            .iter()
            .filter(|s| !other.states.iter().any(|w| w.values == s.values))
            .map(|s| {
                s.values
                    .iter()
                    .map(|(o, v)| format!("{}={v};", program.observable_name(*o)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        if !extra.is_empty() && (granted.len() == 1 || verdict.platform_notes.is_empty()) {
            verdict.platform_notes.push(format!(
                "{} lacks {}: only because of that can the program end in {}",
                opts.platform.name,
                granted.join(" and "),
                extra.join(" | ")
            ));
        }
    }
    Ok(verdict)
}

fn check_on(
    program: &Program,
    opts: &CheckOptions,
    platform: &Platform,
) -> Result<Verdict, Diagnostic> {
    let platform = platform.clone();
    match opts.model.unwrap_or(ModelKind::for_dialect(program.arch)) {
        ModelKind::Ptx if program.arch.is_c() => judge::judge(
            &ptx::mapping::compile(program),
            &ptx::Ptx { platform },
            opts,
        ),
        ModelKind::Ptx => judge::judge(program, &ptx::Ptx { platform }, opts),
        ModelKind::Src11 => judge::judge(program, &src11::ScopedC11 { platform }, opts),
    }
}
