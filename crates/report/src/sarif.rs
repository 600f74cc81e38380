//! SARIF 2.1.0: the findings of a whole run as one log for code-scanning tools (GitHub code
//! scanning, IDE viewers).
//!
//! A log has one `run`: `tool.driver` names scopecheck and lists one rule (a
//! `reportingDescriptor`) per rule id that some result uses, and `results` holds every result in
//! the order they were added (`check` adds files in input order, so the log is deterministic).
//! The rule ids, their levels and what each location is are documented in docs/sarif.md.
//!
//! [`SarifLog::push`] takes any [`SarifResult`]: a subcommand with findings of its own (such as
//! `tune`) declares its [`Rule`]s as constants and pushes its results with one call each;
//! [`SarifLog::add_checked`] and [`SarifLog::add_input_error`] are such calls for `check`.
//!
//! The SARIF types here are the few the log uses, written for this module: the `serde-sarif`
//! crate generates all of the schema's types in a build script (schemafy, syn, prettyplease),
//! far more than these results need.

use std::path::{Component, Path};

use scopecheck_ir::{Diagnostic, Program, Span};
use scopecheck_model::{Outcome, Verdict};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{findings, outcome_text, Finding};

/// The OASIS schema a log names in `$schema`.
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// A result's level (SARIF `level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The program is wrong, or was not checked.
    Error,
    /// Probably wrong, or the check is inconclusive.
    Warning,
    /// Worth knowing.
    Note,
}

impl Level {
    /// The level of a [`Finding`]'s severity (`"error"`, `"warning"`, else a note).
    pub fn of_severity(severity: &str) -> Level {
        match severity {
            "error" => Level::Error,
            "warning" => Level::Warning,
            _ => Level::Note,
        }
    }
}

/// What one kind of result means: a SARIF `reportingDescriptor`. The id is stable: tools key
/// alerts and suppressions on it, so it is never renamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    pub id: &'static str,
    /// A one-line description (`shortDescription`).
    pub short: &'static str,
    /// What a result of this rule says (`fullDescription`).
    pub full: &'static str,
    /// What to do about it (`help`).
    pub help: &'static str,
    /// The level of its results unless a result says otherwise (`defaultConfiguration`).
    pub level: Level,
}

/// The rules of `check`, in the order docs/sarif.md lists them.
pub mod rules {
    use super::{Level, Rule};
    use scopecheck_model::LintKind;

