//! `scopecheck check`: read, parse, check and report each file; files are checked in parallel
//! and reported in input order as soon as every earlier file has been.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;

use clap::Args;
use rayon::prelude::*;
use scopecheck_frontend::Input;

use crate::file_report::{self, Mode};
use crate::inputs;
use crate::options::CheckFlags;
use crate::output::errln;
use crate::pipeline::{check_file, CommandLine};
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
    if let Err(e) = args.flags.platform() {
        errln!("error: {e}");
        return ci::EXIT_USAGE;
    }
    let mut opts = args.flags.check_options();
    opts.progress = crate::progress::counters();
    if let Some(dir) = &args.graph {
        if let Err(e) = file_report::prepare_graph_dir(dir) {
            errln!("error: {e}");
            return ci::EXIT_USAGE;
        }
        opts.graphs = true;
    }
    // `--host native`: host programs the loader builds run first, each reported in turn;
    // the other files are checked as before.
    let mut native_gate = args.ci.gate();
    let (mut native_ok, mut native_ran) = (true, false);
    let mut fallbacks = std::collections::HashMap::new();
    let inputs: Vec<Input> = inputs
        .into_iter()
        .filter(
            |i| match crate::native::check(i, &args.flags, args.json, &mut native_gate) {
                crate::native::Taken::No(harness) => {
                    if let Some(h) = harness {
                        fallbacks.insert(i.file.clone(), h);
                    }
                    true
                }
                crate::native::Taken::Yes(ok) => {
                    native_ok &= ok;
                    native_ran = true;
                    false
                }
            },
        )
        .collect();
    if inputs.is_empty() && native_ran {
        return native_gate.status(native_ok);
    }
    let graph_names = file_report::graph_names(&inputs);
    let cuda = args.flags.cuda_options();
    let models = args.flags.models();
    let costs = match args
        .suggest
        .then(|| costs::load(args.cost_file.as_deref(), args.flags.max_file_size))
    {
        Some(Err(e)) => {
            errln!("error: {e}");
            return ci::EXIT_USAGE;
        }
        Some(Ok(t)) => Some(t),
        None => None,
    };
    // Opened before checking: a path that cannot be written is bad usage, found at once.
    let mut sarif = match args.sarif.as_deref() {
        Some(path) => match crate::sarif::SarifOutput::open(path, args.json) {
            Ok(s) => Some(s),
            Err(e) => {
                errln!("error: {e}");
                return ci::EXIT_USAGE;
            }
        },
        None => None,
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
        fallbacks: &fallbacks,
    };
    let want_sarif = sarif.is_some();
    let (tx, rx) = mpsc::channel();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        if let Some(c) = &opts.progress {
            let done = &done;
            s.spawn(move || crate::progress::show(c, done));
        }
        let (inputs, opts, models, cuda, costs) = (&inputs, &opts, &models, &cuda, &costs);
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
        // Results arrive in any order; print each once all before it are printed.
        let mut pending = BTreeMap::new();
        let mut next = 0;
        let mut all_checked = true;
        let mut gate = args.ci.gate();
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
                if let Some(s) = &mut sarif {
                    s.push_all(results);
                }
                gate.note(&inputs[next].file, &verdicts);
                next += 1;
            }
        }
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
        gate.absorb(native_gate);
        gate.status(all_checked && written && native_ok)
    })
}
