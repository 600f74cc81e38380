//! Litmus test parsers producing scopecheck IR.
//!
//! The PTX dialect is described in `docs/litmus-ptx.md`, the C dialect (C, CUDA, OPENCL
//! headers) in `docs/litmus-c.md` and the `c` module. The parser is hand-written: a lexer
//! ([`lexer`]) turns the text after the header line into tokens with exact spans, and a
//! recursive-descent parser builds the [`Program`]: [`ptx`] reads the sections (header, initial
//! state, placement row, instruction table), [`instr`] reads one instruction, and [`condition`]
//! reads the `locations` line and the final condition.
//!
//! Every error carries the span of the offending token and what would have been accepted there;
//! no input makes the parser panic.

mod c;
mod condition;
mod cursor;
mod instr;
mod lexer;
mod ptx;
pub mod vocab;

use scopecheck_ir::{Program, Span};

/// A parse error: where, what went wrong, and what would have been accepted there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    pub message: String,
    /// Where in the source; `span.line` and `span.column` are 1-based.
    pub span: Span,
    /// What the parser would have accepted at that point (may be empty).
    pub expected: Vec<String>,
}

impl ParseError {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            span,
            expected: Vec::new(),
        }
    }

    /// Adds the list of what would have been accepted.
    pub(crate) fn expecting<S: ToString>(mut self, expected: &[S]) -> Self {
        self.expected = expected.iter().map(|s| s.to_string()).collect();
        self
    }
}

/// Something worth telling the user about a test that is not an error: the test parses, but
/// a construct means something other than what it says (a device-scope atomic on shared
/// memory is only block scope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where in the source; `span.line` and `span.column` are 1-based.
    pub span: Span,
    pub message: String,
}

/// The architectures whose tests the header may name and that we read.
const ACCEPTED_ARCHES: &[&str] = &["PTX", "C", "CUDA", "OPENCL"];

/// Parses a litmus test, choosing the dialect from its first word (`PTX`; `C`, `CUDA` or
/// `OPENCL` for the C dialect). Warnings are dropped; see [`parse_with_warnings`].
pub fn parse(source: &str) -> Result<Program, ParseError> {
    parse_with_warnings(source).map(|(p, _)| p)
}

/// Parses a litmus test and also returns its warnings (C dialect: scopes narrowed on shared
/// memory, scopes of host threads).
pub fn parse_with_warnings(source: &str) -> Result<(Program, Vec<Warning>), ParseError> {
    let mut lexer = lexer::Lexer::new(source);
    lexer.skip_trivia()?;
    let (word, span) = lexer.header_word();
    match word.as_str() {
        "PTX" => ptx::parse(lexer).map(|p| (p, Vec::new())),
        "C" | "CUDA" | "OPENCL" => c::parse(lexer, &word),
        "" => Err(ParseError::new(
            lexer.here_token_span(),
            "expected a litmus header such as `PTX NAME` or `C NAME` at the start of the test",
        )
        .expecting(ACCEPTED_ARCHES)),
        _ => Err(ParseError::new(
            span,
            format!("unknown architecture `{word}`; expected PTX, C, CUDA or OPENCL"),
        )
        .expecting(ACCEPTED_ARCHES)),
    }
}

#[cfg(test)]
mod mutate;
#[cfg(test)]
mod tests;