    pub const REQUIREMENT_FAILS: Rule = Rule {
        id: "requirement-fails",
        short: "A requirement of the program can fail",
        full: "Some execution the memory model allows breaks a `~exists` or `forall` condition (for a CUDA or OpenCL program, an assert or a check of its harness). The result is at the condition; its related locations are the reads of one execution that breaks it, each with the write it read from.",
        help: "Strengthen the orders or widen the scopes the witness reads depend on; `scopecheck check --suggest` searches for the cheapest change that makes the requirement hold.",
        level: Level::Error,
    };
    pub const DATA_RACE: Rule = Rule {
        id: "data-race",
        short: "Two conflicting accesses race",
        full: "In some consistent execution two accesses to one location, at least one a write and one plain or volatile, are not ordered. Under scoped C11 the program's behaviour is then undefined. The result is at the first access; its related location is the second.",
        help: "Make both accesses atomic, or order them with release/acquire (or fences) at a scope that includes both threads.",
        level: Level::Error,
    };
    pub const HETEROGENEOUS_RACE: Rule = Rule {
        id: "heterogeneous-race",
        short: "Two atomics race because their scopes are too narrow",
        full: "In some consistent execution two conflicting atomic accesses are not ordered and the scope of one does not include the other's thread, so they are not atomic with respect to each other. The result is at the first access; its related location is the second.",
        help: "Widen the narrower scope so that it includes the other thread (block to device, device to system).",
        level: Level::Error,
    };
    pub const HANG: Rule = Rule {
        id: "hang",
        short: "A thread can wait forever",
        full: "Under the chosen forward-progress model (--progress, --its, --resident-blocks) some execution ends with a thread spinning on values no write will change, or waiting at a barrier not every participant reaches. The result is at the first waiting thread's loop or barrier; its related locations are the other waiting threads'.",
        help: "Make sure the awaited write happens and is visible at the waiter's scope, that every thread reaches the barrier, or that the spinning and the releasing blocks can be resident at once.",
        level: Level::Error,
    };
    pub const RELEASE_WITHOUT_ACQUIRE: Rule = Rule {
        id: "release-without-acquire",
        short: "A release that nobody acquires",
        full: "A release write whose location other threads read only without acquire semantics (no acquire read, no fence after the read): the release orders nothing for them. The result is at the release.",
        help: "Read the location with acquire semantics (an acquire load, or a fence after the load), or drop the release if nothing needs ordering.",
        level: Level::Warning,
    };
    pub const ACQUIRE_WITHOUT_RELEASE: Rule = Rule {
        id: "acquire-without-release",
        short: "An acquire of writes that release nothing",
        full: "An acquire read whose location other threads write only without release semantics (no release write, no fence before the write): the acquire orders nothing. The result is at the acquire.",
        help: "Write the location with release semantics (a release store, or a fence before the store), or drop the acquire.",
        level: Level::Warning,
    };
    pub const FENCE_SCOPE_EXCLUDES_SHARER: Rule = Rule {
        id: "fence-scope-excludes-sharer",
        short: "A fence whose scope leaves out a thread it must order",
        full: "A fence whose scope leaves out a concurrent thread that shares a location with the fencing thread: it cannot order anything for that thread. The result is at the fence.",
        help: "Widen the fence's scope to include the other thread (e.g. fence.sc.gpu, __threadfence()).",
        level: Level::Warning,
    };
    pub const FLAG_ON_SHARED_LINE: Rule = Rule {
        id: "flag-on-shared-line",
        short: "A flag polled on a line other data is written on",
        full: "A flag read in a loop while another thread writes other elements of the same allocation (struct fields, array neighbours) on its 128-byte line: the writes and the polls meet at one L2 line, which slows the polls (measured on an H100: the writer's stores cost the same). The message quotes what it cost on the hardware. The result is at the poll.",
        help: "Give the flag a 128-byte line of its own (alignas(128), or padding).",
        level: Level::Note,
    };
    pub const PLATFORM: Rule = Rule {
        id: "platform",
        short: "A final state the platform's missing capability allows",
        full: "A final state is reachable only because the platform checked on (--platform, --platform-file) lacks a capability such as host-native atomics or coherent host memory. The result is at the test's condition.",
        help: "Rely only on what the platform promises, or check on the platform the program will run on.",
        level: Level::Note,
    };
    pub const FRONTEND_WARNING: Rule = Rule {
        id: "frontend-warning",
        short: "The front-end changed or doubts something",
        full: "What the front-end changed in reading the program, or doubts, e.g. a device scope narrowed to the block on shared memory, or a PTX view that could not be built. The result is where it applies, when the front-end knows.",
        help: "Read the message: the program checked may differ from the one written.",
        level: Level::Warning,
    };
    pub const UNKNOWN: Rule = Rule {
        id: "unknown",
        short: "The check is incomplete",
        full: "A bound (--unroll, --max-executions, --timeout, or another named limit) cut the exploration short. Level warning: the result is Unknown, the executions found do not settle the condition. Level note: the result is settled, but races and hangs in executions beyond the bound may be missed. The result is at the test's condition.",
        help: "Raise the bound named in the message (--unroll, --max-executions, --timeout).",
        level: Level::Warning,
    };
    /// `tune --sarif`: not one of `check`'s rules (so not in [`ALL`]).
    pub const TUNE_WEAKENING: Rule = Rule {
        id: "tune-weakening",
        short: "A synchronizing operation is stronger or wider than the program needs",
        full: "scopecheck tune found a maximal set of weakenings (a narrower scope, a weaker order, a fence removed, an RMW made a load or a store) that keeps every verdict: the requirement holds, no race, no hang. Each change of the set is a result at its line, the set's other changes its related locations; only the whole set is known to keep the verdicts. The message gives the new spelling and the cycles the set saves (from the cost table).",
        help: "Apply the whole set (or keep the stronger operation deliberately, e.g. for callers this test does not model).",
        level: Level::Note,
    };
    pub const INPUT_ERROR: Rule = Rule {
        id: "input-error",
        short: "A file could not be read, parsed or checked",
        full: "A file that could not be read, was not a test, did not parse, or failed while being checked: none of its findings are known. The result is at the error's line and column, when it has one.",
        help: "Fix the input at the place shown; every other file was still checked.",
        level: Level::Error,
    };

