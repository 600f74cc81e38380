//! The words of findings, from names and places alone. The interpreted harness's verdict (a
//! program and its ids) and the native host path's findings (names and sites, one explored
//! program per observation) are both worded here, so that the two reports say the same things
//! the same way.

use scopecheck_ir::Span;
use scopecheck_model::RaceKind;

use crate::{sarif, Finding};

/// An instruction of a thread: who, at which line, and its text.
#[derive(Clone, Copy, Debug)]
pub struct At<'a> {
    pub thread: &'a str,
    pub line: u32,
    pub text: &'a str,
}

/// One read as a text line says it (after `Witness `):
/// `T line 5 (`text`) read x=1 from U line 7 (`text`)`.
pub fn read_line(reader: At, location: &str, value: i64, from: Option<At>) -> String {
    let from = match from {
        Some(w) => format!("from {} line {} (`{}`)", w.thread, w.line, w.text),
        None => "from the initial value".to_string(),
    };
    format!(
        "{} line {} (`{}`) read {location}={value} {from}",
        reader.thread, reader.line, reader.text
    )
}

/// One read as a label at it says it: `T reads x=1 from U line 7`.
pub fn read_label(thread: &str, location: &str, value: i64, from: Option<(&str, u32)>) -> String {
    let from = match from {
        Some((t, line)) => format!("from {t} line {line}"),
        None => "from the initial value".to_string(),
    };
    format!("{thread} reads {location}={value} {from}")
}

pub fn race_kind_text(kind: RaceKind) -> &'static str {
    match kind {
        RaceKind::Data => "data",
        RaceKind::Heterogeneous => "heterogeneous",
    }
}

/// One side of a race as a text line says it: `T line 6 (`text`, write)`.
pub fn access_line(a: At, write: bool) -> String {
    format!(
        "{} line {} (`{}`, {})",
        a.thread,
        a.line,
        a.text,
        if write { "write" } else { "read" }
    )
}

/// A race as a text line says it: `Race data on x: <first> and <second>`.
pub fn race_line(kind: RaceKind, location: &str, first: String, second: String) -> String {
    format!(
        "Race {} on {location}: {first} and {second}",
        race_kind_text(kind)
    )
}

/// One side of a race as a label at it says it: `T writes x`.
pub fn access_label(thread: &str, write: bool, location: &str) -> String {
    format!(
        "{thread} {}s {location}",
        if write { "write" } else { "read" }
    )
}

/// The finding of a race on `location`, its two sides labelled ([`access_label`]).
pub fn race_finding(kind: RaceKind, location: &str, labels: Vec<(Span, String)>) -> Finding {
    Finding {
        severity: "error",
        kind: "race",
        rule: match kind {
            RaceKind::Data => sarif::rules::DATA_RACE.id,
            RaceKind::Heterogeneous => sarif::rules::HETEROGENEOUS_RACE.id,
        },
        message: format!("{} race on `{location}`", race_kind_text(kind)),
        labels,
        help: Some(match kind {
            RaceKind::Data => "nothing orders these accesses: make them atomic, or order them with release/acquire (or fences) at a scope that includes both threads".into(),
            RaceKind::Heterogeneous => "these atomics' scopes do not include each other's thread: widen the narrower scope".into(),
        }),
    }
}

/// A thread stuck in a hang, as a label at where it waits.
pub fn waits_label(thread: &str) -> String {
    format!("{thread} waits forever here")
}

/// The finding of a hang under the scheduler `progress`, each stuck thread labelled
/// ([`waits_label`]); `reason` says why, in words.
pub fn hang_finding(progress: &str, reason: &str, labels: Vec<(Span, String)>) -> Finding {
    Finding {
        severity: "error",
        kind: "hang",
        rule: sarif::rules::HANG.id,
        message: format!("a thread can wait forever (under {progress})"),
        labels,
        help: Some(reason.to_string()),
    }
}
