//! Why a file could not be checked, shown with `miette` (text mode) or as a JSON error line.

use std::fmt;

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};
use scopecheck_ir::{Program, Span};
use scopecheck_litmus::ParseError;
use scopecheck_model::CheckError;

/// Something that stopped one file from being checked.
#[derive(Debug)]
pub struct Failure {
    pub file: String,
    pub message: String,
    /// The file's text, when it was read.
    source: Option<String>,
    /// Where in `source`, with the label to put there.
    at: Option<(Span, &'static str)>,
    help: Option<String>,
}

impl Failure {
    /// A file that could not be found, read or listed.
    pub fn io(file: &str, message: String) -> Box<Failure> {
        Box::new(Failure {
            file: file.into(),
            message,
            source: None,
            at: None,
            help: None,
        })
    }

    /// A file that was read but cannot be taken as text, labelled where (`span` of `source`).
    pub fn located(file: &str, message: String, source: String, span: Span) -> Box<Failure> {
        Box::new(Failure {
            file: file.into(),
            message,
            source: Some(source),
            at: Some((span, "here")),
            help: None,
        })
    }

    /// A parse error: the span it points at, and what would have been accepted there.
    pub fn parse(file: &str, source: String, err: &ParseError) -> Box<Failure> {
        let help = match err.expected.as_slice() {
            [] => None,
            [one] => Some(format!("expected {one}")),
            many => Some(format!("expected one of: {}", many.join(", "))),
        };
        Box::new(Failure {
            file: file.into(),
            message: err.message.clone(),
            source: Some(source),
            at: Some((err.span, "here")),
            help,
        })
    }

    /// An error found while exploring a parsed test: labelled at the instruction at fault, or
    /// on the test's header line when the error has no position.
    pub fn check(file: &str, source: String, program: &Program, err: &CheckError) -> Box<Failure> {
        let at = err.span().map(|span| (span, "here")).or_else(|| {
            source.find(&program.name).map(|offset| {
                let span = Span {
                    offset,
                    len: program.name.len(),
                    line: 0,
                    column: 0,
                };
                (span, "in this test")
            })
        });
        Box::new(Failure {
            file: file.into(),
            message: err.to_string(),
            source: Some(source),
            at,
            help: None,
        })
    }

    /// A panic inside scopecheck: a bug, not a problem with the test. `source`: the file's
    /// text when it was read; `why`: the panic's message.
    pub fn internal(file: &str, source: Option<String>, why: &str) -> Box<Failure> {
        Box::new(Failure {
            file: file.into(),
            message: format!("internal error: scopecheck panicked while checking this test: {why}"),
            source,
            at: None,
            help: Some("this is a bug in scopecheck, not in the test; please report it".into()),
        })
    }

    /// Where in the file the failure is, when it has a position, and the file's text.
    pub fn position(&self) -> (Option<Span>, Option<&str>) {
        let span = self.at.map(|(span, _)| span).filter(|s| s.line > 0);
        (span, self.source.as_deref())
    }

    /// What would have been accepted there, or what to do.
    pub fn help(&self) -> Option<&str> {
        self.help.as_deref()
    }

    /// The NDJSON error object; line and column are 0 when the failure has no position.
    pub fn json(&self) -> serde_json::Value {
        let (line, column) = match self.at {
            Some((span, _)) if span.line > 0 => (span.line, span.column),
            _ => (0, 0),
        };
        scopecheck_report::json_error(&self.file, line, column, &self.message)
    }

    /// The failure as miette shows it: the file name, the source line, a label at the error
    /// and the help.
    pub fn text(&self) -> String {
        let label = self.label();
        // Without a label miette shows no source, and so no file name: put it in the message.
        let message = match label {
            Some(_) => self.message.clone(),
            None => format!("{}: {}", self.file, self.message),
        };
        let diag = Diag {
            message,
            src: NamedSource::new(&self.file, self.source.clone().unwrap_or_default()),
            label,
            help: self.help.clone(),
        };
        format!("{:?}", miette::Report::new(diag))
    }

    /// Prints the failure to stderr ([`Failure::text`]).
    pub fn eprint(&self) {
        crate::output::errln!("{}", self.text());
    }

    fn label(&self) -> Option<LabeledSpan> {
        let source = self.source.as_deref()?;
        let (span, text) = self.at?;
        let mut start = span.offset.min(source.len());
        while !source.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + span.len).min(source.len());
        while !source.is_char_boundary(end) {
            end -= 1;
        }
        Some(LabeledSpan::new(Some(text.to_string()), start, end - start))
    }
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
    let mut start = span.offset.min(source.len());
    while !source.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + span.len).min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    Some(LabeledSpan::new(Some(text.to_string()), start, end - start))
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

impl Diagnostic for Finding {
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

impl Diagnostic for Diag {
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

/// What a caught panic said: its message when it was a string, as `panic!` makes it.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs one file's work `f`, turning a panic inside it into that file's internal-error
/// failure, so that the files after it are still read, checked and reported.
pub fn guarded<T>(
    file: &str,
    f: impl FnOnce() -> Result<T, Box<Failure>>,
) -> Result<T, Box<Failure>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(Failure::internal(file, None, &panic_message(&*payload))),
    }
}