    /// Every rule of `check`, in documented order (the order of a log's `rules`).
    pub const ALL: [Rule; 12] = [
        REQUIREMENT_FAILS,
        DATA_RACE,
        HETEROGENEOUS_RACE,
        HANG,
        RELEASE_WITHOUT_ACQUIRE,
        ACQUIRE_WITHOUT_RELEASE,
        FENCE_SCOPE_EXCLUDES_SHARER,
        FLAG_ON_SHARED_LINE,
        PLATFORM,
        FRONTEND_WARNING,
        UNKNOWN,
        INPUT_ERROR,
    ];

    /// The rule of a lint kind.
    pub fn lint(kind: LintKind) -> Rule {
        match kind {
            LintKind::ReleaseWithoutAcquire => RELEASE_WITHOUT_ACQUIRE,
            LintKind::AcquireWithoutRelease => ACQUIRE_WITHOUT_RELEASE,
            LintKind::FenceScopeExcludesSharer => FENCE_SCOPE_EXCLUDES_SHARER,
            LintKind::FlagOnSharedLine => FLAG_ON_SHARED_LINE,
        }
    }
}

/// The rule a [`Finding`] belongs to, by its id.
fn rule_of(f: &Finding) -> Rule {
    rules::ALL
        .into_iter()
        .find(|r| r.id == f.rule)
        // Every finding's rule is in the catalog (a test pins it); a new kind of finding
        // without one still reaches the log, as a warning of its own id.
        .unwrap_or(Rule {
            id: f.rule,
            short: f.rule,
            full: f.rule,
            help: f.rule,
            level: Level::Warning,
        })
}

/// A region of a source file: SARIF lines and columns, 1-based, columns counted in Unicode code
/// points (the log says `columnKind: unicodeCodePoints`), `end_column` just past the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: u32,
    pub start_column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

impl Region {
    /// The region of `span` in `source`; `None` for a span with no position (line 0).
    ///
    /// A span's `line` and `column` are 1-based, its `offset` and `len` in bytes. Front-ends
    /// count `column` differently (litmus: characters; tree-sitter: bytes), so when `offset`
    /// lies on `line` of `source` the columns are recounted from it in code points; otherwise
    /// (a span into another text) `line` and `column` are taken as they are, `len` as the width.
    pub fn of_span(source: Option<&str>, span: Span) -> Option<Region> {
        if span.line == 0 {
            return None;
        }
        if let Some(region) = source.and_then(|s| Self::recounted(s, span)) {
            return Some(region);
        }
        let column = span.column.max(1);
        let width = u32::try_from(span.len).unwrap_or(u32::MAX);
        Some(Region {
            start_line: span.line,
            start_column: column,
            end_line: span.line,
            end_column: column.saturating_add(width),
        })
    }

