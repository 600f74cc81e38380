//! Reports: a verdict as herd7-shaped text for people, and as one JSON object (one NDJSON line)
//! for tools; the findings of a whole run as one SARIF 2.1.0 log for code scanning (`sarif`).
//!
//! The text follows herd7's layout line by line so that people who read herd7 output, and the
//! scripts they wrote for it, can read ours:
//!
//! ```text
//! Test MP+rel.cta+acq.gpu Allowed
//! States 4
//! P1:r0=0; P1:r1=0;
//! P1:r0=0; P1:r1=7;
//! P1:r0=1; P1:r1=0;
//! P1:r0=1; P1:r1=7;
//! Ok
//! Witnesses
//! Positive: 1 Negative: 3
//! Condition exists (P1:r0=1 /\ P1:r1=0)
//! Observation MP+rel.cta+acq.gpu Sometimes 1 3
//! Time MP+rel.cta+acq.gpu 0.00
//! Executions 4
//! ```
//!
//! Two departures from herd7: an incomplete exploration adds a line `Incomplete: <reason>` after
//! the result (which is then `Unknown` when the executions found do not settle the condition), and
//! `Executions N` closes the block in place of herd7's `Hash=` line.
//!
//! The JSON shape is documented field by field in `docs/json.md`; fields are only ever added.

use std::fmt::Write as _;
use std::time::Duration;

mod dot;
mod picture;
mod svg;

pub use dot::dot;
pub use svg::svg;

use scopecheck_ir::{CmpOp, IntType, Observable, Program, Prop, Quantifier, Span, Term};
use scopecheck_model::{
    suggest::Suggestion, Access, FinalState, HangReport, Observation, Outcome, RaceReport, Spin,
    Verdict, WitnessRead,
};
use serde_json::{json, Map, Value};

/// herd7's word for what a condition asks: `Allowed` for `exists`, `Required` for `~exists` and
/// `forall`.
pub fn test_kind(quantifier: Quantifier) -> &'static str {
    match quantifier {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists | Quantifier::Forall => "Required",
    }
}

/// The result line: `Ok`, `No` or `Unknown`.
pub fn outcome_text(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "Ok",
        Outcome::No => "No",
        Outcome::Unknown => "Unknown",
    }
}

/// The observation word: `Sometimes`, `Never` or `Always`.
pub fn observation_text(observation: Observation) -> &'static str {
    match observation {
        Observation::Sometimes => "Sometimes",
        Observation::Never => "Never",
        Observation::Always => "Always",
    }
}

/// The quantifier as the JSON `condition` field writes it.
pub fn quantifier_json(quantifier: Quantifier) -> &'static str {
    match quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "not_exists",
        Quantifier::Forall => "forall",
    }
}

/// Renders a verdict as herd7-shaped text, ending in a newline. `time` is printed in seconds
/// with two decimals, as herd7 does.
pub fn text(program: &Program, verdict: &Verdict, time: Duration) -> String {
    let name = &program.name;
    let mut out = String::new();
    // `write!` into a String cannot fail.
    let _ = writeln!(out, "Test {name} {}", test_kind(verdict.quantifier));
    let _ = writeln!(out, "States {}", verdict.states.len());
    for state in &verdict.states {
        let _ = writeln!(out, "{}", state_text(program, state));
    }
    if verdict.vacuous() {
        let _ = writeln!(
            out,
            "{} (vacuous: no execution terminates)",
            outcome_text(verdict.outcome)
        );
    } else {
        let _ = writeln!(out, "{}", outcome_text(verdict.outcome));
    }
    if let Some(incomplete) = &verdict.incomplete {
        let _ = writeln!(out, "Incomplete: {}", incomplete.reason);
    }
    let _ = writeln!(out, "Witnesses");
    let _ = writeln!(
        out,
        "Positive: {} Negative: {}",
        verdict.positive, verdict.negative
    );
    let _ = writeln!(out, "Condition {}", condition_text(program));
    let _ = writeln!(
        out,
        "Observation {name} {} {} {}",
        observation_text(verdict.observation),
        verdict.positive,
        verdict.negative
    );
    let _ = writeln!(out, "Time {name} {:.2}", time.as_secs_f64());
    let _ = writeln!(
        out,
        "Executions {}{}",
        verdict.executions,
        if verdict.counts_at_least() {
            " (at least: a count saturated at 2^128 - 1)"
        } else {
            ""
        }
    );
    if !verdict.symmetry.is_empty() {
        let threads: usize = verdict.symmetry.iter().sum();
        let classes = verdict.symmetry.len();
        let _ = writeln!(
            out,
            "Symmetry {threads} threads in {classes} class{}: each order explored once, every execution counted",
            if classes == 1 { "" } else { "es" }
        );
    }
    witness_text(program, verdict, &mut out);
    races_text(program, verdict, &mut out);
    for l in &verdict.lints {
        let _ = writeln!(out, "Lint line {}: {}", l.span.line, l.message);
    }
    for note in &verdict.platform_notes {
        let _ = writeln!(out, "Platform {}: {note}", verdict.platform);
    }
    liveness_text(program, verdict, &mut out);
    out
}

