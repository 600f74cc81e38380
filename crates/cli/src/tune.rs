//! `scopecheck tune`: for each right test, the maximal sets of weakenings (narrower scopes,
//! weaker orders, fences removed, RMWs made loads or stores) that keep every verdict, with the
//! cycles each saves. The search is `scopecheck_model::tune`, the report
//! `scopecheck_report::tune`; here only reading files and printing.
//!
//! Exit status: 0 when every file was tuned (or had nothing to weaken), 1 when some file could
//! not be read, parsed or checked, 2 for bad usage, 3 when some test is not right (nothing to
//! tune: `check --suggest` is the search for it), 4 when some search was cut short or a test's
//! own check was incomplete. The first of 1, 3, 4 that applies wins.

use crate::render::Render;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use clap::Args;
use scopecheck_ir::Arch;
use scopecheck_model::tune::{self, Tuning};
use scopecheck_model::{CheckOptions, ModelKind};
use scopecheck_report::tune::Dialect;

use crate::ci;
use crate::inputs;
use crate::options::CheckFlags;
use crate::output::{errln, outln};
use crate::pipeline::{self, CommandLine};
use scopecheck_frontend::{Input, Kind};
use scopecheck_ir::Failure;

#[derive(Args)]
pub struct TuneArgs {
    #[command(flatten)]
    flags: CheckFlags,
    /// Print one JSON object per file (NDJSON, see docs/json.md) instead of text.
    #[arg(long)]
    json: bool,
    /// The cost table the savings are priced with (`scopecheck cost --toml`; default: the one
    /// measured on an H200).
    #[arg(long, value_name = "FILE.toml")]
    cost_file: Option<PathBuf>,
    /// The most re-checks of weakened programs one file's search may spend; the report says
    /// when it was cut.
    #[arg(long, value_name = "N", default_value_t = tune::DEFAULT_MAX_CHECKS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_checks: usize,
    /// Also write the weakenings found as a SARIF 2.1.0 log (`tune-weakening` notes, one per
    /// change of each maximal set; docs/sarif.md); `-` for standard output instead of the text
    /// reports.
    #[arg(long, value_name = "FILE.sarif")]
    sarif: Option<PathBuf>,
    #[command(flatten)]
    input: inputs::InputFlags,
    /// Test files (.litmus, .cu, .cl, .ptx), or directories to search recursively for them, as
    /// `check` takes them.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// The language a file's changes are spelled in.
fn dialect(input: &Input, c: &pipeline::Checked) -> Dialect {
    let kind = Kind::of(&input.path);
    match c.program.arch {
        // A `.cu` file read as its PTX view, or a `.ptx` module.
        Arch::Ptx => Dialect::Ptx,
        _ if kind == Kind::Cuda => Dialect::Cuda,
        _ if kind == Kind::OpenCl => Dialect::OpenCl,
        _ => Dialect::LitmusC,
    }
}

/// Runs `tune`; returns the exit status.
pub fn run(mut args: TuneArgs, given: &[String]) -> u8 {
    args.input.apply(&mut args.flags);
    let args = &args;
    if let Err(e) = args.flags.platform() {
        errln!("error: {e}");
        return 2;
    }
    let table = match crate::costs::load(args.cost_file.as_deref(), args.flags.max_file_size) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let mut sarif = match args
        .sarif
        .as_deref()
        .map(|p| crate::sarif::SarifOutput::open(p, args.json))
    {
        Some(Err(e)) => {
            errln!("error: {e}");
            return 2;
        }
        Some(Ok(s)) => Some(s),
        None => None,
    };
    let quiet = sarif.as_ref().is_some_and(|s| s.on_stdout());
    let cuda = args.flags.cuda_options();
    let inputs = inputs::collect(&args.paths, cuda.harness.as_deref());
    let opts = args.flags.check_options();
    let models = args.flags.models();
    let none = std::collections::HashMap::new();
    let cli = CommandLine {
        flags: &args.flags,
        given,
        fallbacks: &none,
    };
    let (mut failed, mut wrong, mut unsettled) = (false, false, false);
    for input in &inputs {
        let checked = match crate::render::guarded(&input.file, || {
            pipeline::check_file(input, &opts, &models, &cuda, None, &cli)
        }) {
            Ok(c) => c,
            Err(f) => {
                failed = true;
                report_failure(&f, args.json || quiet);
                if let Some(s) = &mut sarif {
                    s.add_failure(&f);
                }
                continue;
            }
        };
        let (names, tuning) = match tune_checked(input, &checked, &table, args.max_checks) {
            Ok(t) => t,
            Err(f) => {
                failed = true;
                report_failure(&f, args.json);
                continue;
            }
        };
        match &tuning {
            Tuning::NotRight(_) => wrong = true,
            Tuning::Unsettled(_) => unsettled = true,
            Tuning::Tuned(t) => unsettled |= t.incomplete.is_some(),
        }
        let d = dialect(input, &checked);
        if let Some(s) = &mut sarif {
            s.push_all(scopecheck_report::tune::tune_sarif(
                &input.file,
                &tuning,
                d,
                &checked.source,
            ));
            if quiet {
                continue;
            }
        }
        let mut out = String::new();
        if args.json {
            let line = scopecheck_report::tune::tune_json(
                &input.file,
                &checked.program,
                &names,
                &tuning,
                d,
                &checked.source,
            );
            let _ = writeln!(out, "{line}");
        } else {
            text_report(&mut out, input, &checked, &names, &tuning, d);
        }
        crate::output::write_out(format_args!("{out}"));
    }
    if let Some(s) = sarif {
        if let Err(e) = s.finish() {
            errln!("error: {e}");
            return ci::EXIT_INPUT_ERROR;
        }
    }
    if failed {
        ci::EXIT_INPUT_ERROR
    } else if wrong {
        ci::EXIT_FINDINGS
    } else if unsettled {
        ci::EXIT_UNKNOWN
    } else {
        ci::EXIT_OK
    }
}

/// Tunes `checked` under each of its models; the models' names and the tuning, or why it
/// failed (an error in checking the program, or a panic).
fn tune_checked(
    input: &Input,
    checked: &pipeline::Checked,
    table: &scopecheck_model::suggest::CostTable,
    max_checks: usize,
) -> Result<(Vec<&'static str>, Tuning), Box<Failure>> {
    let per_model: Vec<CheckOptions> = checked
        .models
        .iter()
        .map(|m| CheckOptions {
            model: *m,
            progress: None,
            ..checked.options.clone()
        })
        .collect();
    let names: Vec<&str> = checked
        .models
        .iter()
        .map(|m| {
            m.unwrap_or(ModelKind::for_dialect(checked.program.arch))
                .name()
        })
        .collect();
    let found = catch_unwind(AssertUnwindSafe(|| {
        tune::tune(&checked.program, &per_model, table, max_checks)
    }));
    match found {
        Ok(Ok(t)) => Ok((names, t)),
        Ok(Err(e)) => Err(crate::render::check_failure(
            &input.file,
            checked.source.clone(),
            &checked.program,
            &e,
        )),
        Err(payload) => Err(Failure::internal(
            &input.file,
            Some(checked.source.clone()),
            &scopecheck_frontend::deadline::panic_message(&*payload),
        )),
    }
}

/// The text report of one file: the front-end's warnings, notes on how it was read, and the
/// tuning.
fn text_report(
    out: &mut String,
    input: &Input,
    checked: &pipeline::Checked,
    names: &[&str],
    tuning: &Tuning,
    d: Dialect,
) {
    for w in &checked.warnings {
        let _ = writeln!(out, "Warning line {}: {}", w.line(), w.message);
    }
    if d == Dialect::Ptx && input.path.extension().is_some_and(|e| e != "litmus") {
        let _ = writeln!(
                    out,
                    "Note: this file is tuned as the PTX NVRTC compiles it to: the spellings are PTX, at the lines of the .cu file they come from"
                );
    }
    if checked.ptx_view.is_some() {
        let _ = writeln!(
                    out,
                    "Note: weakened programs are checked under ptx through scopecheck's own mapping of the C++ operations, not NVRTC's code"
                );
    }
    let _ = writeln!(
        out,
        "{}",
        scopecheck_report::tune::tune_text(
            &checked.program,
            names,
            tuning,
            d,
            &checked.source,
            &input.file,
        )
    );
}

fn report_failure(f: &Failure, json: bool) {
    if json {
        outln!("{}", f.json());
    } else {
        f.eprint();
    }
}
