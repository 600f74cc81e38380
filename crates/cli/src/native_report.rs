//! The report of a native host run (docs/host.md), made from the run's data as the
//! interpreted harness's report is made from its verdict: text with `Witness` and `Race`
//! lines and the miette diagnostics of `render` (the failed process at its assertion, with
//! the reads of the device executions that led there; each race with both accesses labelled),
//! a JSON line with the interpreted report's keys where they mean the same (docs/json.md) and
//! the native path's own (`harness`, `processes`, `compile_seconds`, ...).

use std::fmt::Write as _;

use scopecheck_hostrun::finding::{Read, Site, Waiting};
use scopecheck_hostrun::{Ending, Finding, HostReport, ProcessResult, Step};
use scopecheck_ir::Span;
use scopecheck_report::sarif::rules;
use scopecheck_report::words;
use serde_json::{json, Value};

/// One native run and the file it ran: what every part of its report is made from.
pub struct Run<'a> {
    pub file: &'a str,
    /// The file's text, which the labels point into.
    pub source: &'a str,
    pub report: &'a HostReport,
}

/// The result in one word: `No` when some process or kernel assertion failed, `Unknown`
/// when some outcome was not run to its end, `Ok` otherwise.
pub fn result(r: &HostReport) -> &'static str {
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

/// The processes in the order reports list them: by the outcomes that tell them apart, each
/// observation's outcomes in their order (outcome 2 before outcome 10), a stop after them.
fn listed(r: &HostReport) -> Vec<&ProcessResult> {
    let mut processes: Vec<&ProcessResult> = r.processes.iter().collect();
    processes.sort_by_cached_key(|p| {
        p.path
            .iter()
            .filter_map(|s| match s {
                Step::Observed { of: 1, .. } => None,
                Step::Observed { at, outcome, .. } => Some((at.clone(), *outcome, String::new())),
                Step::Stopped(why) => Some((Default::default(), usize::MAX, why.clone())),
            })
            .collect::<Vec<_>>()
    });
    processes
}

/// The failed process the report shows with its witness: the first listed. (Every failed
/// process is listed with its outcomes; one witness, as the interpreted report gives one.)
fn shown_failure(r: &HostReport) -> Option<&ProcessResult> {
    listed(r).into_iter().find(|p| p.failed())
}

/// The observations on a process's way, each with the outcome taken and its witness.
fn observations(p: &ProcessResult) -> Vec<(&Step, &[Read])> {
    p.path
        .iter()
        .filter_map(|s| match s {
            Step::Observed { witness, .. } => Some((s, witness.as_slice())),
            Step::Stopped(_) => None,
        })
        .collect()
}

/// The line of `file` a failed process's output names last (`file:LINE:`, as `assert` and the
/// usual error-check macros print it), as the span of that line's text.
fn failure_site(run: &Run, p: &ProcessResult) -> Option<Span> {
    let name = std::path::Path::new(run.file).file_name()?.to_str()?;
    let line = p.output.lines().rev().find_map(|l| named_line(l, name))?;
    whole_line(run, line)
}

/// The line `text` names in the file called `name`: `name:LINE:` where `name` starts the text
/// or follows a path separator or a space (`data.cu:3:` does not name `a.cu`).
fn named_line(text: &str, name: &str) -> Option<u32> {
    text.match_indices(name).find_map(|(i, _)| {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| !matches!(c, '/' | '\\' | ' ' | '\t' | '(' | '"' | '\'')) {
            return None;
        }
        let rest = text[i + name.len()..].strip_prefix(':')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        rest[digits.len()..]
            .starts_with(':')
            .then(|| digits.parse().ok())?
    })
}

fn whole_line(run: &Run, line: u32) -> Option<Span> {
    let site = Site {
        file: run.file.to_string(),
        line,
        column: 0,
        len: 0,
        text: String::new(),
    };
    site.span(run.source)
}

/// A site's span in the checked file; none for a site in another file (a header).
fn span(run: &Run, site: &Site) -> Option<Span> {
    (site.file == run.file).then(|| site.span(run.source))?
}

fn read_label(r: &Read) -> String {
    words::read_label(
        &r.thread,
        &r.location,
        r.value,
        r.from.as_ref().map(|w| (w.thread.as_str(), w.site.line)),
    )
}

fn at<'a>(thread: &'a str, site: &'a Site) -> words::At<'a> {
    words::At {
        thread,
        line: site.line,
        text: &site.text,
    }
}

fn read_line(r: &Read) -> String {
    words::read_line(
        at(&r.thread, &r.site),
        &r.location,
        r.value,
        r.from.as_ref().map(|w| at(&w.thread, &w.site)),
    )
}

