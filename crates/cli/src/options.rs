//! The options every checking subcommand shares: model, unroll bound, scheduler.

use clap::{Args, ValueEnum};
use scopecheck_model::{CheckOptions, ModelKind, Progress, Scheduler, DEFAULT_UNROLL};

/// The `--model` choices.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Model {
    /// The PTX memory consistency model (sm_70 and later).
    Ptx,
    /// Scoped C11: CUDA C++ (libcu++) and OpenCL 2.0 atomics with scopes.
    Src11,
    /// Both: scoped C11, then PTX after compiling, and where they disagree.
    Both,
}

/// The `--progress` choices: forward-progress models across blocks (Sorensen et al., CONCUR 2018).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ProgressArg {
    /// Every block is eventually scheduled.
    Fair,
    /// Occupancy-bound: running blocks keep running; only `--resident-blocks` run at once.
    Obe,
    /// Only the lowest-numbered unfinished block is guaranteed progress.
    Hsa,
    /// Occupancy-bound with blocks started in order.
    Lobe,
    /// No block is guaranteed to be scheduled while another spins.
    Unfair,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Args, Clone, Debug)]
pub struct CheckFlags {
    /// The memory model to check against (default: the test's own: `ptx` for PTX tests, `src11`
    /// for C tests).
    #[arg(long, value_enum)]
    model: Option<Model>,
    /// How often one backward branch may be taken in one execution (await loops are explored
    /// by their exiting iteration and do not need it).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_UNROLL)]
    unroll: u32,
    /// Forward-progress model across blocks, for finding hangs.
    #[arg(long, value_enum, default_value_t = ProgressArg::Obe)]
    progress: ProgressArg,
    /// Independent thread scheduling within a warp (`off` models pre-Volta lockstep).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    its: OnOff,
    /// How many blocks of one GPU are resident at once (default: all).
    #[arg(long, value_name = "N")]
    resident_blocks: Option<u32>,
}

impl CheckFlags {
    /// The models to check against, in order: one, or with `--model both` the language's
    /// (scoped C11) then the hardware's (PTX).
    pub fn models(&self) -> Vec<Option<ModelKind>> {
        match self.model {
            None => vec![None],
            Some(Model::Ptx) => vec![Some(ModelKind::Ptx)],
            Some(Model::Src11) => vec![Some(ModelKind::Src11)],
            Some(Model::Both) => vec![Some(ModelKind::Src11), Some(ModelKind::Ptx)],
        }
    }

    /// The options for the first model of `models()`.
    pub fn check_options(&self) -> CheckOptions {
        let progress = match self.progress {
            ProgressArg::Fair => Progress::Fair,
            ProgressArg::Obe => Progress::Obe,
            ProgressArg::Hsa => Progress::Hsa,
            ProgressArg::Lobe => Progress::Lobe,
            ProgressArg::Unfair => Progress::Unfair,
        };
        CheckOptions {
            model: self.models()[0],
            unroll: self.unroll,
            scheduler: Scheduler {
                progress,
                its: self.its == OnOff::On,
                resident_blocks: self.resident_blocks,
            },
        }
    }
}
