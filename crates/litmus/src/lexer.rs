//! The lexer: source text to tokens with exact spans.
//!
//! The header line is read raw (the test name runs to the end of the line and may contain any
//! character), so the lexer offers [`Lexer::header_word`] and [`Lexer::rest_of_line`] for it and
//! then [`Lexer::tokens`] for the rest. Comments `(* ... *)` and whitespace are skipped between
//! tokens; newlines carry no meaning after the header (rows end with `;`).
//!
//! Columns count characters, not bytes, so that an editor puts the cursor on the right spot
//! even after non-ASCII text in a comment or the description.

use crate::cursor::{is_word_char, Cursor};
use scopecheck_ir::{Diagnostic, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// Letters, digits and `_`, optionally starting with `%`, with any `.`-joined qualifiers
    /// attached: `ld.acquire.gpu` is one token, so that the parser can give each qualifier its
    /// exact column and can tell `ld .gpu` (an error) from `ld.gpu`.
    Word(String),
    Int(i64),
    /// A double-quoted string (the description), without its quotes.
    Str(String),
    Comma,
    Semi,
    Pipe,
    Colon,
    At,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    /// `=`
    Assign,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    Plus,
    Tilde,
    /// `/\`
    Conj,
    /// `\/`
    Disj,
    Eof,
}

impl Tok {
    /// How an error message names this token: "found `st`", "found the end of the input".
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Int(i) => format!("`{i}`"),
            Tok::Str(_) => "a string".to_string(),
            Tok::Eof => "the end of the input".to_string(),
            Tok::Comma => "`,`".to_string(),
            Tok::Semi => "`;`".to_string(),
            Tok::Pipe => "`|`".to_string(),
            Tok::Colon => "`:`".to_string(),
            Tok::At => "`@`".to_string(),
            Tok::LBrace => "`{`".to_string(),
            Tok::RBrace => "`}`".to_string(),
            Tok::LBracket => "`[`".to_string(),
            Tok::RBracket => "`]`".to_string(),
            Tok::LParen => "`(`".to_string(),
            Tok::RParen => "`)`".to_string(),
            Tok::Assign => "`=`".to_string(),
            Tok::EqEq => "`==`".to_string(),
            Tok::NotEq => "`!=`".to_string(),
            Tok::Plus => "`+`".to_string(),
            Tok::Tilde => "`~`".to_string(),
            Tok::Conj => "`/\\`".to_string(),
            Tok::Disj => "`\\/`".to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

pub(crate) struct Lexer<'a> {
    cur: Cursor<'a>,
}

impl<'a> std::ops::Deref for Lexer<'a> {
    type Target = Cursor<'a>;
    fn deref(&self) -> &Cursor<'a> {
        &self.cur
    }
}

