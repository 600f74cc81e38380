//! A character cursor over the source with line and column, shared by the dialects' lexers.

use scopecheck_ir::Span;

use crate::ParseError;

pub(crate) struct Cursor<'a> {
    pub(crate) src: &'a str,
    pub(crate) pos: usize,
    line: u32,
    column: u32,
    /// The spans of the `(* ... *)` comments skipped so far, for the option comments
    /// ([`crate::option_words`]).
    pub(crate) comments: Vec<Span>,
}

pub(crate) fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Cursor<'a> {
    /// A cursor at `at` (its offset, line and column) in `src`.
    pub(crate) fn at(src: &'a str, at: Span) -> Self {
        Cursor {
            src,
            pos: at.offset.min(src.len()),
            line: at.line,
            column: at.column,
            comments: Vec::new(),
        }
    }

    pub(crate) fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// The character `n` after the next one (`peek_n(0)` is `peek()`).
    pub(crate) fn peek_n(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    pub(crate) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.column = 1;
        } else {
            self.column = self.column.saturating_add(1);
        }
        Some(c)
    }

    pub(crate) fn here(&self) -> Span {
        Span {
            offset: self.pos,
            len: 0,
            line: self.line,
            column: self.column,
        }
    }

    /// The span of the next character (or the empty span at the end of the input).
    pub(crate) fn here_token_span(&self) -> Span {
        Span {
            len: self.peek().map_or(0, char::len_utf8),
            ..self.here()
        }
    }

    pub(crate) fn since(&self, start: Span) -> Span {
        Span {
            len: self.pos.saturating_sub(start.offset),
            ..start
        }
    }

    pub(crate) fn text(&self, span: Span) -> &'a str {
        self.src
            .get(span.offset..span.offset + span.len)
            .unwrap_or("")
    }

    /// A `"..."` string at the cursor: its contents and span.
    pub(crate) fn string(&mut self) -> Result<(String, Span), ParseError> {
        let start = self.here();
        self.bump();
        loop {
            match self.bump() {
                None => {
                    return Err(ParseError::new(
                        Span { len: 1, ..start },
                        "unterminated string: this `\"` has no closing `\"`",
                    )
                    .expecting(&["`\"`"]))
                }
                Some('"') => break,
                Some(_) => {}
            }
        }
        let span = self.since(start);
        let inner = self
            .src
            .get(span.offset + 1..span.offset + span.len - 1)
            .unwrap_or("");
        Ok((inner.to_string(), span))
    }
}