/// Labels at the reads of a witness that lie in the checked file.
fn read_labels(run: &Run, reads: &[Read]) -> Vec<(Span, String)> {
    reads
        .iter()
        .filter_map(|r| Some((span(run, &r.site)?, read_label(r))))
        .collect()
}

/// The diagnostics of a run, most serious first (a failed process, a failed kernel
/// assertion, races, hangs, faults), and the span of what the run requires (the assertion the shown
/// failure breaks, else the first observation on its way), which SARIF places it at.
pub fn diagnostics(run: &Run) -> (Option<Span>, Vec<scopecheck_report::Finding>) {
    let r = run.report;
    let mut out = Vec::new();
    let mut required = None;
    if let Some(p) = shown_failure(r) {
        let mut labels = Vec::new();
        let at = failure_site(run, p);
        if let Some(s) = at {
            let text = if p.output.contains("Assertion") {
                "this assertion fails"
            } else {
                "the host program fails here (its output names this line)"
            };
            labels.push((s, text.to_string()));
        }
        for (step, reads) in observations(p) {
            if let Step::Observed {
                at, outcome, of, ..
            } = step
            {
                if let Some(s) = (at.file == run.file)
                    .then(|| whole_line(run, at.line))
                    .flatten()
                {
                    required = required.or(Some(s));
                    let text = format!("the host observes outcome {outcome} of {of} here");
                    labels.push((s, text));
                }
            }
            labels.extend(read_labels(run, reads));
        }
        required = at.or(required);
        let forks = p.forks();
        let via = if forks.is_empty() {
            String::new()
        } else {
            format!(" (after {})", forks.join(", then "))
        };
        let what = match p.ending {
            Ending::Exit(c) => format!("it exits with {c}"),
            Ending::Signal(6) => "it aborts (SIGABRT)".to_string(),
            Ending::Signal(s) => format!("it is killed by signal {s}"),
            _ => ending(&p.ending),
        };
        out.push(scopecheck_report::Finding {
            severity: "error",
            kind: "assertion",
            rule: rules::REQUIREMENT_FAILS.id,
            message: format!("the host program can fail: {what}{via}"),
            labels,
            help: Some(
                "the labels show the device execution that led there (the reads of each observation's outcome)"
                    .into(),
            ),
        });
    }
    for f in &r.findings {
        match f {
            Finding::DeviceAssert {
                launched_at,
                witness,
            } => out.push(scopecheck_report::Finding {
                severity: "error",
                kind: "assertion",
                rule: rules::REQUIREMENT_FAILS.id,
                message: format!(
                    "an assertion in a kernel can fail (the launches from {launched_at})"
                ),
                labels: read_labels(run, witness),
                help: Some("the labels show one execution that breaks it".into()),
            }),
            Finding::Race {
                kind,
                first,
                second,
                ..
            } => {
                let labels = [first, second]
                    .into_iter()
                    .filter_map(|a| {
                        let label = words::access_label(&a.thread, a.write, &a.location);
                        Some((span(run, &a.site)?, label))
                    })
                    .collect();
                out.push(words::race_finding(*kind, &first.location, labels));
            }
            Finding::Hang {
                waiting,
                progress,
                reason,
                ..
            } => {
                let labels = waiting
                    .iter()
                    .filter_map(|w| Some((span(run, &w.site)?, words::waits_label(&w.thread))))
                    .collect();
                out.push(words::hang_finding(progress, reason, labels));
            }
            // As the interpreted harness reports a fault: at its instruction, "here".
            Finding::Fault {
                site: Some(site),
                message,
                ..
            } => out.push(scopecheck_report::Finding {
                severity: "error",
                kind: "fault",
                rule: rules::INPUT_ERROR.id,
                message: format!("a fault on the device: {message}"),
                labels: span(run, site)
                    .map(|s| vec![(s, "here".to_string())])
                    .unwrap_or_default(),
                help: Some(
                    "the process that reached it was stopped: what it would do next is not checked"
                        .into(),
                ),
            }),
            _ => {}
        }
    }
    // Failures first, as the interpreted report puts its requirement first.
    out.sort_by_key(|f| f.kind != "assertion");
    (required, out)
}

/// Why the run is incomplete, if it is: the cut, a process stopped or lost, or an
/// exploration cut short.
fn incomplete_reason(r: &HostReport) -> Option<String> {
    if r.complete() {
        return None;
    }
    if let Some(cut) = &r.cut {
        return Some(cut.clone());
    }
    let stopped = r.processes.iter().find_map(|p| match &p.ending {
        Ending::Stopped(why) => Some(format!("a process was stopped: {why}")),
        Ending::Lost => Some("a process did not finish".to_string()),
        _ => None,
    });
    stopped.or_else(|| {
        r.findings.iter().find_map(|f| match f {
            Finding::Incomplete { .. } => Some(f.to_string()),
            _ => None,
        })
    })
}