    fn recounted(source: &str, span: Span) -> Option<Region> {
        let start = span.offset;
        if start > source.len() || !source.is_char_boundary(start) {
            return None;
        }
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        if u32::try_from(line).ok()? != span.line {
            return None;
        }
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let start_column = before[line_start..].chars().count() + 1;
        let mut end = start.saturating_add(span.len).min(source.len());
        while !source.is_char_boundary(end) {
            end -= 1;
        }
        let covered = &source[start..end];
        let (end_line, end_column) = match covered.rfind('\n') {
            None => (line, start_column + covered.chars().count()),
            Some(i) => (
                line + covered.matches('\n').count(),
                covered[i + 1..].chars().count() + 1,
            ),
        };
        Some(Region {
            start_line: span.line,
            start_column: u32::try_from(start_column).ok()?,
            end_line: u32::try_from(end_line).ok()?,
            end_column: u32::try_from(end_column).ok()?,
        })
    }
}

/// A place a result points at: a file (as given, relative to the current directory or
/// absolute), the region in it when known, and what is there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    pub file: String,
    pub region: Option<Region>,
    pub message: Option<String>,
}

/// One SARIF result, as any subcommand makes it.
#[derive(Clone, Debug, PartialEq)]
pub struct SarifResult {
    pub rule: Rule,
    /// Usually `rule.level`.
    pub level: Level,
    /// Plain text: square brackets escaped ([`escape`]), except in embedded
    /// links `[text](n)`, which point at `related[n - 1]` (related locations get the ids 1, 2,
    /// ... in order).
    pub message: String,
    /// Where the result is; tools show the first.
    pub locations: Vec<Place>,
    pub related: Vec<Place>,
    /// Extra facts (SARIF `properties`), e.g. `models`.
    pub properties: Map<String, Value>,
}

/// Escapes text for a SARIF plain-text message: a literal `[` or `]` would otherwise start or
/// end an embedded link. (A backslash is left alone: conditions print `/\` as it is, and no
/// escaped text is followed by a link without a separator.)
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One file's verdict under one model, as `check` made it.
pub struct CheckedVerdict<'a> {
    /// The program the verdict is about (for a `.cu` file's PTX verdict, its PTX view).
    pub program: &'a Program,
    pub verdict: &'a Verdict,
}

/// A SARIF log being built: results in the order they are pushed.
#[derive(Clone, Debug, Default)]
pub struct SarifLog {
    results: Vec<SarifResult>,
}

impl SarifLog {
    pub fn new() -> SarifLog {
        SarifLog::default()
    }

    /// Adds one result: the one call a subcommand with findings of its own needs.
    pub fn push(&mut self, result: SarifResult) {
        self.results.push(result);
    }

    pub fn results(&self) -> &[SarifResult] {
        &self.results
    }

