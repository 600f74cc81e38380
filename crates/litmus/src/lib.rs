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

pub mod build;
mod c;
mod condition;
mod cursor;
mod instr;
mod lexer;
mod ptx;
pub mod vocab;

/// The most elements one array of a test's initial state may have (each is a location the
/// explorer tracks); checked before any is allocated.
pub const MAX_ARRAY_LENGTH: u32 = 4096;

/// The most locations a test may declare, arrays' elements included.
pub const MAX_LOCATIONS: usize = 65_536;

/// How deeply a C litmus thread's statements and expressions may nest (a chain of `&&`/`||`
/// or of postfix operators counts a level per operator).
pub const MAX_C_NESTING: usize = c::MAX_DEPTH;

/// The most binary operators one expression chain of a C litmus thread may have.
pub const MAX_C_CHAIN: usize = c::MAX_CHAIN;

use scopecheck_ir::{Diagnostic, Program, Span};

/// A word of a per-file option comment `(* options: --unroll 3 *)`, with where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionWord {
    pub word: String,
    /// Where in the source; `span.line` and `span.column` are 1-based.
    pub span: Span,
}

/// A litmus test as read: the program, the front-end's warnings, and what the file says about
/// itself besides the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Test {
    pub program: Program,
    /// What is worth telling the user though the test parses: a construct means something
    /// other than what it says (a device-scope atomic on shared memory is only block scope).
    pub warnings: Vec<Diagnostic>,
    /// The quoted strings after the description (`Program::description` holds the first):
    /// published corpora put a source or a URL there.
    pub docs: Vec<String>,
    /// The words of the file's `(* options: ... *)` comments, in order. The parser does not
    /// interpret them: they are command-line options, which the caller reads.
    pub options: Vec<OptionWord>,
}

/// The architectures whose tests the header may name and that we read.
const ACCEPTED_ARCHES: &[&str] = &["PTX", "C", "CUDA", "OPENCL"];

/// Parses a litmus test, choosing the dialect from its first word (`PTX`; `C`, `CUDA` or
/// `OPENCL` for the C dialect). Warnings are dropped; see [`parse_with_warnings`].
pub fn parse(source: &str) -> Result<Program, Diagnostic> {
    parse_test(source).map(|t| t.program)
}

/// Parses a litmus test and also returns its warnings (C dialect: scopes narrowed on shared
/// memory, scopes of host threads, atomic functions on non-atomic objects).
pub fn parse_with_warnings(source: &str) -> Result<(Program, Vec<Diagnostic>), Diagnostic> {
    parse_test(source).map(|t| (t.program, t.warnings))
}

/// Parses a litmus test with everything the file holds: program, warnings, the extra
/// description strings and the option comments.
pub fn parse_test(source: &str) -> Result<Test, Diagnostic> {
    let mut lexer = lexer::Lexer::new(source);
    lexer.skip_trivia()?;
    let (word, span) = lexer.header_word();
    match word.as_str() {
        "PTX" => ptx::parse(lexer),
        "C" | "CUDA" | "OPENCL" => c::parse(lexer, &word),
        "" => Err(Diagnostic::error(
            "expected a litmus header such as `PTX NAME` or `C NAME` at the start of the test",
        )
        .at(lexer.here_token_span())
        .expecting(ACCEPTED_ARCHES)),
        _ => Err(Diagnostic::error(format!(
            "unknown architecture `{word}`; expected PTX, C, CUDA or OPENCL"
        ))
        .at(span)
        .expecting(ACCEPTED_ARCHES)),
    }
}

/// The words of the option comments among `comments` (spans of `(* ... *)` comments): those
/// whose text starts with `options:`. Each word keeps its own line and column, so that the
/// caller can point at a bad option.
pub(crate) fn option_words(src: &str, comments: &[Span]) -> Vec<OptionWord> {
    const KEY: &str = "options:";
    let mut out = Vec::new();
    let mut comments = comments.to_vec();
    comments.sort_by_key(|c| c.offset);
    comments.dedup();
    for c in comments {
        let Some(text) = src.get(c.offset..c.offset + c.len) else {
            continue;
        };
        let Some(inner) = text.strip_prefix("(*").and_then(|t| t.strip_suffix("*)")) else {
            continue;
        };
        if !inner.trim_start().starts_with(KEY) {
            continue;
        }
        // Walk the comment character by character for exact lines and columns.
        let (mut line, mut column) = (c.line, c.column + 2);
        let skip = inner.len() - inner.trim_start().len() + KEY.len();
        let mut word: Option<(usize, Span)> = None;
        for (i, ch) in inner.char_indices() {
            if i >= skip {
                match (ch.is_whitespace(), word) {
                    (false, None) => {
                        word = Some((
                            i,
                            Span {
                                offset: c.offset + 2 + i,
                                len: 0,
                                line,
                                column,
                            },
                        ))
                    }
                    (true, Some((start, span))) => {
                        out.push(OptionWord {
                            word: inner[start..i].to_string(),
                            span: Span {
                                len: i - start,
                                ..span
                            },
                        });
                        word = None;
                    }
                    _ => {}
                }
            }
            if ch == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        if let Some((start, span)) = word {
            out.push(OptionWord {
                word: inner[start..].to_string(),
                span: Span {
                    len: inner.len() - start,
                    ..span
                },
            });
        }
    }
    out
}

#[cfg(test)]
mod compat_tests;
#[cfg(test)]
mod mutate;
#[cfg(test)]
mod tests;
