//! What every front-end, the loader and the model tell the user about a file: one shape for
//! errors and warnings alike (a message, a severity, where in which file, and notes), so that
//! the edge (the command line's text, JSON and SARIF reports) renders each once, whatever made
//! it. The front-ends return it as their error and their warnings (`Diagnostic::error(..).at(span)`
//! where they find the problem); a front-end keeps a type of its own only where its caller
//! branches on more than a message and a span, and that type holds a `Diagnostic`.

use std::fmt;

use crate::Span;

/// How serious a diagnostic is, as SARIF and miette name the levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The file could not be read, parsed, lowered or checked.
    Error,
    /// The file was checked, but something in it does not mean what it says, or was read in
    /// a way the user should know of (a scope narrowed, a `printf` ignored).
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One error or warning about a file: its [`DiagnosticFields`] behind one pointer. The
/// front-ends return `Result<_, Diagnostic>` from every step of their recursive descent, so a
/// pointer-sized error keeps their stack frames as small as before (a debug build's tests run
/// on 2 MiB stacks), and the fields are read and written through it (`d.message`, `d.span`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.message)]
pub struct Diagnostic(Box<DiagnosticFields>);

/// What a [`Diagnostic`] says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagnosticFields {
    pub severity: Severity,
    pub message: String,
    /// The file, as reports name it (the path as given on the command line); `None` until the
    /// loader, which knows it, sets it: the front-ends read text, not files.
    pub file: Option<String>,
    /// Where in the file: `line` and `column` 1-based. A span with line 0 has an offset but no
    /// line (the name of a test found in its text); `None`: no position at all.
    pub span: Option<Span>,
    /// The text put at the span when the file is shown; `None` says "here".
    pub label: Option<String>,
    /// What would have been accepted there, or what to do: shown after the message (miette's
    /// help, one line each), appended to it where one line is all there is (SARIF).
    pub notes: Vec<String>,
}

impl std::ops::Deref for Diagnostic {
    type Target = DiagnosticFields;
    fn deref(&self) -> &DiagnosticFields {
        &self.0
    }
}

impl std::ops::DerefMut for Diagnostic {
    fn deref_mut(&mut self) -> &mut DiagnosticFields {
        &mut self.0
    }
}