/// An access as the words of findings take it.
fn at<'p>(program: &'p Program, a: &'p Access) -> words::At<'p> {
    words::At {
        thread: &program.thread(a.thread).name,
        line: a.line,
        text: &a.text,
    }
}

fn access_text(program: &Program, a: &Access) -> String {
    words::access_line(at(program, a), a.write)
}

fn read_text(program: &Program, w: &WitnessRead) -> String {
    words::read_line(
        at(program, &w.reader),
        &program.location(w.reader.loc).name,
        w.value,
        w.from.as_ref().map(|a| at(program, a)),
    )
}

/// The witness execution, one read per line.
fn witness_text(program: &Program, verdict: &Verdict, out: &mut String) {
    for w in &verdict.witness {
        let _ = writeln!(out, "Witness {}", read_text(program, w));
    }
}

/// Suggestions, one line each, cheapest first.
pub fn suggestions_text(program: &Program, suggestions: &[Suggestion]) -> String {
    let mut out = String::new();
    for s in suggestions {
        let changes: Vec<String> = s
            .changes
            .iter()
            .map(|c| {
                format!(
                    "{} line {}: {} -> {}",
                    program.thread(c.thread).name,
                    c.line,
                    c.was,
                    c.becomes
                )
            })
            .collect();
        let cost = s
            .cost_cycles
            .map_or("cost unknown".to_string(), |c| format!("{c:+.0} cycles"));
        let _ = writeln!(out, "Suggest {} ({cost})", changes.join("; and "));
    }
    out
}

/// Suggestions as JSON.
pub fn suggestions_json(program: &Program, suggestions: &[Suggestion]) -> Value {
    suggestions
        .iter()
        .map(|s| {
            json!({
                "changes": s.changes.iter().map(|c| json!({
                    "thread": program.thread(c.thread).name,
                    "line": c.line,
                    "was": c.was,
                    "becomes": c.becomes,
                    "cost_cycles": c.cost_cycles,
                })).collect::<Vec<_>>(),
                "cost_cycles": s.cost_cycles,
            })
        })
        .collect::<Vec<_>>()
        .into()
}

/// The races section, printed only when some consistent execution races.
fn races_text(program: &Program, verdict: &Verdict, out: &mut String) {
    if verdict.races.is_empty() {
        return;
    }
    let n = verdict.races.len();
    let _ = writeln!(
        out,
        "Racy {}: {n} race{}",
        program.name,
        if n == 1 { "" } else { "s" }
    );
    for r in &verdict.races {
        let line = words::race_line(
            r.kind,
            &program.location(r.first.loc).name,
            access_text(program, &r.first),
            access_text(program, &r.second),
        );
        let _ = writeln!(out, "{line}");
    }
}

