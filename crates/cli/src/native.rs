//! `check --host native`: `.cu` files whose host program runs natively (the loading entry
//! point, `scopecheck_frontend::load` with `HostMode::Native`, builds them: docs/host.md),
//! run and reported in text or as one JSON line each. A file the loader gives back as a
//! program (its host code needs the interpreted harness, or it has no host program) goes on
//! to the ordinary pipeline, whose report says which harness ran and why.

use scopecheck_frontend::{Harness, HostMode, Input, Kind, Load};
use scopecheck_hostrun::{Ending, HostOptions, HostReport};

use crate::native_report;

use crate::ci::Gate;
use crate::file_report::{self, Mode};
use crate::options::{CheckFlags, HostArg};
use scopecheck_ir::Failure;

/// What [`check`] did with a file.
pub enum Taken {
    /// Not a native host program: the pipeline checks it; with a harness when the native run
    /// was stopped and the interpreted harness reads the file instead (and why).
    No(Option<Harness>),
    /// Run (or stopped by an error, reported); whether it was checked.
    Yes(bool),
}

/// Loads `input` with the native host path asked for; runs a host program the loader built
/// and prints its report (`crate::native_report`).
pub fn check(input: &Input, flags: &CheckFlags, json: bool, gate: &mut Gate) -> Taken {
    let mode = if json { Mode::Json } else { Mode::Text };
    if flags.host != HostArg::Native || Kind::of(&input.path) != Kind::Cuda {
        return Taken::No(None);
    }
    let check = flags.check_options();
    let options = scopecheck_frontend::Options {
        cuda: flags.cuda_options(),
        deadline: check.timeout.map(|t| std::time::Instant::now() + t),
        max_file_size: flags.max_file_size,
        host: HostMode::Native,
        ..Default::default()
    };
    let host = match scopecheck_frontend::load(input, &options) {
        Ok(Load::Read(_)) => return Taken::No(None),
        Ok(Load::Native(host)) => host,
        Err(e) => {
            report_failure(&e, mode);
            return Taken::Yes(false);
        }
    };
    let opts = HostOptions {
        max_outcomes: flags.max_outcomes,
        timeout: check.timeout,
        ..HostOptions::default()
    };
    match host.program.run(&check, &opts) {
        Ok(r) => {
            if let Some(h) = interpreted_instead(input, flags, &r) {
                return Taken::No(Some(h));
            }
            let unknown = !r.complete();
            gate.note_native(&input.file, r.failed(), r.racy, r.hangs, unknown);
            let run = native_report::Run {
                file: &input.file,
                source: &host.source,
                report: &r,
            };
            match mode {
                Mode::Json => {
                    crate::output::write_out(format_args!("{}\n", native_report::json(&run)))
                }
                Mode::Text => {
                    crate::output::write_out(format_args!("{}", native_report::text(&run)))
                }
                Mode::Quiet => {}
            }
            Taken::Yes(true)
        }
        Err(e) => {
            let f = Failure::new(
                &input.file,
                scopecheck_ir::Diagnostic::error(e.to_string()),
                Some(host.source.clone()),
            );
            report_failure(&f, mode);
            Taken::Yes(false)
        }
    }
}

/// A file the native path could not check, reported as any failure is.
fn report_failure(f: &Failure, mode: Mode) {
    let r = file_report::failure(f, mode);
    crate::output::write_err(format_args!("{}", r.stderr));
    crate::output::write_out(format_args!("{}", r.stdout));
}

/// When scopecheck stopped a process of the run (a call or a device side the native path
/// does not model yet) and nothing failed, the interpreted harness checks the file instead,
/// if it reads it: its verdict is complete where the native run's would be Unknown. A run
/// that found a failure keeps its report.
fn interpreted_instead(input: &Input, flags: &CheckFlags, r: &HostReport) -> Option<Harness> {
    if r.failed() {
        return None;
    }
    let why = r.processes.iter().find_map(|p| match &p.ending {
        Ending::Stopped(why) => Some(why.clone()),
        _ => None,
    })?;
    let options = scopecheck_frontend::Options {
        cuda: flags.cuda_options(),
        ptx_fallback: true,
        max_file_size: flags.max_file_size,
        ..Default::default()
    };
    scopecheck_frontend::load(input, &options).ok()?;
    Some(Harness {
        name: "interpreted",
        why: format!("the native run was stopped ({why}); the interpreted harness reads the file"),
    })
}
