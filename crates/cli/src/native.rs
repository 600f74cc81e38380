//! `check --host native`: `.cu` files whose host program runs natively (the loading entry
//! point, `scopecheck_frontend::load` with `HostMode::Native`, builds them: docs/host.md),
//! run and reported in text or as one JSON line each. A file the loader gives back as a
//! program (its host code needs the interpreted harness, or it has no host program) goes on
//! to the ordinary pipeline, whose report says which harness ran and why.

use scopecheck_frontend::{Harness, HostMode, Input, Kind, Load};
use scopecheck_hostrun::{Ending, HostOptions, HostReport};

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
/// and prints its report.
pub fn check(input: &Input, flags: &CheckFlags, json: bool, gate: &mut Gate) -> Taken {
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
            let f = e;
            let r = file_report::failure(&f, if json { Mode::Json } else { Mode::Text });
            crate::output::write_err(format_args!("{}", r.stderr));
            crate::output::write_out(format_args!("{}", r.stdout));
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
            if json {
                println!("{}", json_line(&input.file, &r));
            } else {
                print!("{}", text(&input.file, &r));
            }
            Taken::Yes(true)
        }
        Err(e) => {
            let f = Failure::new(
                &input.file,
                scopecheck_ir::Diagnostic::error(e.to_string()),
                Some(host.source.clone()),
            );
            let r = file_report::failure(&f, if json { Mode::Json } else { Mode::Text });
            crate::output::write_err(format_args!("{}", r.stderr));
            crate::output::write_out(format_args!("{}", r.stdout));
            Taken::Yes(false)
        }
    }
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

/// The result in one word: `No` when some process or kernel assertion failed, `Unknown`
/// when some outcome was not run to its end, `Ok` otherwise.
fn result(r: &HostReport) -> &'static str {
    if r.failed() {
        "No"
    } else if !r.complete() {
        "Unknown"
    } else {
        "Ok"
    }
}

fn ending(e: &Ending) -> String {
    match e {
        Ending::Exit(0) => "exit 0".into(),
        Ending::Exit(c) => format!("exit {c}: FAILED"),
        Ending::Signal(6) => "abort (SIGABRT): FAILED".into(),
        Ending::Signal(s) => format!("signal {s}: FAILED"),
        Ending::Stopped(why) => format!("stopped by scopecheck: {why}"),
        Ending::Lost => "not finished (the run was cut)".into(),
    }
}

fn text(file: &str, r: &HostReport) -> String {
    let mut s = format!(
        "Test {file} (native host: built by {} in {:.2} s{}, {} process{} in {:.2} s, {} device executions)\n",
        r.compiler,
        r.compile_time.as_secs_f64(),
        if r.cached { ", cached" } else { "" },
        r.processes.len(),
        if r.processes.len() == 1 { "" } else { "es" },
        r.run_time.as_secs_f64(),
        r.executions
    );
    let mut processes: Vec<_> = r.processes.iter().collect();
    processes.sort_by_key(|p| p.forks());
    for p in processes {
        let forks = p.forks();
        let via = if forks.is_empty() {
            "the program".to_string()
        } else {
            forks.join(", then ")
        };
        s.push_str(&format!("  {via}: {}\n", ending(&p.ending)));
        if p.failed() {
            for line in p
                .output
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
            {
                s.push_str(&format!("    | {line}\n"));
            }
        }
    }
    for f in &r.findings {
        s.push_str(&format!("  {f}\n"));
    }
    if let Some(cut) = &r.cut {
        s.push_str(&format!("  cut: {cut}\n"));
    }
    let racy = if r.racy { " (racy)" } else { "" };
    s.push_str(&format!("Result: {}{racy}\n\n", result(r)));
    s
}

fn json_line(file: &str, r: &HostReport) -> String {
    let processes: Vec<serde_json::Value> = r
        .processes
        .iter()
        .map(|p| {
            serde_json::json!({
                "outcomes": p.forks(),
                "ending": ending(&p.ending),
                "failed": p.failed(),
                "output": p.output,
            })
        })
        .collect();
    serde_json::json!({
        "file": file,
        "harness": "native",
        "harness_reason": "the host program is compiled and run (--host native)",
        "result": result(r),
        "racy": r.racy,
        "hangs": r.hangs,
        "processes": processes,
        "findings": r.findings.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
        "cut": r.cut,
        "executions": r.executions.to_string(),
        "compile_seconds": r.compile_time.as_secs_f64(),
        "run_seconds": r.run_time.as_secs_f64(),
        "cached": r.cached,
    })
    .to_string()
}