/// The liveness section: whether every thread terminates under the chosen scheduler, how many
/// await loops were explored by their exiting iteration, and each hang.
fn liveness_text(program: &Program, verdict: &Verdict, out: &mut String) {
    let reduced = match verdict.reduced_loops {
        0 => String::new(),
        1 => " (1 await loop explored by its exiting iteration)".to_string(),
        n => format!(" ({n} await loops explored by their exiting iteration)"),
    };
    let word = match verdict.terminates() {
        Some(true) => "terminates",
        Some(false) => "may hang",
        None => "unknown (the exploration is incomplete)",
    };
    let _ = writeln!(out, "Liveness {} {word}{reduced}", program.name);
    for h in &verdict.hangs {
        for s in &h.spinning {
            let waits: Vec<String> = s
                .waits
                .iter()
                .map(|(l, v)| format!("{}={v}", program.location(*l).name))
                .collect();
            let _ = writeln!(
                out,
                "Hang {} spins forever at line {} (`{}`) reading {}",
                program.thread(s.thread).name,
                s.line,
                s.text,
                waits.join(", ")
            );
        }
        for s in &h.at_barrier {
            let _ = writeln!(
                out,
                "Hang {} waits forever at line {} (`{}`)",
                program.thread(s.thread).name,
                s.line,
                s.text
            );
        }
        let _ = writeln!(out, "  under {}: {}", h.progress, h.reason);
    }
}

/// One final state as herd7 prints it: `P1:r0=1; x=2;`.
pub fn state_text(program: &Program, state: &FinalState) -> String {
    let cells: Vec<String> = state
        .values
        .iter()
        .map(|(o, v)| {
            format!(
                "{}={};",
                program.observable_name(*o),
                program.observable_display(*o, *v)
            )
        })
        .collect();
    cells.join(" ")
}

/// The program's final condition printed back: `exists (P1:r0=1 /\ P1:r1=0)`, `~exists (...)`,
/// `forall (...)`. The result parses back to the same condition.
pub fn condition_text(program: &Program) -> String {
    let quantifier = match program.condition.quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    };
    format!(
        "{quantifier} ({})",
        prop_text(program, &program.condition.prop)
    )
}

/// A proposition with the fewest parentheses that keep its structure: `~` binds tighter than
/// `/\`, which binds tighter than `\/`.
pub fn prop_text(program: &Program, prop: &Prop) -> String {
    let mut out = String::new();
    write_prop(program, prop, Prec::Or, &mut out);
    out
}

/// Binding strength of a proposition's top connective, weakest first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Or,
    And,
    Atom,
}

fn write_prop(program: &Program, prop: &Prop, context: Prec, out: &mut String) {
    let own = match prop {
        Prop::Or(..) => Prec::Or,
        Prop::And(..) => Prec::And,
        Prop::True | Prop::False | Prop::Cmp(..) | Prop::Not(_) => Prec::Atom,
    };
    let parens = own < context;
    if parens {
        out.push('(');
    }
    match prop {
        Prop::True => out.push_str("true"),
        Prop::False => out.push_str("false"),
        Prop::Cmp(a, op, b) => {
            out.push_str(&term_text(program, a));
            out.push_str(match op {
                CmpOp::Eq => "=",
                CmpOp::Ne => "!=",
            });
            out.push_str(&term_text(program, b));
        }
        Prop::Not(p) => {
            // Always parenthesised: `~(x=1)` reads unambiguously, `~x=1` does not.
            out.push_str("~(");
            write_prop(program, p, Prec::Or, out);
            out.push(')');
        }
        Prop::And(a, b) => {
            write_prop(program, a, Prec::And, out);
            out.push_str(" /\\ ");
            write_prop(program, b, Prec::And, out);
        }
        Prop::Or(a, b) => {
            write_prop(program, a, Prec::Or, out);
            out.push_str(" \\/ ");
            write_prop(program, b, Prec::Or, out);
        }
    }
    if parens {
        out.push(')');
    }
}

fn term_text(program: &Program, term: &Term) -> String {
    match term {
        Term::Observable(o) => program.observable_name(*o),
        Term::Const(c) => c.to_string(),
    }
}