    /// Adds what checking one file found: the front-end's warnings, then
    /// each verdict's findings and, for a verdict whose exploration was cut short, an
    /// `unknown` result. A finding that several models make alike is one result whose
    /// `properties.models` lists them all (in `verdicts` order); every result of a verdict
    /// says its model there, and with more than one verdict its message ends in `(under
    /// MODEL)` or `(under MODEL and MODEL)`.
    pub fn add_checked(
        &mut self,
        file: &str,
        source: &str,
        warnings: &[Diagnostic],
        verdicts: &[CheckedVerdict],
    ) {
        for w in warnings {
            self.push(SarifResult {
                rule: rules::FRONTEND_WARNING,
                level: rules::FRONTEND_WARNING.level,
                message: escape(&w.message),
                locations: vec![Place {
                    file: file.to_string(),
                    region: Region::of_span(Some(source), w.span.unwrap_or_default()),
                    message: None,
                }],
                related: vec![],
                properties: Map::new(),
            });
        }
        // Each result with the models that made it, in first-made order.
        let mut made: Vec<(SarifResult, Vec<&'static str>)> = Vec::new();
        for cv in verdicts {
            let model = cv.verdict.model;
            let mut these: Vec<SarifResult> = findings(cv.program, cv.verdict)
                .iter()
                .map(|f| finding_result(file, source, cv.program.condition.span, f))
                .collect();
            these.extend(unknown_result(file, source, cv.program, cv.verdict));
            for r in these {
                match made.iter_mut().find(|(m, _)| *m == r) {
                    Some((_, models)) if !models.contains(&model) => models.push(model),
                    Some(_) => {}
                    None => made.push((r, vec![model])),
                }
            }
        }
        for (mut r, models) in made {
            if verdicts.len() > 1 {
                r.message = format!("{} (under {})", r.message, models.join(" and "));
            }
            r.properties.insert("models".into(), models.into());
            self.push(r);
        }
    }

    /// Adds findings made without a verdict's program (the native host path's), each as
    /// [`SarifLog::add_checked`] adds a verdict's: a failing requirement at `required` (what is
    /// required: for a host program, the assertion that fails), the others at their first
    /// label; `properties` go on every result.
    pub fn add_findings(
        &mut self,
        file: &str,
        source: &str,
        required: Option<Span>,
        findings: &[Finding],
        properties: &Map<String, Value>,
    ) {
        for f in findings {
            let mut r = finding_result(file, source, required, f);
            r.properties.extend(properties.clone());
            self.push(r);
        }
    }

    /// Adds a file that could not be read, parsed or checked (`error`, its `file` set), at its
    /// span of `source` (the file's text, when it was read) when it has a position. SARIF's
    /// message is one line: the notes follow the message, each after `; `.
    pub fn add_input_error(&mut self, error: &Diagnostic, source: Option<&str>) {
        let message = std::iter::once(error.message.as_str())
            .chain(error.notes.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("; ");
        self.push(SarifResult {
            rule: rules::INPUT_ERROR,
            level: rules::INPUT_ERROR.level,
            message: escape(&message),
            locations: vec![Place {
                file: error.file.clone().unwrap_or_default(),
                region: error.position().and_then(|s| Region::of_span(source, s)),
                message: None,
            }],
            related: vec![],
            properties: Map::new(),
        });
    }

    /// The log as JSON. `version`: scopecheck's; `information_uri`: its home page, when it
    /// has one; `cwd`: the directory relative file names are relative to (the `%SRCROOT%`
    /// base), as an absolute path, when known.
    pub fn to_json(
        &self,
        version: &str,
        information_uri: Option<&str>,
        cwd: Option<&Path>,
    ) -> Value {
        // The rules results use, in catalog order, then any others (another subcommand's) in
        // the order of first use.
        let mut used: Vec<Rule> = Vec::new();
        for r in &self.results {
            if !used.iter().any(|u| u.id == r.rule.id) {
                used.push(r.rule);
            }
        }
        let rank = |r: &Rule| {
            rules::ALL
                .iter()
                .position(|c| c.id == r.id)
                .unwrap_or(rules::ALL.len())
        };
        // A stable sort keeps first-use order among the others.
        used.sort_by_key(rank);
        let rules: Vec<RuleJson> = used
            .iter()
            .map(|r| RuleJson {
                id: r.id,
                short_description: Text {
                    text: r.short.into(),
                },
                full_description: Text {
                    text: r.full.into(),
                },
                help: Text {
                    text: r.help.into(),
                },
                default_configuration: Configuration { level: r.level },
            })
            .collect();
        let results: Vec<ResultJson> = self
            .results
            .iter()
            .map(|r| ResultJson {
                rule_id: r.rule.id,
                rule_index: used.iter().position(|u| u.id == r.rule.id).unwrap_or(0),
                level: r.level,
                message: Text {
                    text: r.message.clone(),
                },
                locations: r.locations.iter().map(|p| location(p, None, cwd)).collect(),
                related_locations: r
                    .related
                    .iter()
                    .enumerate()
                    .map(|(i, p)| location(p, Some(i + 1), cwd))
                    .collect(),
                properties: r.properties.clone(),
            })
            .collect();
        let base_ids = cwd.map(|dir| {
            let mut m = Map::new();
            let mut uri = file_uri(dir);
            if !uri.ends_with('/') {
                uri.push('/');
            }
            m.insert(SRCROOT.into(), serde_json::json!({ "uri": uri }));
            m
        });
        let log = LogJson {
            schema: SCHEMA_URI,
            version: "2.1.0",
            runs: vec![RunJson {
                tool: Tool {
                    driver: Driver {
                        name: "scopecheck",
                        version: version.to_string(),
                        information_uri: information_uri.map(str::to_string),
                        rules,
                    },
                },
                original_uri_base_ids: base_ids,
                column_kind: "unicodeCodePoints",
                results,
            }],
        };
        // Serializing plain structs of strings and numbers cannot fail.
        serde_json::to_value(log).unwrap_or(Value::Null)
    }
}

/// The base id of files named relative to the current directory.
const SRCROOT: &str = "%SRCROOT%";

/// A finding of `check` as a result: at its first label (a failing requirement: at
/// `condition`, the span of what is required), the other labels as related locations, linked
/// from the message.
fn finding_result(file: &str, source: &str, condition: Option<Span>, f: &Finding) -> SarifResult {
    let rule = rule_of(f);
    let place = |span: Span, message: Option<String>| Place {
        file: file.to_string(),
        region: Region::of_span(Some(source), span),
        message,
    };
    let line_of = |span: Span| match span.line {
        0 => String::new(),
        n => format!(" (line {n})"),
    };
    let mut labels = f.labels.iter();
    // A requirement is broken at its condition, and the witness reads are evidence.
    let first = match f.rule == rules::REQUIREMENT_FAILS.id {
        true => None,
        false => labels.next(),
    };
    let (primary, lead) = match first {
        // A lint's one label says only "here".
        Some((span, _)) if f.kind == "lint" => (Some(place(*span, None)), None),
        Some((span, text)) => (
            Some(place(*span, Some(text.clone()))),
            Some(format!("{}{}", escape(text), line_of(*span))),
        ),
        // Findings without labels are about the final states, which the condition is about.
        None => (condition.map(|s| place(s, None)), None),
    };
    let mut related = Vec::new();
    let mut links = Vec::new();
    for (span, text) in labels {
        related.push(place(*span, Some(text.clone())));
        links.push(format!(
            "[{}]({}){}",
            escape(text),
            related.len(),
            line_of(*span)
        ));
    }
    let mut message = escape(&f.message);
    let parts: Vec<String> = lead.into_iter().chain(links).collect();
    if !parts.is_empty() {
        let joint = if f.rule == rules::REQUIREMENT_FAILS.id {
            "; one execution that breaks it: "
        } else {
            ": "
        };
        message.push_str(joint);
        message.push_str(&parts.join(if f.kind == "race" { " and " } else { "; " }));
    }
    let mut properties = Map::new();
    if let Some(help) = &f.help {
        // A hang's help is why it happens, under which scheduler: part of the result.
        if f.kind == "hang" {
            message.push_str(&format!("; {}", escape(help)));
        }
        properties.insert("help".into(), help.clone().into());
    }
    SarifResult {
        rule,
        level: Level::of_severity(f.severity),
        message,
        locations: primary.into_iter().collect(),
        related,
        properties,
    }
}

/// The `unknown` result of a verdict whose exploration a bound cut short: a warning when the
/// result is Unknown, a note when it was settled anyway.
fn unknown_result(
    file: &str,
    source: &str,
    program: &Program,
    verdict: &Verdict,
) -> Option<SarifResult> {
    let incomplete = verdict.incomplete.as_ref()?;
    let (level, message) = if verdict.outcome == Outcome::Unknown {
        (
            Level::Warning,
            format!(
                "the check is incomplete and its result Unknown: {}",
                incomplete.reason
            ),
        )
    } else {
        (
            Level::Note,
            format!(
                "the exploration is incomplete ({}): the result {} is settled, but races and hangs in the executions not explored may be missed",
                incomplete.reason,
                outcome_text(verdict.outcome)
            ),
        )
    };
    Some(SarifResult {
        rule: rules::UNKNOWN,
        level,
        message: escape(&message),
        locations: vec![Place {
            file: file.to_string(),
            region: program
                .condition
                .span
                .and_then(|s| Region::of_span(Some(source), s)),
            message: None,
        }],
        related: vec![],
        properties: Map::new(),
    })
}

fn location(p: &Place, id: Option<usize>, cwd: Option<&Path>) -> LocationJson {
    // An absolute name under the current directory is relative to it, as code scanning
    // wants (paths relative to the checkout).
    let relative = cwd
        .and_then(|dir| Path::new(&p.file).strip_prefix(dir).ok())
        .map(|r| r.to_string_lossy().into_owned());
    let (uri, uri_base_id) = artifact_uri(relative.as_deref().unwrap_or(&p.file));
    LocationJson {
        id,
        physical_location: Physical {
            artifact_location: Artifact { uri, uri_base_id },
            region: p.region,
        },
        message: p.message.as_ref().map(|m| Text { text: m.clone() }),
    }
}

/// A file name as a SARIF `artifactLocation`: a relative name as a relative URI reference under
/// `%SRCROOT%` (the current directory), an absolute one (outside it) as a `file:` URI.
fn artifact_uri(file: &str) -> (String, Option<&'static str>) {
    let path = Path::new(file);
    if path.is_absolute() {
        return (file_uri(path), None);
    }
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::CurDir => None,
            Component::ParentDir => Some("..".to_string()),
            other => Some(percent_encode(&other.as_os_str().to_string_lossy())),
        })
        .collect();
    (parts.join("/"), Some(SRCROOT))
}