/// The text report: the header line (the host was built and run), each process, the witness
/// of the failure shown, races and hangs as the interpreted report lists them, what else was
/// found, the result, then the diagnostics.
pub fn text(run: &Run) -> String {
    let (file, r) = (run.file, run.report);
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
    for p in listed(r) {
        let forks = p.forks();
        let via = if forks.is_empty() {
            "the program".to_string()
        } else {
            forks.join(", then ")
        };
        let _ = writeln!(s, "  {via}: {}", ending(&p.ending));
        if p.failed() {
            let lines: Vec<&str> = p.output.lines().collect();
            for line in &lines[lines.len().saturating_sub(5)..] {
                let _ = writeln!(s, "    | {line}");
            }
        }
    }
    witness_text(r, &mut s);
    findings_text(run, &mut s);
    if let Some(cut) = &r.cut {
        let _ = writeln!(s, "  cut: {cut}");
    }
    let racy = if r.racy { " (racy)" } else { "" };
    let _ = writeln!(s, "Result: {}{racy}\n", result(r));
    for d in diagnostics(run).1 {
        let _ = writeln!(s, "{}", crate::render::finding_text(file, run.source, &d));
    }
    s
}

/// `Witness` lines: the reads of each observation on the shown failure's way (headed by the
/// observation when there are several), else of a failed kernel assertion.
fn witness_text(r: &HostReport, s: &mut String) {
    if let Some(p) = shown_failure(r) {
        let steps = observations(p);
        for (step, reads) in &steps {
            if steps.len() > 1 {
                let _ = writeln!(s, "Observed {step}");
            }
            for read in *reads {
                let _ = writeln!(s, "Witness {}", read_line(read));
            }
        }
        return;
    }
    let assert = r.findings.iter().find_map(|f| match f {
        Finding::DeviceAssert { witness, .. } => Some(witness),
        _ => None,
    });
    for read in assert.into_iter().flatten() {
        let _ = writeln!(s, "Witness {}", read_line(read));
    }
}

/// Races (`Racy`, `Race` lines), hangs (`Hang` lines) and the other findings, one line each.
fn findings_text(run: &Run, s: &mut String) {
    let r = run.report;
    let races: Vec<&Finding> = r.findings.iter().filter(|f| f.is_race()).collect();
    if !races.is_empty() {
        let n = races.len();
        let _ = writeln!(
            s,
            "Racy {}: {n} race{}",
            run.file,
            if n == 1 { "" } else { "s" }
        );
    }
    for f in &r.findings {
        match f {
            Finding::Race {
                kind,
                first,
                second,
                launched_at,
            } => {
                let side = |a: &scopecheck_hostrun::finding::Access| {
                    words::access_line(at(&a.thread, &a.site), a.write)
                };
                let line = words::race_line(*kind, &first.location, side(first), side(second));
                let _ = writeln!(s, "{line} (launched at line {})", launched_at.line);
            }
            Finding::Hang {
                waiting,
                progress,
                reason,
                ..
            } => {
                for w in waiting {
                    let _ = writeln!(s, "{}", hang_line(w));
                }
                let _ = writeln!(s, "  under {progress}: {reason}");
            }
            other => {
                let _ = writeln!(s, "  {other}");
            }
        }
    }
}

fn hang_line(w: &Waiting) -> String {
    if w.waits.is_empty() {
        return format!(
            "Hang {} waits forever at line {} (`{}`)",
            w.thread, w.site.line, w.site.text
        );
    }
    let waits: Vec<String> = w.waits.iter().map(|(l, v)| format!("{l}={v}")).collect();
    format!(
        "Hang {} spins forever at line {} (`{}`) reading {}",
        w.thread,
        w.site.line,
        w.site.text,
        waits.join(", ")
    )
}

fn site_json(run: &Run, thread: &str, site: &Site) -> Value {
    let column = span(run, site).map_or(0, |s| s.column);
    json!({
        "thread": thread,
        "file": site.file,
        "line": site.line,
        "column": column,
        "instruction": site.text,
    })
}

fn reads_json(run: &Run, reads: &[Read], observed: Option<String>) -> Vec<Value> {
    reads
        .iter()
        .map(|r| {
            let mut v = site_json(run, &r.thread, &r.site);
            if let Value::Object(m) = &mut v {
                m.insert("location".into(), r.location.clone().into());
                m.insert("value".into(), r.value.into());
                m.insert(
                    "from".into(),
                    r.from
                        .as_ref()
                        .map_or(Value::Null, |w| site_json(run, &w.thread, &w.site)),
                );
                if let Some(o) = &observed {
                    m.insert("observed".into(), o.clone().into());
                }
            }
            v
        })
        .collect()
}