/// The verdict as one JSON object (one NDJSON line); see `docs/json.md`. `file` is the path the
/// test was read from, as the user gave it or as found under a directory they gave.
pub fn json(file: &str, program: &Program, verdict: &Verdict, time: Duration) -> Value {
    let states: Vec<Value> = verdict
        .states
        .iter()
        .map(|s| {
            let values: Map<String, Value> = s
                .values
                .iter()
                .map(|(o, v)| {
                    // A u64 above i64::MAX is a JSON number of its own.
                    let unsigned =
                        matches!(o, Observable::Loc(l) if program.location(*l).ty == IntType::U64);
                    let float = match o {
                        Observable::Loc(l) if program.location(*l).ty.float => {
                            Some(program.location(*l).ty)
                        }
                        _ => None,
                    };
                    let value = if let Some(ty) = float {
                        // A float location's value as the number its bits encode (JSON has no
                        // NaN or infinity: those are the strings a report prints).
                        let x = scopecheck_ir::float::to_f64(ty, *v);
                        if x.is_finite() {
                            Value::from(x)
                        } else {
                            Value::from(ty.display(*v))
                        }
                    } else if unsigned && *v < 0 {
                        Value::from(*v as u64)
                    } else {
                        Value::from(*v)
                    };
                    (program.observable_name(*o), value)
                })
                .collect();
            json!({ "values": values, "satisfies": s.satisfies })
        })
        .collect();
    json!({
        "name": program.name,
        "file": file,
        "model": verdict.model,
        "condition": quantifier_json(verdict.quantifier),
        "result": outcome_text(verdict.outcome),
        "observation": observation_text(verdict.observation),
        "states": states,
        "positive": count_json(verdict.positive),
        "negative": count_json(verdict.negative),
        "executions": count_json(verdict.executions),
        "counts_at_least": verdict.counts_at_least(),
        "complete": verdict.is_complete(),
        "vacuous": verdict.vacuous(),
        "incomplete_reason": verdict.incomplete.as_ref().map(|i| i.reason.as_str()),
        "time_ms": time.as_secs_f64() * 1000.0,
        "terminates": verdict.terminates(),
        "reduced_loops": verdict.reduced_loops,
        "symmetry_classes": verdict.symmetry,
        "hangs": verdict.hangs.iter().map(|h| hang_json(program, h)).collect::<Vec<_>>(),
        "lints": verdict.lints.iter().map(|l| json!({
            "rule": l.kind.id(),
            "line": l.span.line,
            "column": l.span.column,
            "message": l.message,
        })).collect::<Vec<_>>(),
        "platform": verdict.platform,
        "platform_notes": verdict.platform_notes,
        "witness": verdict.witness.iter().map(|w| json!({
            "thread": program.thread(w.reader.thread).name,
            "line": w.reader.line,
            "instruction": w.reader.text,
            "location": program.location(w.reader.loc).name,
            "value": w.value,
            "from": w.from.as_ref().map(|a| json!({
                "thread": program.thread(a.thread).name,
                "line": a.line,
                "instruction": a.text,
            })),
        })).collect::<Vec<_>>(),
        "racy": verdict.is_racy(),
        "races": verdict.races.iter().map(|r| race_json(program, r)).collect::<Vec<_>>(),
        "rejected": verdict.rejected.iter().map(|(a, n)| (a.to_string(), Value::from(*n))).collect::<Map<String, Value>>(),
    })
}

fn access_json(program: &Program, a: &Access) -> Value {
    json!({
        "thread": program.thread(a.thread).name,
        "line": a.line,
        "instruction": a.text,
        "access": if a.write { "write" } else { "read" },
    })
}

fn race_json(program: &Program, r: &RaceReport) -> Value {
    json!({
        "kind": words::race_kind_text(r.kind),
        "location": program.location(r.first.loc).name,
        "first": access_json(program, &r.first),
        "second": access_json(program, &r.second),
    })
}

fn spin_json(program: &Program, s: &Spin) -> Value {
    let waits: Map<String, Value> = s
        .waits
        .iter()
        .map(|(l, v)| (program.location(*l).name.clone(), Value::from(*v)))
        .collect();
    json!({
        "thread": program.thread(s.thread).name,
        "line": s.line,
        "loop": s.text,
        "waits": waits,
    })
}