/// An absolute path as a `file:` URI.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for c in path.components() {
        match c {
            Component::RootDir => {}
            other => {
                uri.push('/');
                uri.push_str(&percent_encode(&other.as_os_str().to_string_lossy()));
            }
        }
    }
    if uri == "file://" {
        uri.push('/');
    }
    uri
}

/// Percent-encodes one path segment: everything but what RFC 3986 lets a segment hold as it is
/// (unreserved characters, sub-delimiters, `@`; not `:`, which in a first segment would read
/// as a scheme). `MP+rel.litmus` stays as it is, so tools match it to the file by eye too.
fn percent_encode(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

// The SARIF objects the log uses, serialized with the schema's property names.

#[derive(Serialize)]
struct LogJson {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<RunJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunJson {
    tool: Tool,
    #[serde(skip_serializing_if = "Option::is_none")]
    original_uri_base_ids: Option<Map<String, Value>>,
    column_kind: &'static str,
    results: Vec<ResultJson>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<String>,
    rules: Vec<RuleJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleJson {
    id: &'static str,
    short_description: Text,
    full_description: Text,
    help: Text,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Configuration {
    level: Level,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultJson {
    rule_id: &'static str,
    rule_index: usize,
    level: Level,
    message: Text,
    locations: Vec<LocationJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<LocationJson>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    properties: Map<String, Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LocationJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: Physical,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Physical {
    artifact_location: Artifact,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Artifact {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopecheck_model::LintKind;

    fn span(offset: usize, len: usize, line: u32, column: u32) -> Span {
        Span {
            offset,
            len,
            line,
            column,
        }
    }

    #[test]
    fn columns_count_code_points_whatever_the_front_end_counted() {
        let src = "x\n/* é */ st x;\n";
        // `st x;` starts at byte 11 of line 2: after `/* é */ `, 8 characters but 9 bytes.
        let at = src.find("st").unwrap();
        assert_eq!(at, 11);
        let want = Region {
            start_line: 2,
            start_column: 9,
            end_line: 2,
            end_column: 14,
        };
        // A litmus span (column in characters) and a tree-sitter one (column in bytes + 1)
        // give the same region, recounted from the offset.
        assert_eq!(Region::of_span(Some(src), span(at, 5, 2, 9)), Some(want));
        assert_eq!(Region::of_span(Some(src), span(at, 5, 2, 10)), Some(want));
    }

    #[test]
    fn a_span_over_lines_ends_on_its_last_line() {
        let src = "ab\ncd\nef\n";
        // From `b` (line 1, column 2) over `b\ncd\ne`: ends after `e`, line 3 column 2.
        assert_eq!(
            Region::of_span(Some(src), span(1, 6, 1, 2)),
            Some(Region {
                start_line: 1,
                start_column: 2,
                end_line: 3,
                end_column: 2
            })
        );
    }

    #[test]
    fn a_span_into_another_text_keeps_its_line_and_column() {
        // The offset is on line 1 of `src`, the span says line 7: it points into another
        // text (a PTX module), so line and column are taken as given, len as the width.
        let src = "one line\n";
        assert_eq!(
            Region::of_span(Some(src), span(2, 3, 7, 4)),
            Some(Region {
                start_line: 7,
                start_column: 4,
                end_line: 7,
                end_column: 7
            })
        );
        // No position at all: no region.
        assert_eq!(Region::of_span(Some(src), Span::default()), None);
    }

    #[test]
    fn file_names_become_uri_references() {
        assert_eq!(
            artifact_uri("./tests/a b.litmus"),
            ("tests/a%20b.litmus".to_string(), Some(SRCROOT))
        );
        assert_eq!(
            artifact_uri("../x/MP+rel:1.litmus"),
            ("../x/MP+rel%3A1.litmus".to_string(), Some(SRCROOT))
        );
        assert_eq!(
            artifact_uri("/abs/dir/k.cu"),
            ("file:///abs/dir/k.cu".to_string(), None)
        );
        assert_eq!(file_uri(Path::new("/")), "file:///");
    }

    #[test]
    fn an_absolute_name_under_the_current_directory_is_relative_to_it() {
        let mut log = SarifLog::new();
        for file in ["/work/project/t/x.litmus", "/elsewhere/y.litmus"] {
            log.add_input_error(&Diagnostic::error("unreadable").in_file(file), None);
        }
        let json = log.to_json("0", None, Some(Path::new("/work/project")));
        let artifact = |i: usize| {
            json["runs"][0]["results"][i]["locations"][0]["physicalLocation"]["artifactLocation"]
                .clone()
        };
        // Under the directory: relative, under %SRCROOT%; outside it: a file: URI.
        assert_eq!(
            artifact(0),
            serde_json::json!({ "uri": "t/x.litmus", "uriBaseId": "%SRCROOT%" })
        );
        assert_eq!(
            artifact(1),
            serde_json::json!({ "uri": "file:///elsewhere/y.litmus" })
        );
    }

    #[test]
    fn brackets_are_escaped_outside_links() {
        assert_eq!(escape("a[0] \\/ b"), "a\\[0\\] \\/ b");
    }

    #[test]
    fn every_finding_rule_is_in_the_catalog() {
        // The ids `findings` gives, and each lint kind's, are rules of the catalog (else a
        // result would reach the log with a made-up description).
        let mut ids = vec![
            "requirement-fails",
            "data-race",
            "heterogeneous-race",
            "hang",
        ];
        ids.extend(LintKind::ALL.iter().map(|k| k.id()));
        ids.push("platform");
        for id in ids {
            assert!(rules::ALL.iter().any(|r| r.id == id), "{id}");
        }
        for k in LintKind::ALL {
            assert_eq!(rules::lint(k).id, k.id());
        }
        // Ids are unique.
        let mut all: Vec<&str> = rules::ALL.iter().map(|r| r.id).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), rules::ALL.len());
    }
}