impl Diagnostic {
    /// An error with `message`, at no position yet.
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, message)
    }

    /// A warning with `message`, at no position yet.
    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, message)
    }

    fn new(severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic(Box::new(DiagnosticFields {
            severity,
            message: message.into(),
            file: None,
            span: None,
            label: None,
            notes: Vec::new(),
        }))
    }

    /// A panic inside scopecheck while reading or checking a file: a bug, not a problem with
    /// the test. `why`: the panic's message.
    pub fn internal(why: &str) -> Diagnostic {
        Diagnostic::error(format!(
            "internal error: scopecheck panicked while checking this test: {why}"
        ))
        .with_note("this is a bug in scopecheck, not in the test; please report it")
    }

    /// The same, at `span` when there is one (a diagnostic moved from another).
    pub fn at_span(mut self, span: Option<Span>) -> Diagnostic {
        self.span = span;
        self
    }

    /// The same, with `message` in place of its own.
    pub fn reworded(mut self, message: impl Into<String>) -> Diagnostic {
        self.message = message.into();
        self
    }

    /// The same, at `span`.
    pub fn at(mut self, span: Span) -> Diagnostic {
        self.span = Some(span);
        self
    }

    /// The same, in `file` (as reports name it).
    pub fn in_file(mut self, file: impl Into<String>) -> Diagnostic {
        self.file = Some(file.into());
        self
    }

    /// The same, with `label` put at its span in place of "here".
    pub fn labelled(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    /// The same, with one note more.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The note that says what a parser would have accepted: `expected X`, or `expected one
    /// of: X, Y`; none when the list is empty.
    pub fn expecting<S: ToString>(self, expected: &[S]) -> Diagnostic {
        match expected {
            [] => self,
            [one] => self.with_note(format!("expected {}", one.to_string())),
            many => {
                let many: Vec<String> = many.iter().map(ToString::to_string).collect();
                self.with_note(format!("expected one of: {}", many.join(", ")))
            }
        }
    }

    /// The 1-based line, 0 when there is none.
    pub fn line(&self) -> u32 {
        self.span.map_or(0, |s| s.line)
    }

    /// The 1-based column, 0 when there is no span.
    pub fn column(&self) -> u32 {
        self.span.map_or(0, |s| s.column)
    }

    /// The span, when it has a line: what a report can point at.
    pub fn position(&self) -> Option<Span> {
        self.span.filter(|s| s.line > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_is_one_pointer() {
        // Every step of the front-ends' recursive descent returns `Result<_, Diagnostic>`: its
        // fields (over 100 bytes) sit behind one pointer, so the frames stay small.
        assert_eq!(
            std::mem::size_of::<Diagnostic>(),
            std::mem::size_of::<usize>()
        );
        let mut d = Diagnostic::error("x").in_file("a.cu");
        d.message.push('y');
        assert_eq!(
            (d.message.as_str(), d.file.as_deref()),
            ("xy", Some("a.cu"))
        );
    }

    #[test]
    fn expected_tokens_become_one_note() {
        // One token reads "expected X"; several read as a list, as the parsers' errors
        // always did; none adds nothing.
        let one = Diagnostic::error("bad").expecting(&["`;`"]);
        assert_eq!(one.notes, ["expected `;`"]);
        let many = Diagnostic::error("bad").expecting(&["`;`", "`}`"]);
        assert_eq!(many.notes, ["expected one of: `;`, `}`"]);
        let none = Diagnostic::error("bad").expecting::<&str>(&[]);
        assert!(none.notes.is_empty());
    }

    #[test]
    fn a_span_without_a_line_is_no_position() {
        // A test's name found in the text has an offset but line 0: it can be labelled, but
        // reports give line and column 0 for it, as for no span at all.
        let span = Span {
            offset: 10,
            len: 4,
            line: 0,
            column: 0,
        };
        let d = Diagnostic::error("x").at(span);
        assert_eq!((d.line(), d.column(), d.position()), (0, 0, None));
        let d = Diagnostic::warning("y").at(Span {
            line: 3,
            column: 7,
            ..span
        });
        assert_eq!((d.line(), d.column()), (3, 7));
        assert_eq!(d.severity.to_string(), "warning");
    }
}

/// Why a file could not be loaded or checked: the diagnostic (its `file` set) and the file's
/// text when it was read, for a snippet. Every front-end and command returns this one type;
/// the CLI renders it once (text through miette, JSON, SARIF).
#[derive(Debug, thiserror::Error)]
#[error("{}", diagnostic.message)]
pub struct Failure {
    pub diagnostic: Diagnostic,
    /// The file's text, when it was read (not `source`: thiserror takes that name for the
    /// error's cause).
    pub text: Option<String>,
}

impl Failure {
    /// `diagnostic` about `file`, whose text is `text` when it was read.
    pub fn new(file: &str, diagnostic: Diagnostic, text: Option<String>) -> Box<Failure> {
        Box::new(Failure {
            diagnostic: diagnostic.in_file(file),
            text,
        })
    }

    /// A file that could not be found, read or listed.
    pub fn io(file: &str, message: String) -> Box<Failure> {
        Failure::new(file, Diagnostic::error(message), None)
    }

    /// A file that was read but cannot be taken as text, labelled where (`span` of `source`).
    pub fn located(file: &str, message: String, source: String, span: Span) -> Box<Failure> {
        Failure::in_source(file, source, Diagnostic::error(message).at(span))
    }

    /// A front-end's error about `source`, the text of `file` (a parse error: the span it
    /// points at, and what would have been accepted there).
    pub fn in_source(file: &str, source: String, err: impl Into<Diagnostic>) -> Box<Failure> {
        Failure::new(file, err.into(), Some(source))
    }

    /// A panic inside scopecheck while loading or checking `file`: a bug, not a problem with
    /// the file. `text`: the file's text when it was read; `why`: the panic's message.
    pub fn internal(file: &str, text: Option<String>, why: &str) -> Box<Failure> {
        Failure::new(file, Diagnostic::internal(why), text)
    }

    /// The file, as reports name it.
    pub fn file(&self) -> &str {
        self.diagnostic.file.as_deref().unwrap_or_default()
    }

    /// What went wrong, without the position or the notes.
    pub fn message(&self) -> &str {
        &self.diagnostic.message
    }
}
