//! Why a file could not be checked, shown with `miette` (text mode) or as a JSON error line.

use std::fmt;

use miette::{LabeledSpan, NamedSource, SourceCode};
use scopecheck_ir::{Diagnostic, Failure, Program, Span};

/// An error found while exploring a parsed test: labelled at the instruction at fault, or on
/// the test's header line when the error has no position.
pub fn check_failure(
    file: &str,
    source: String,
    program: &Program,
    err: &Diagnostic,
) -> Box<Failure> {
    let mut d = err.clone();
    if d.span.is_none() {
        if let Some(offset) = source.find(&program.name) {
            let span = Span {
                offset,
                len: program.name.len(),
                line: 0,
                column: 0,
            };
            d = d.at(span).labelled("in this test");
        }
    }
    Failure::new(file, d, Some(source))
}

/// A failure as the reports show it: rendered here, once, for every command.
pub trait Render {
    /// The NDJSON error object; line and column are 0 when the failure has no position.
    fn json(&self) -> serde_json::Value;
    /// The failure as miette shows it: the file name, the source line, a label at the error
    /// and the help.
    fn as_text(&self) -> String;
    /// Prints the failure to stderr ([`Render::as_text`]).
    fn eprint(&self);
}

impl Render for Failure {
    fn json(&self) -> serde_json::Value {
        let (line, column) = match self.diagnostic.position() {
            Some(span) => (span.line, span.column),
            None => (0, 0),
        };
        scopecheck_report::json_error(self.file(), line, column, self.message())
    }

    fn as_text(&self) -> String {
        let label = label(self);
        // Without a label miette shows no source, and so no file name: put it in the message.
        let message = match label {
            Some(_) => self.message().to_string(),
            None => format!("{}: {}", self.file(), self.message()),
        };
        let diag = Diag {
            message,
            src: NamedSource::new(self.file(), self.text.clone().unwrap_or_default()),
            label,
            help: help(self),
        };
        format!("{:?}", miette::Report::new(diag))
    }

    fn eprint(&self) {
        crate::output::errln!("{}", self.as_text());
    }
}

/// What would have been accepted there, or what to do: the notes, one line each.
fn help(f: &Failure) -> Option<String> {
    let notes = &f.diagnostic.notes;
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// The label at the failure's span of the file's text, kept on character boundaries.
fn label(f: &Failure) -> Option<LabeledSpan> {
    let source = f.text.as_deref()?;
    let span = f.diagnostic.span?;
    let text = f.diagnostic.label.as_deref().unwrap_or("here");
    Some(on_char_boundaries(source, span, text))
}

/// A finding about a checked program (a race, a hang, a failing assertion, a lint) with its
/// labels on the source lines, as printed after the report.
pub fn finding_text(file: &str, source: &str, f: &scopecheck_report::Finding) -> String {
    let labels: Vec<LabeledSpan> = f
        .labels
        .iter()
        .filter_map(|(span, text)| labeled(source, *span, text))
        .collect();
    let diag = Finding {
        message: format!("{}: {}", f.severity, f.message),
        src: NamedSource::new(file, source.to_string()),
        labels,
        help: f.help.clone(),
        severity: match f.severity {
            "error" => miette::Severity::Error,
            "warning" => miette::Severity::Warning,
            _ => miette::Severity::Advice,
        },
    };
    format!("{:?}", miette::Report::new(diag))
}

/// A label on `span` of `source`, kept on character boundaries; none for an empty span.
fn labeled(source: &str, span: Span, text: &str) -> Option<LabeledSpan> {
    if span.len == 0 && span.line == 0 {
        return None;
    }
    Some(on_char_boundaries(source, span, text))
}

/// A label on `span` of `source`, its ends moved back onto character boundaries.
fn on_char_boundaries(source: &str, span: Span, text: &str) -> LabeledSpan {
    let mut start = span.offset.min(source.len());
    while !source.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + span.len).min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    LabeledSpan::new(Some(text.to_string()), start, end - start)
}

/// The miette view of a finding.
#[derive(Debug)]
struct Finding {
    message: String,
    src: NamedSource<String>,
    labels: Vec<LabeledSpan>,
    help: Option<String>,
    severity: miette::Severity,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Finding {}

impl miette::Diagnostic for Finding {
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        (!self.labels.is_empty()).then_some(&self.src as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        (!self.labels.is_empty()).then(|| Box::new(self.labels.iter().cloned()) as _)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as _)
    }
}

/// The miette view of a [`Failure`].
#[derive(Debug)]
struct Diag {
    message: String,
    src: NamedSource<String>,
    label: Option<LabeledSpan>,
    help: Option<String>,
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diag {}

impl miette::Diagnostic for Diag {
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.label.as_ref().map(|_| &self.src as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.label
            .clone()
            .map(|l| Box::new(std::iter::once(l)) as _)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as _)
    }
}

/// Runs one file's work `f`, turning a panic inside it into that file's internal-error
/// failure, so that the files after it are still read, checked and reported.
pub fn guarded<T>(
    file: &str,
    f: impl FnOnce() -> Result<T, Box<Failure>>,
) -> Result<T, Box<Failure>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(Failure::internal(
            file,
            None,
            &scopecheck_frontend::deadline::panic_message(&*payload),
        )),
    }
}
