//! `check --host native`: `.cu` files with a `main()` checked on the native host path
//! (`scopecheck-hostrun`, docs/host.md), reported in text or as one JSON line each.

use scopecheck_frontend::{Input, Kind};
use scopecheck_hostrun::{Ending, HostOptions, HostReport};

use crate::ci::Gate;
use crate::options::CheckFlags;
use crate::output::errln;

/// Whether `input` goes to the native host path: a `.cu` file with its own harness (a kernel
/// file is checked kernel by kernel as before).
pub fn takes(input: &Input, flags: &CheckFlags) -> bool {
    flags.host == crate::options::HostArg::Native
        && input.kernel.is_none()
        && input.problem.is_none()
        && flags.cuda_options().harness.is_none()
        && Kind::of(&input.path) == Kind::Cuda
}

/// Checks `input` on the native host path and prints its report; returns whether it was
/// checked (an error that stops the file is printed on stderr).
pub fn check(input: &Input, flags: &CheckFlags, json: bool, gate: &mut Gate) -> bool {
    let source = match std::fs::read_to_string(&input.path) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {}: {e}", input.file);
            return false;
        }
    };
    let cuda = scopecheck_frontend::list::file_options(&flags.cuda_options(), input);
    let check = flags.check_options();
    let opts = HostOptions {
        max_outcomes: flags.max_outcomes,
        timeout: check.timeout,
        ..HostOptions::default()
    };
    match scopecheck_hostrun::check(&input.path, &source, &cuda, &check, &opts) {
        Ok(r) => {
            let unknown = !r.complete();
            gate.note_native(&input.file, r.failed(), r.racy, r.hangs, unknown);
            if json {
                println!("{}", json_line(&input.file, &r));
            } else {
                print!("{}", text(&input.file, &r));
            }
            true
        }
        Err(e) => {
            errln!("error: {}: {e}", input.file);
            false
        }
    }
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
    processes.sort_by(|a, b| a.path.cmp(&b.path));
    for p in processes {
        let via = if p.path.is_empty() {
            "the program".to_string()
        } else {
            p.path.join(", then ")
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
                "outcomes": p.path,
                "ending": ending(&p.ending),
                "failed": p.failed(),
                "output": p.output,
            })
        })
        .collect();
    serde_json::json!({
        "file": file,
        "harness": "native",
        "result": result(r),
        "racy": r.racy,
        "hangs": r.hangs,
        "processes": processes,
        "findings": r.findings,
        "cut": r.cut,
        "executions": r.executions.to_string(),
        "compile_seconds": r.compile_time.as_secs_f64(),
        "run_seconds": r.run_time.as_secs_f64(),
        "cached": r.cached,
    })
    .to_string()
}