/// One hang: the first stuck thread's fields at the top (a spinner, else a thread waiting at a
/// barrier), every spinner, every barrier waiter, the starved threads, and the progress model
/// that permits it.
fn hang_json(program: &Program, h: &HangReport) -> Value {
    let mut v = h
        .spinning
        .first()
        .or(h.at_barrier.first())
        .map(|s| spin_json(program, s))
        .unwrap_or_else(|| json!({}));
    if let Value::Object(m) = &mut v {
        m.insert(
            "spinning".into(),
            h.spinning
                .iter()
                .map(|s| spin_json(program, s))
                .collect::<Vec<_>>()
                .into(),
        );
        m.insert(
            "starved".into(),
            h.starved
                .iter()
                .map(|t| program.thread(*t).name.clone())
                .collect::<Vec<_>>()
                .into(),
        );
        m.insert(
            "at_barrier".into(),
            h.at_barrier
                .iter()
                .map(|s| spin_json(program, s))
                .collect::<Vec<_>>()
                .into(),
        );
        m.insert("progress".into(), h.progress.clone().into());
        m.insert("reason".into(), h.reason.clone().into());
    }
    v
}

/// One finding about the user's source, for diagnostics: races, hangs, lints, a failing
/// requirement, with labelled spans (rendered with code snippets at the edge, or as JSON).
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// `"error"` (the program is wrong), `"warning"` (probably wrong), `"note"`.
    pub severity: &'static str,
    /// `"race"`, `"hang"`, `"assertion"`, `"lint"`, `"platform"`.
    pub kind: &'static str,
    /// The stable rule id (`sarif::rules`): `"requirement-fails"`, `"data-race"`,
    /// `"heterogeneous-race"`, `"hang"`, a lint's id (`LintKind::id`), `"platform"`.
    pub rule: &'static str,
    pub message: String,
    pub labels: Vec<(Span, String)>,
    pub help: Option<String>,
}

/// The findings of a verdict, most serious first.
pub fn findings(program: &Program, verdict: &Verdict) -> Vec<Finding> {
    let mut out = Vec::new();
    let requirement_fails = match verdict.quantifier {
        Quantifier::Exists => false,
        Quantifier::NotExists | Quantifier::Forall => verdict.outcome == Outcome::No,
    };
    if requirement_fails {
        let labels = verdict
            .witness
            .iter()
            .map(|w| {
                let label = words::read_label(
                    &program.thread(w.reader.thread).name,
                    &program.location(w.reader.loc).name,
                    w.value,
                    w.from
                        .as_ref()
                        .map(|a| (program.thread(a.thread).name.as_str(), a.line)),
                );
                (w.reader.span, label)
            })
            .collect();
        out.push(Finding {
            severity: "error",
            kind: "assertion",
            rule: sarif::rules::REQUIREMENT_FAILS.id,
            message: format!("the condition can fail: {}", condition_text(program)),
            labels,
            help: Some("the labels show one execution that breaks it (--suggest searches for the cheapest fix)".into()),
        });
    }
    for r in &verdict.races {
        let side = |a: &Access| {
            let label = words::access_label(
                &program.thread(a.thread).name,
                a.write,
                &program.location(a.loc).name,
            );
            (a.span, label)
        };
        out.push(words::race_finding(
            r.kind,
            &program.location(r.first.loc).name,
            vec![side(&r.first), side(&r.second)],
        ));
    }
    for h in &verdict.hangs {
        let labels = h
            .spinning
            .iter()
            .chain(&h.at_barrier)
            .map(|s| (s.span, words::waits_label(&program.thread(s.thread).name)))
            .collect();
        out.push(words::hang_finding(&h.progress, &h.reason, labels));
    }
    for l in &verdict.lints {
        out.push(Finding {
            severity: "warning",
            kind: "lint",
            rule: l.kind.id(),
            message: l.message.clone(),
            labels: vec![(l.span, "here".into())],
            help: None,
        });
    }
    for n in &verdict.platform_notes {
        out.push(Finding {
            severity: "note",
            kind: "platform",
            rule: sarif::rules::PLATFORM.id,
            message: n.clone(),
            labels: vec![],
            help: None,
        });
    }
    out
}

