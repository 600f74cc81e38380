//! `scopecheck`: checks GPU litmus tests against scoped memory models.
//!
//! A thin layer over the library crates: argument parsing here, one module per subcommand
//! (`check`, `bench`), how inputs are found (`inputs`), how errors are shown (`render`) and
//! the SARIF log of `check --sarif` (`sarif`).
//!
//! Exit status (`ci`): 0 when every file was checked and no finding `check --fail-on` names
//! was made (by default none is named: 0 whatever the verdicts), 1 when some file could not be
//! read, parsed or checked (this wins over findings), 2 for bad usage, 3 for a finding
//! `--fail-on` names, 4 when `--fail-on unknown` and some verdict is Unknown but nothing else
//! was found.

mod bench;
mod caps;
mod check;
mod ci;
mod cost;
mod costs;
mod inputs;
mod mutants;
mod options;
mod progress;
mod render;
mod run;
mod sarif;
mod supervise;
mod tune;

use std::process::ExitCode;

/// The explorer allocates and frees many small relations and states per execution; glibc's
/// allocator spent a third of the run time on them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "scopecheck", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explores every execution of each test (litmus, CUDA, OpenCL, PTX) and reports its final
    /// states and verdict.
    Check(check::CheckArgs),
    /// Measures how fast tests are checked (single thread).
    Bench(bench::BenchArgs),
    /// Runs each litmus test on the GPU under stress and compares what it did with the model.
    Run(run::RunArgs),
    /// Reports the device attributes that decide what each scope can promise.
    Caps(caps::CapsArgs),
    /// Measures what each order and scope costs on the GPU.
    Cost(cost::CostArgs),
    /// For each right test, the narrowest scopes and weakest orders that keep it right, with the
    /// cycles they save.
    Tune(tune::TuneArgs),
}

fn main() -> ExitCode {
    // The matches say which options the command line gave (a litmus file's own options
    // yield to those).
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let all_checked = match cli.command {
        Command::Check(args) => {
            let given = matches
                .subcommand_matches("check")
                .map(options::given_on_command_line)
                .unwrap_or_default();
            return ExitCode::from(check::run(&args, &given));
        }
        Command::Tune(args) => {
            let given = matches
                .subcommand_matches("tune")
                .map(options::given_on_command_line)
                .unwrap_or_default();
            return ExitCode::from(tune::run(&args, &given));
        }
        Command::Bench(args) => bench::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Caps(args) => caps::run(&args),
        Command::Cost(args) => cost::run(&args),
    };
    if all_checked {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(ci::EXIT_INPUT_ERROR)
    }
}
