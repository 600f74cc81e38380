//! `scopecheck`: checks GPU litmus tests against scoped memory models.
//!
//! A thin layer over the library crates: argument parsing here, one module per subcommand
//! (`check`, `bench`), one file from loading (`scopecheck_frontend::load`) to its verdicts
//! (`pipeline`), the input flags (`inputs`), how errors are shown (`render`) and the SARIF log
//! of `check --sarif` (`sarif`).
//!
//! Exit status (`ci`): 0 when every file was checked and no finding `check --fail-on` names
//! was made (by default none is named: 0 whatever the verdicts), 1 when some file could not be
//! read, parsed or checked, or a report, picture or log could not be written (this wins over
//! findings), 2 for bad usage (an output that cannot be made where it was asked for
//! included), 3 for a finding `--fail-on` names, 4 when `--fail-on unknown` and some verdict
//! is Unknown but nothing else was found. Every write is checked (`output`).

mod bench;
mod caps;
mod check;
mod ci;
mod cost;
mod costs;
mod file_report;
mod inputs;
mod kernel_flags;
mod memory;
mod mutants;
mod native;
mod native_report;
mod options;
mod output;
mod pipeline;
mod progress;
mod render;
mod run;
mod sarif;
mod supervise;
mod tune;
mod unoptimized;
mod work_bound;

use std::process::ExitCode;

/// The explorer allocates and frees many small relations and states per execution; glibc's
/// allocator spent a third of the run time on them.
/// Counted, for `--max-memory` (`memory`).
#[global_allocator]
static ALLOCATOR: memory::Counting<mimalloc::MiMalloc> = memory::Counting(mimalloc::MiMalloc);

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
    let matches =
        Cli::command().get_matches_from(kernel_flags::nvcc_spellings(std::env::args_os()));
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    output::watch_reader();
    // Every thread that reads or checks a file gets the large stack `scopecheck_frontend::WORKER_STACK`: the
    // global pool's (which the search hands subtrees to) and the one the subcommand runs on.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(scopecheck_frontend::WORKER_STACK)
        .build_global();
    let status = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("scopecheck".into())
            .stack_size(scopecheck_frontend::WORKER_STACK)
            .spawn_scoped(s, || dispatch(cli, &matches))
            .map(|t| t.join())
    });
    match status {
        Ok(Ok(status)) => ExitCode::from(with_output_checked(status)),
        // A panic outside every per-file guard: the hook has printed it; the status is
        // Rust's for a panic.
        Ok(Err(_)) => ExitCode::from(101),
        // No thread could be made: run here, with the main thread's stack.
        Err(_) => {
            let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
            ExitCode::from(with_output_checked(dispatch(cli, &matches)))
        }
    }
}

/// Runs the subcommand; returns its exit status.
fn dispatch(cli: Cli, matches: &clap::ArgMatches) -> u8 {
    match cli.command {
        Command::Check(args) => {
            let given = matches
                .subcommand_matches("check")
                .map(options::given_on_command_line)
                .unwrap_or_default();
            check::run(args, &given)
        }
        Command::Tune(args) => {
            let given = matches
                .subcommand_matches("tune")
                .map(options::given_on_command_line)
                .unwrap_or_default();
            tune::run(args, &given)
        }
        Command::Bench(args) => passed(bench::run(args)),
        Command::Run(args) => passed(run::run(args)),
        Command::Caps(args) => passed(caps::run(&args)),
        Command::Cost(args) => passed(cost::run(&args)),
    }
}

/// The status of a subcommand that says only whether everything went well.
fn passed(all_done: bool) -> u8 {
    if all_done {
        ci::EXIT_OK
    } else {
        ci::EXIT_INPUT_ERROR
    }
}

/// `status`, or 1 when the reports could not all be written to standard output: a run whose
/// output was lost proves nothing, whatever it found. Bad usage (2) stays 2.
pub fn with_output_checked(status: u8) -> u8 {
    match output::finish() {
        Ok(()) => status,
        Err(why) => {
            output::errln!("error: {why}");
            if status == ci::EXIT_USAGE {
                status
            } else {
                ci::EXIT_INPUT_ERROR
            }
        }
    }
}
