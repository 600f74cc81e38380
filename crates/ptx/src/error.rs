//! The syntax error of the PTX reader, shared by the lexer and the parser (its own module so
//! that neither imports the other for it).

use scopecheck_ir::Span;

/// A syntax error: what was expected, what was found, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    pub message: String,
    pub span: Span,
    /// 1-based, as in `span`.
    pub line: u32,
    /// 1-based, in characters, as in `span`.
    pub column: u32,
}

impl ParseError {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            span,
            line: span.line,
            column: span.column,
        }
    }
}