/// Findings as the JSON `diagnostics` array: each with `severity`, `kind`, `rule`, `message`,
/// `file`, `labels` (`line`, `column`, `length`, `text`) and `help`.
pub fn diagnostics_json(file: &str, findings: &[Finding]) -> Value {
    findings
        .iter()
        .map(|f| {
            json!({
                "severity": f.severity,
                "kind": f.kind,
                "rule": f.rule,
                "message": f.message,
                "file": file,
                "labels": f.labels.iter().map(|(s, t)| json!({
                    "line": s.line,
                    "column": s.column,
                    "length": s.len,
                    "text": t,
                })).collect::<Vec<_>>(),
                "help": f.help,
            })
        })
        .collect::<Vec<_>>()
        .into()
}

/// The comparison of `--model both`: one line per disagreement, or a line saying they agree.
pub fn compare_text(program: &Program, disagreements: &[String]) -> String {
    let mut out = String::new();
    if disagreements.is_empty() {
        let _ = writeln!(
            out,
            "Compare {}: the language and the hardware agree",
            program.name
        );
    }
    for d in disagreements {
        let _ = writeln!(out, "Compare {}: {d}", program.name);
    }
    out
}

/// The JSON line of `--model both`: the test, each model's verdict object (as `json` gives it),
/// and the disagreements in words.
pub fn json_both<'p>(
    file: &str,
    program: &'p Program,
    program_of: &dyn Fn(&Verdict) -> &'p Program,
    verdicts: &[Verdict],
    disagreements: &[String],
    time: Duration,
) -> Value {
    json!({
        "name": program.name,
        "file": file,
        "model": "both",
        "verdicts": verdicts
            .iter()
            .map(|v| json(file, program_of(v), v, time))
            .collect::<Vec<_>>(),
        "disagreements": disagreements,
    })
}

/// An error line for a file that could not be read, parsed or checked. `line` and `column` are
/// 1-based; 0 means the error has no position.
pub fn json_error(file: &str, line: u32, column: u32, message: &str) -> Value {
    json!({ "file": file, "error": message, "line": line, "column": column })
}

pub mod sarif;
pub mod words;

/// One picture of an execution to write: what it shows (`witness`, `counterexample`) and the
/// same picture as DOT and as SVG.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    pub role: &'static str,
    pub dot: String,
    pub svg: String,
}

/// The pictures of a verdict checked with `CheckOptions::graphs`: the witness (the execution
/// that shows the answer, or the first one when none does), and for a wrong program (see
/// `suggest::is_right`) the counterexample: the race when races make it wrong, else the
/// execution that breaks the requirement. A program wrong only because it may hang gets none:
/// the explorer keeps no graph of a hang.
pub fn pictures(program: &Program, verdict: &Verdict) -> Vec<Picture> {
    let picture = |role: &'static str, g: &scopecheck_model::ExecutionGraph| Picture {
        role,
        dot: dot(program, verdict, g, role),
        svg: svg(program, verdict, g, role),
    };
    let mut out: Vec<Picture> = verdict
        .witness_graph
        .iter()
        .map(|g| picture("witness", g))
        .collect();
    if !scopecheck_model::suggest::is_right(verdict) {
        let races_matter = verdict.model != "ptx";
        let requirement_fails =
            verdict.quantifier != Quantifier::Exists && verdict.outcome == Outcome::No;
        let counterexample = if races_matter && verdict.is_racy() {
            verdict.race_graph.as_ref()
        } else if requirement_fails {
            verdict.witness_graph.as_ref()
        } else {
            None
        };
        out.extend(counterexample.map(|g| picture("counterexample", g)));
    }
    out
}

/// A file name part from a test's name: letters, digits and `.+-_` kept, anything else (path
/// separators, spaces, quotes) as `_`; never empty, never starting with a dot.
pub fn file_name_part(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, '_');
    }
    out
}
pub mod tune;

#[cfg(test)]
mod tests;

/// A count as JSON: a number up to `u64::MAX`, which every JSON reader of 64-bit integers
/// takes; a decimal string beyond (a JSON number that large loses digits in most readers).
pub fn count_json(n: u128) -> Value {
    match u64::try_from(n) {
        Ok(n) => Value::from(n),
        Err(_) => Value::from(n.to_string()),
    }
}
