//! `scopecheck check`: read, parse, check and report each file; files are checked in parallel
//! and reported in input order as soon as every earlier file has been.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::mpsc;

use clap::Args;
use rayon::prelude::*;
use scopecheck_frontend::{Harness, Input};
use scopecheck_model::suggest::CostTable;
use scopecheck_model::CheckOptions;

use crate::file_report::{self, Mode};
use crate::inputs;
use crate::options::CheckFlags;
use crate::output::errln;
use crate::pipeline::{check_file, CommandLine};
use crate::sarif::SarifOutput;
use crate::{ci, costs};

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    flags: CheckFlags,
    /// Print one JSON object per file (NDJSON, see docs/json.md) instead of text.
    #[arg(long)]
    json: bool,
    /// Also write one SARIF 2.1.0 log of the whole run to FILE, for code scanning
    /// (docs/sarif.md); `-` writes it to standard output in place of the text reports (not
    /// with --json).
    #[arg(long, value_name = "FILE")]
    sarif: Option<PathBuf>,
    /// For a test that is not right (its requirement fails, it races under a language model,
    /// or it may hang), search for the cheapest strengthening that makes it right.
    #[arg(long)]
    suggest: bool,
    /// The cost table suggestions are priced with (`scopecheck cost --toml`; default: the one
    /// measured on an H200).
    #[arg(long, value_name = "FILE.toml", requires = "suggest")]
    cost_file: Option<PathBuf>,
    /// Write pictures of the executions behind each verdict into DIR (created if needed), as
    /// Graphviz DOT and as SVG: NAME.MODEL.witness.dot/.svg (the execution that shows the
    /// answer, or the first one), and for a wrong program NAME.MODEL.counterexample.dot/.svg
    /// (the race, or the execution breaking the requirement). NAME is the file's stem.
    #[arg(long, value_name = "DIR")]
    graph: Option<PathBuf>,
    #[command(flatten)]
    ci: crate::ci::CiFlags,
    #[command(flatten)]
    input: inputs::InputFlags,
    /// Test files (.litmus, .cu, .cl, .ptx), or directories to search recursively for *.litmus,
    /// *.cu and *.cl files (and *.ptx files, with --harness).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// Runs `check`; returns the exit status (`crate::ci`). `given`: the ids of the options the
/// command line gave explicitly, which a file's own options do not override.
pub fn run(mut args: CheckArgs, given: &[String]) -> u8 {
    args.input.apply(&mut args.flags);
    let args = &args;
    let harness = args.flags.cuda_options().harness;
    let inputs = args.ci.shard(scopecheck_frontend::expand_kernels(
        inputs::collect(&args.paths, harness.as_deref()),
        &args.flags.cuda_options(),
        args.flags.check_options().timeout,
        args.flags.max_file_size,
    ));
    let opts = match check_options(args) {
        Ok(opts) => opts,
        Err(status) => return status,
    };
    let native = native_first(args, inputs);
    if native.inputs.is_empty() && native.ran {
        return native.gate.status(native.ok);
    }
    let inputs = &native.inputs;
    let graph_names = file_report::graph_names(inputs);
    let cuda = args.flags.cuda_options();
    let models = args.flags.models();
    let (costs, mut sarif) = match outputs(args) {
        Ok(outputs) => outputs,
        Err(status) => return status,
    };
    let mode = if sarif.as_ref().is_some_and(|s| s.on_stdout()) {
        Mode::Quiet
    } else if args.json {
        Mode::Json
    } else {
        Mode::Text
    };
    let cli = CommandLine {
        flags: &args.flags,
        given,
        fallbacks: &native.fallbacks,
    };
    let want_sarif = sarif.is_some();
    let (tx, rx) = mpsc::channel();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        if let Some(c) = &opts.progress {
            let done = &done;
            s.spawn(move || crate::progress::show(c, done));
        }
        let (opts, models, cuda, costs) = (&opts, &models, &cuda, &costs);
        let graph_names = &graph_names;
        let cli = &cli;
        let ci = &args.ci;
        s.spawn(move || {
            ci.with_jobs(|| {
                inputs
                    .par_iter()
                    .enumerate()
                    .for_each_with(tx, |tx, (i, input)| {
                        let graphs = args
                            .graph
                            .as_deref()
                            .map(|dir| (dir, graph_names[i].as_str()));
                        let check = || check_file(input, opts, models, cuda, costs.as_ref(), cli);
                        let done = file_report::make(input, check, mode, graphs, want_sarif);
                        // The receiver lives until every result is in.
                        let _ = tx.send((i, done));
                    })
            });
        });
        let mut gate = args.ci.gate();
        let all_checked = write_in_order(rx, inputs, &mut sarif, &mut gate);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        // The JSON lines carry every finding; stderr stays for what stops a file.
        if !args.json {
            for line in gate.summary() {
                errln!("{line}");
            }
        }
        // A log that could not be written fails the run as an unchecked file would.
        let written = match sarif {
            Some(s) => s.finish().map_err(|e| errln!("error: {e}")).is_ok(),
            None => true,
        };
        gate.absorb(native.gate);
        gate.status(all_checked && written && native.ok)
    })
}

