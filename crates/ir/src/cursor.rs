//! The character cursor the hand-written lexers share (the litmus test's PTX and C dialects,
//! the PTX module reader): where it stands in the text, the line and column there, and the
//! spans of what it has read. Each lexer keeps its own token grammar on top of it.
//!
//! Columns count characters, not bytes, so that an editor puts the cursor on the right spot
//! after non-ASCII text in a comment. (The CUDA preprocessor does not use it: it lexes each
//! logical line, backslash-newlines spliced, by bytes, and maps a token back to its physical
//! line afterwards; its columns are bytes, as tree-sitter's are for the rest of that
//! front-end.)

use crate::Span;

/// A position in a text, moved forward one character at a time.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    src: &'a str,
    /// The byte offset of the next character.
    pos: usize,
    /// The 1-based line and column (in characters) of the next character.
    line: u32,
    column: u32,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `src`: line 1, column 1.
    pub fn new(src: &'a str) -> Self {
        Cursor::at(
            src,
            Span {
                offset: 0,
                len: 0,
                line: 1,
                column: 1,
            },
        )
    }

    /// A cursor at `at` (its offset, line and column) in `src`: for a lexer that starts after
    /// text another has read (a litmus test's header line).
    pub fn at(src: &'a str, at: Span) -> Self {
        Cursor {
            src,
            pos: at.offset.min(src.len()),
            line: at.line,
            column: at.column,
        }
    }

    /// The whole text.
    pub fn src(&self) -> &'a str {
        self.src
    }

    /// The byte offset of the next character.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The text not read yet.
    pub fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    /// The next character; `None` at the end.
    pub fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// The character `n` after the next one (`peek_n(0)` is `peek()`).
    pub fn peek_n(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    /// Reads the next character, keeping the line and column.
    pub fn bump(&mut self) -> Option<char> {
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

    /// The empty span at the next character.
    pub fn here(&self) -> Span {
        Span {
            offset: self.pos,
            len: 0,
            line: self.line,
            column: self.column,
        }
    }

    /// The span of the next character (or the empty span at the end of the input).
    pub fn here_token_span(&self) -> Span {
        Span {
            len: self.peek().map_or(0, char::len_utf8),
            ..self.here()
        }
    }

    /// The span from `start` (a [`Cursor::here`] taken before) to the next character.
    pub fn since(&self, start: Span) -> Span {
        Span {
            len: self.pos.saturating_sub(start.offset),
            ..start
        }
    }

    /// The text of `span`; empty when it is not within the text.
    pub fn text(&self, span: Span) -> &'a str {
        self.src
            .get(span.offset..span.offset.saturating_add(span.len))
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_characters() {
        // `é` is two bytes but one column; a newline starts line 2 at column 1.
        let mut c = Cursor::new("é\nab");
        assert_eq!(c.bump(), Some('é'));
        let after = c.here();
        assert_eq!((after.offset, after.line, after.column), (2, 1, 2));
        c.bump();
        let start = c.here();
        assert_eq!((start.offset, start.line, start.column), (3, 2, 1));
        assert_eq!(
            (c.peek(), c.peek_n(1), c.peek_n(2)),
            (Some('a'), Some('b'), None)
        );
        c.bump();
        c.bump();
        let word = c.since(start);
        assert_eq!((c.text(word), word.line, word.column), ("ab", 2, 1));
        assert_eq!((c.bump(), c.here_token_span().len, c.rest()), (None, 0, ""));
    }

    #[test]
    fn a_cursor_can_start_mid_text() {
        // Started at the offset, line and column another reader reached: byte 4 of
        // "ab\ncdef" is `d`, line 2, column 2.
        let at = Span {
            offset: 4,
            len: 0,
            line: 2,
            column: 2,
        };
        let c = Cursor::at("ab\ncdef", at);
        assert_eq!(
            (c.pos(), c.peek(), c.here_token_span().len),
            (4, Some('d'), 1)
        );
        assert_eq!((c.here().line, c.here().column), (2, 2));
        // Past the end: at the end, never out of the text.
        let c = Cursor::at("ab", Span { offset: 9, ..at });
        assert_eq!((c.pos(), c.peek()), (2, None));
    }
}