fn races_json(run: &Run) -> Vec<Value> {
    let access = |a: &scopecheck_hostrun::finding::Access| {
        let mut v = site_json(run, &a.thread, &a.site);
        if let Value::Object(m) = &mut v {
            m.insert(
                "access".into(),
                if a.write { "write" } else { "read" }.into(),
            );
        }
        v
    };
    run.report
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::Race {
                kind,
                first,
                second,
                launched_at,
            } => Some(json!({
                "kind": words::race_kind_text(*kind),
                "location": first.location,
                "first": access(first),
                "second": access(second),
                "launched_at": launched_at.to_string(),
            })),
            _ => None,
        })
        .collect()
}

fn hangs_json(run: &Run) -> Vec<Value> {
    let waiting = |w: &Waiting| {
        let mut v = site_json(run, &w.thread, &w.site);
        if let Value::Object(m) = &mut v {
            let waits: serde_json::Map<String, Value> = w
                .waits
                .iter()
                .map(|(l, x)| (l.clone(), Value::from(*x)))
                .collect();
            m.insert("waits".into(), waits.into());
        }
        v
    };
    run.report
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::Hang {
                waiting: w,
                progress,
                reason,
                launched_at,
            } => Some(json!({
                "waiting": w.iter().map(waiting).collect::<Vec<_>>(),
                "progress": progress,
                "reason": reason,
                "launched_at": launched_at.to_string(),
            })),
            _ => None,
        })
        .collect()
}

/// The reads of each observation on a process's way, each with the observation it belongs to.
fn path_witness(run: &Run, p: &ProcessResult) -> Vec<Value> {
    observations(p)
        .into_iter()
        .flat_map(|(step, reads)| reads_json(run, reads, Some(step.to_string())))
        .collect()
}

/// The witness of the report: the reads of each observation on the shown failure's way (each
/// with the observation it belongs to), else of a failed kernel assertion.
fn witness_json(run: &Run) -> Vec<Value> {
    if let Some(p) = shown_failure(run.report) {
        return path_witness(run, p);
    }
    run.report
        .findings
        .iter()
        .find_map(|f| match f {
            Finding::DeviceAssert { witness, .. } => Some(reads_json(run, witness, None)),
            _ => None,
        })
        .unwrap_or_default()
}

/// The JSON line of a run: the interpreted report's keys where they mean the same, and the
/// native path's own.
pub fn json(run: &Run) -> Value {
    let r = run.report;
    let processes: Vec<Value> = listed(r)
        .into_iter()
        .map(|p| {
            // A failed process carries the device execution that led there, as the issue
            // asks of every failing fork (the report's `witness` is the first one's).
            let witness: Vec<Value> = if p.failed() {
                path_witness(run, p)
            } else {
                vec![]
            };
            json!({
                "outcomes": p.forks(),
                "ending": ending(&p.ending),
                "failed": p.failed(),
                "output": p.output,
                "witness": witness,
            })
        })
        .collect();
    let (_, found) = diagnostics(run);
    json!({
        "file": run.file,
        "harness": "native",
        "harness_reason": "the host program is compiled and run (--host native)",
        "result": result(r),
        "complete": r.complete(),
        "incomplete_reason": incomplete_reason(r),
        "racy": r.racy,
        "races": races_json(run),
        "hangs": hangs_json(run),
        "witness": witness_json(run),
        "diagnostics": scopecheck_report::diagnostics_json(run.file, &found),
        "processes": processes,
        "findings": r.findings.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
        "cut": r.cut,
        "executions": scopecheck_report::count_json(r.executions),
        "compile_seconds": r.compile_time.as_secs_f64(),
        "run_seconds": r.run_time.as_secs_f64(),
        "cached": r.cached,
    })
}

#[cfg(test)]
mod tests {
    use super::named_line;

    /// `assert`'s message names the file with its path (`prog: dir/a.cu:15: main: Assertion
    /// ...`): line 15. A longer name ending in the same letters (`data.cu:3:`) is not `a.cu`;
    /// a name without a line after it names none.
    #[test]
    fn the_line_an_output_names() {
        let assert = "prog: dir/a.cu:15: int main(): Assertion `h == 2' failed.";
        assert_eq!(named_line(assert, "a.cu"), Some(15));
        assert_eq!(named_line("a.cu:7: error", "a.cu"), Some(7));
        assert_eq!(named_line("data.cu:3: error", "a.cu"), None);
        assert_eq!(named_line("see a.cu: no line", "a.cu"), None);
    }
}