impl std::ops::DerefMut for Lexer<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.cur
    }
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Lexer::resume(
            src,
            Span {
                offset: 0,
                len: 0,
                line: 1,
                column: 1,
            },
        )
    }

    /// A lexer that starts at `at` (its offset, line and column) in `src`: the C dialect hands
    /// the condition over to the PTX lexer this way.
    pub(crate) fn resume(src: &'a str, at: Span) -> Self {
        Lexer {
            cur: Cursor::at(src, at),
        }
    }

    pub(crate) fn source(&self) -> &'a str {
        self.src()
    }

    /// Skips whitespace and `(* ... *)` comments.
    pub(crate) fn skip_trivia(&mut self) -> Result<(), Diagnostic> {
        loop {
            match self.peek() {
                // A byte-order mark at the start of the file is invisible in editors.
                Some(c) if c.is_whitespace() || (c == '\u{feff}' && self.pos() == 0) => {
                    self.bump();
                }
                Some('(') if self.peek_n(1) == Some('*') => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    fn comment(&mut self) -> Result<(), Diagnostic> {
        let start = self.here();
        self.bump();
        self.bump();
        loop {
            match self.bump() {
                None => {
                    return Err(Diagnostic::error(
                        "unterminated comment: this `(*` has no matching `*)`",
                    )
                    .at(Span { len: 2, ..start })
                    .expecting(&["`*)`"]))
                }
                Some('*') if self.peek() == Some(')') => {
                    self.bump();
                    let span = self.since(start);
                    self.comments.push(span);
                    return Ok(());
                }
                Some(_) => {}
            }
        }
    }

    /// The first word of the test (its architecture), read raw.
    pub(crate) fn header_word(&mut self) -> (String, Span) {
        let start = self.here();
        while self.peek().is_some_and(is_word_char) {
            self.bump();
        }
        let span = self.since(start);
        (self.text(span).to_string(), span)
    }

    /// The rest of the current line up to any comment, trimmed, with its span (empty at the
    /// line's end).
    pub(crate) fn rest_of_line(&mut self) -> (String, Span) {
        while self.peek().is_some_and(|c| c != '\n' && c.is_whitespace()) {
            self.bump();
        }
        let start = self.here();
        let mut end = start;
        while let Some(c) = self.peek() {
            // A comment ends the name (and is then skipped like any other).
            if c == '\n' || (c == '(' && self.peek_n(1) == Some('*')) {
                break;
            }
            self.bump();
            if !c.is_whitespace() {
                end = self.here();
            }
        }
        let span = Span {
            len: end.offset - start.offset,
            ..start
        };
        (self.text(span).to_string(), span)
    }

    /// Lexes everything from the current position to the end.
    pub(crate) fn tokens(&mut self) -> Result<Vec<Token>, Diagnostic> {
        let mut out = Vec::new();
        loop {
            self.skip_trivia()?;
            let token = self.token()?;
            let done = token.tok == Tok::Eof;
            out.push(token);
            if done {
                return Ok(out);
            }
        }
    }

    fn token(&mut self) -> Result<Token, Diagnostic> {
        let start = self.here();
        let Some(c) = self.peek() else {
            return Ok(Token {
                tok: Tok::Eof,
                span: start,
            });
        };
        let single = match c {
            ',' => Some(Tok::Comma),
            ';' => Some(Tok::Semi),
            '|' => Some(Tok::Pipe),
            ':' => Some(Tok::Colon),
            '@' => Some(Tok::At),
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            '[' => Some(Tok::LBracket),
            ']' => Some(Tok::RBracket),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            '+' => Some(Tok::Plus),
            '~' => Some(Tok::Tilde),
            _ => None,
        };
        if let Some(tok) = single {
            self.bump();
            return Ok(Token {
                tok,
                span: self.since(start),
            });
        }
        // Two-character operators; a lone first character is an error naming the operator.
        let pair = match (c, self.peek_n(1)) {
            ('=', Some('=')) => Some(Tok::EqEq),
            ('!', Some('=')) => Some(Tok::NotEq),
            ('/', Some('\\')) => Some(Tok::Conj),
            ('\\', Some('/')) => Some(Tok::Disj),
            _ => None,
        };
        if let Some(tok) = pair {
            self.bump();
            self.bump();
            return Ok(Token {
                tok,
                span: self.since(start),
            });
        }
        match c {
            '=' => {
                self.bump();
                Ok(Token { tok: Tok::Assign, span: self.since(start) })
            }
            '!' | '/' | '\\' => {
                let op = match c {
                    '!' => "!=",
                    '/' => "/\\",
                    _ => "\\/",
                };
                Err(Diagnostic::error(format!("unexpected character `{c}`; expected `{op}`")).at(self.here_token_span())
                .expecting(&[format!("`{op}`")]))
            }
            '"' => self.string(),
            '-' if self.peek_n(1).is_some_and(|d| d.is_ascii_digit()) => self.number(),
            '0'..='9' => self.number(),
            '%' | '_' | 'a'..='z' | 'A'..='Z' => self.word(),
            '.' => Err(Diagnostic::error("unexpected `.`; a qualifier must follow its opcode directly, as in `ld.relaxed.gpu`").at(self.here_token_span())),
            _ => Err(Diagnostic::error(format!("unexpected character `{}`", c.escape_debug())).at(self.here_token_span())),
        }
    }

    fn string(&mut self) -> Result<Token, Diagnostic> {
        let (inner, span) = self.cur.string()?;
        Ok(Token {
            tok: Tok::Str(inner),
            span,
        })
    }

    fn number(&mut self) -> Result<Token, Diagnostic> {
        let start = self.here();
        let negative = self.peek() == Some('-');
        if negative {
            self.bump();
        }
        let hex = self.peek() == Some('0') && matches!(self.peek_n(1), Some('x' | 'X'));
        if hex {
            self.bump();
            self.bump();
        }
        let digits_start = self.pos();
        // Consume every word character so that `12ab` is one bad number, not `12` then `ab`.
        while self.peek().is_some_and(is_word_char) {
            self.bump();
        }
        let span = self.since(start);
        let digits = self.src().get(digits_start..self.pos()).unwrap_or("");
        let radix = if hex { 16 } else { 10 };
        let valid = !digits.is_empty() && digits.chars().all(|d| d.is_digit(radix));
        if !valid {
            return Err(
                Diagnostic::error(format!("invalid number `{}`", self.text(span)))
                    .at(span)
                    .expecting(&["a decimal or 0x-prefixed hexadecimal integer"]),
            );
        }
        let signed = if negative {
            format!("-{digits}")
        } else {
            digits.to_string()
        };
        match i64::from_str_radix(&signed, radix) {
            Ok(v) => Ok(Token {
                tok: Tok::Int(v),
                span,
            }),
            Err(_) => Err(Diagnostic::error(format!(
                "integer `{}` does not fit in 64 bits",
                self.text(span)
            ))
            .at(span)),
        }
    }

    fn word(&mut self) -> Result<Token, Diagnostic> {
        let start = self.here();
        if self.peek() == Some('%') {
            self.bump();
            if !self
                .peek()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            {
                return Err(
                    Diagnostic::error("expected a register name after `%`, as in `%r0`")
                        .at(Span { len: 1, ..start })
                        .expecting(&["a register"]),
                );
            }
        }
        while self.peek().is_some_and(is_word_char) {
            self.bump();
        }
        // Attach `.qualifier`s; a `.` not followed by a word character is left for `token` to
        // report.
        while self.peek() == Some('.') && self.peek_n(1).is_some_and(is_word_char) {
            self.bump();
            while self.peek().is_some_and(is_word_char) {
                self.bump();
            }
        }
        let span = self.since(start);
        Ok(Token {
            tok: Tok::Word(self.text(span).to_string()),
            span,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(s: &str) -> Vec<Tok> {
        Lexer::new(s)
            .tokens()
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn lexes_operators_words_and_numbers() {
        assert_eq!(
            lex("ld.acquire.gpu %r0, [x+r1] ; -5 0x1f == != /\\ \\/ ~ = (* c *) |"),
            vec![
                Tok::Word("ld.acquire.gpu".into()),
                Tok::Word("%r0".into()),
                Tok::Comma,
                Tok::LBracket,
                Tok::Word("x".into()),
                Tok::Plus,
                Tok::Word("r1".into()),
                Tok::RBracket,
                Tok::Semi,
                Tok::Int(-5),
                Tok::Int(31),
                Tok::EqEq,
                Tok::NotEq,
                Tok::Conj,
                Tok::Disj,
                Tok::Tilde,
                Tok::Assign,
                Tok::Pipe,
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn spans_count_lines_and_characters() {
        let toks = Lexer::new("é\n  x").tokens();
        // `é` is not a token character.
        assert!(toks.is_err());
        let toks = Lexer::new("\"é\"\n  x").tokens().unwrap();
        assert_eq!(
            toks[1].span,
            Span {
                offset: 7,
                len: 1,
                line: 2,
                column: 3
            }
        );
    }

    #[test]
    fn bad_numbers_and_unterminated_things_are_errors() {
        let e = Lexer::new("  12ab").tokens().unwrap_err();
        assert_eq!(
            (e.line(), e.column(), e.span.expect("a span").len),
            (1, 3, 4)
        );
        let e = Lexer::new("x (* open").tokens().unwrap_err();
        assert_eq!(
            (e.column(), e.message.contains("unterminated comment")),
            (3, true)
        );
        let e = Lexer::new("\"abc").tokens().unwrap_err();
        assert!(e.message.contains("unterminated string"));
        let e = Lexer::new("99999999999999999999").tokens().unwrap_err();
        assert!(e.message.contains("64 bits"));
        let e = Lexer::new("a / b").tokens().unwrap_err();
        assert_eq!(e.column(), 3);
    }

    #[test]
    fn rest_of_line_is_trimmed() {
        let mut lx = Lexer::new("PTX  MP+rel  \n{");
        let (w, _) = lx.header_word();
        assert_eq!(w, "PTX");
        let (name, span) = lx.rest_of_line();
        assert_eq!(name, "MP+rel");
        assert_eq!((span.column, span.len), (6, 6));
        let mut lx = Lexer::new("PTX SB (* store buffering\n *) {");
        lx.header_word();
        assert_eq!(lx.rest_of_line().0, "SB");
        assert_eq!(lx.tokens().unwrap()[0].tok, Tok::LBrace);
    }
}
