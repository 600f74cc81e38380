//! The cursor the dialects' lexers share: the IR's character cursor, the comments skipped, and
//! the `"..."` strings both dialects write alike.

use scopecheck_ir::{Diagnostic, Span};

/// The shared character cursor ([`scopecheck_ir::cursor::Cursor`]) with what both dialects'
/// lexers keep besides: the comments they skipped.
pub(crate) struct Cursor<'a> {
    chars: scopecheck_ir::cursor::Cursor<'a>,
    /// The spans of the `(* ... *)` comments skipped so far, for the option comments
    /// ([`crate::option_words`]).
    pub(crate) comments: Vec<Span>,
}

impl<'a> std::ops::Deref for Cursor<'a> {
    type Target = scopecheck_ir::cursor::Cursor<'a>;
    fn deref(&self) -> &Self::Target {
        &self.chars
    }
}

impl std::ops::DerefMut for Cursor<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.chars
    }
}

pub(crate) fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Cursor<'a> {
    /// A cursor at `at` (its offset, line and column) in `src`.
    pub(crate) fn at(src: &'a str, at: Span) -> Self {
        Cursor {
            chars: scopecheck_ir::cursor::Cursor::at(src, at),
            comments: Vec::new(),
        }
    }

    /// A `"..."` string at the cursor: its contents and span.
    pub(crate) fn string(&mut self) -> Result<(String, Span), Diagnostic> {
        let start = self.here();
        self.bump();
        loop {
            match self.bump() {
                None => {
                    return Err(Diagnostic::error(
                        "unterminated string: this `\"` has no closing `\"`",
                    )
                    .at(Span { len: 1, ..start })
                    .expecting(&["`\"`"]))
                }
                Some('"') => break,
                Some(_) => {}
            }
        }
        let span = self.since(start);
        let inner = self
            .src()
            .get(span.offset + 1..span.offset + span.len - 1)
            .unwrap_or("");
        Ok((inner.to_string(), span))
    }
}