/// The options every file is checked with, or the exit status of a usage error (a platform
/// that cannot be read, a graph directory that cannot be made).
fn check_options(args: &CheckArgs) -> Result<CheckOptions, u8> {
    if let Err(e) = args.flags.platform() {
        errln!("error: {e}");
        return Err(ci::EXIT_USAGE);
    }
    let mut opts = args.flags.check_options();
    opts.progress = crate::progress::counters();
    if let Some(dir) = &args.graph {
        if let Err(e) = file_report::prepare_graph_dir(dir) {
            errln!("error: {e}");
            return Err(ci::EXIT_USAGE);
        }
        opts.graphs = true;
    }
    Ok(opts)
}

/// The inputs after the native host runs (`--host native`), which go first.
struct Native {
    /// The inputs left for the pipeline.
    inputs: Vec<Input>,
    /// The native runs' findings.
    gate: ci::Gate,
    /// Whether every native run was checked.
    ok: bool,
    /// Whether any ran.
    ran: bool,
    /// Files whose native run was stopped, with the harness that reads them instead.
    fallbacks: HashMap<String, Harness>,
}

/// Runs the host programs the loader builds (`--host native`), each reported in turn; the
/// other files are left for the pipeline.
fn native_first(args: &CheckArgs, inputs: Vec<Input>) -> Native {
    let mut gate = args.ci.gate();
    let (mut ok, mut ran) = (true, false);
    let mut fallbacks = HashMap::new();
    let inputs = inputs
        .into_iter()
        .filter(
            |i| match crate::native::check(i, &args.flags, args.json, &mut gate) {
                crate::native::Taken::No(harness) => {
                    if let Some(h) = harness {
                        fallbacks.insert(i.file.clone(), h);
                    }
                    true
                }
                crate::native::Taken::Yes(checked) => {
                    ok &= checked;
                    ran = true;
                    false
                }
            },
        )
        .collect();
    Native {
        inputs,
        gate,
        ok,
        ran,
        fallbacks,
    }
}

/// The cost table (with `--suggest`) and the SARIF log (with `--sarif`), or the exit status
/// of a usage error: both are opened before checking, so a bad path is found at once.
fn outputs(args: &CheckArgs) -> Result<(Option<CostTable>, Option<SarifOutput>), u8> {
    let costs = match args
        .suggest
        .then(|| costs::load(args.cost_file.as_deref(), args.flags.max_file_size))
    {
        Some(Err(e)) => {
            errln!("error: {e}");
            return Err(ci::EXIT_USAGE);
        }
        Some(Ok(t)) => Some(t),
        None => None,
    };
    let sarif = match args.sarif.as_deref() {
        Some(path) => match SarifOutput::open(path, args.json) {
            Ok(s) => Some(s),
            Err(e) => {
                errln!("error: {e}");
                return Err(ci::EXIT_USAGE);
            }
        },
        None => None,
    };
    Ok((costs, sarif))
}

/// Writes each file's report as it arrives (in any order) once every file before it is
/// written, adding its findings to `gate` and its results to the SARIF log; whether every
/// file was checked.
fn write_in_order(
    rx: mpsc::Receiver<(usize, file_report::Done)>,
    inputs: &[Input],
    sarif: &mut Option<SarifOutput>,
    gate: &mut ci::Gate,
) -> bool {
    let mut pending = BTreeMap::new();
    let mut next = 0;
    let mut all_checked = true;
    for (i, done) in rx {
        pending.insert(i, done);
        while let Some(done) = pending.remove(&next) {
            let file_report::Done {
                report,
                sarif: results,
                verdicts,
            } = done;
            crate::output::write_err(format_args!("{}", report.stderr));
            crate::output::write_out(format_args!("{}", report.stdout));
            all_checked &= report.ok;
            if let Some(s) = sarif {
                s.push_all(results);
            }
            gate.note(&inputs[next].file, &verdicts);
            next += 1;
        }
    }
    all_checked
}
