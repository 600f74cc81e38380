//! The C dialect's lexer: C tokens with exact spans, up to the condition.
//!
//! Names joined by `::` are one token (`cuda::atomic_ref`, `cuda::std::memory_order_acquire`),
//! so that the parser sees a qualified name as one word. Integer suffixes (`1u`, `0UL`) are
//! accepted and ignored. Comments are `(* ... *)` as in every litmus dialect, and `//` and
//! `/* ... */` as in C. Inside a thread body, `(*` followed by a letter, `_`, `(`, `&` or `*`
//! is C (`(*x)`), not a comment.
//!
//! Lexing stops at the condition: a word `exists`, `forall` or `locations`, or a `~`, outside
//! every bracket. The parser hands the rest to the PTX lexer and condition parser, so that
//! conditions read the same in both dialects.

use crate::cursor::{is_word_char, Cursor};
use scopecheck_ir::{Diagnostic, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CTok {
    Ident(String),
    Int(i64),
    Str(String),
    /// One of the punctuators, as written (`->`, `&&`, `+=`, ...).
    Punct(&'static str),
    /// The condition starts here (or the input ends): the rest belongs to the condition
    /// parser.
    End,
}

impl CTok {
    pub(crate) fn describe(&self) -> String {
        match self {
            CTok::Ident(w) => format!("`{w}`"),
            CTok::Int(i) => format!("`{i}`"),
            CTok::Str(_) => "a string".to_string(),
            CTok::Punct(p) => format!("`{p}`"),
            CTok::End => "the condition or the end of the input".to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CToken {
    pub tok: CTok,
    pub span: Span,
}

/// Punctuators, longest first so that the first match is the longest.
const PUNCTS: &[&str] = &[
    "<<=", ">>=", "->", "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "++", "--", "+=", "-=",
    "*=", "/=", "%=", "&=", "|=", "^=", "/\\", "\\/", ",", ";", ":", "@", "{", "}", "[", "]", "(",
    ")", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "=", "<", ">", ".", "?",
];

/// The words that start the condition.
const CONDITION_WORDS: &[&str] = &["exists", "forall", "locations"];

pub(crate) struct CLexer<'a> {
    cur: Cursor<'a>,
}

impl<'a> std::ops::Deref for CLexer<'a> {
    type Target = Cursor<'a>;
    fn deref(&self) -> &Cursor<'a> {
        &self.cur
    }
}

impl std::ops::DerefMut for CLexer<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.cur
    }
}

impl<'a> CLexer<'a> {
    pub(crate) fn new(src: &'a str, at: Span) -> Self {
        CLexer {
            cur: Cursor::at(src, at),
        }
    }

    /// Skips whitespace and comments. `in_body`: inside a thread body, where `(*x)` is C.
    fn skip_trivia(&mut self, in_body: bool) -> Result<(), Diagnostic> {
        loop {
            match (self.peek(), self.peek_n(1)) {
                (Some(c), _) if c.is_whitespace() || c == '\u{feff}' => {
                    self.bump();
                }
                (Some('('), Some('*')) => {
                    let after = self.peek_n(2);
                    let c_code = in_body
                        && after.is_some_and(|c| {
                            c.is_ascii_alphabetic() || matches!(c, '_' | '(' | '&' | '*')
                        });
                    if c_code {
                        return Ok(());
                    }
                    self.comment("(*", "*)")?;
                }
                (Some('/'), Some('*')) => self.comment("/*", "*/")?,
                (Some('/'), Some('/')) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn comment(&mut self, open: &str, close: &'static str) -> Result<(), Diagnostic> {
        let start = self.here();
        self.bump();
        self.bump();
        let mut closing = close.chars();
        let (c0, c1) = (closing.next(), closing.next());
        loop {
            match self.bump() {
                None => {
                    return Err(Diagnostic::error(format!(
                        "unterminated comment: this `{open}` has no matching `{close}`"
                    ))
                    .at(Span { len: 2, ..start })
                    .expecting(&[format!("`{close}`")]))
                }
                Some(c) if Some(c) == c0 && self.peek() == c1 => {
                    self.bump();
                    if open == "(*" {
                        let span = self.since(start);
                        self.comments.push(span);
                    }
                    return Ok(());
                }
                Some(_) => {}
            }
        }
    }

    /// Lexes up to the condition (or the end of the input); the last token is [`CTok::End`]
    /// and its span is where the condition starts.
    pub(crate) fn tokens(&mut self) -> Result<Vec<CToken>, Diagnostic> {
        let mut out: Vec<CToken> = Vec::new();
        let mut depth: u32 = 0;
        // Brace depth at which the current thread body opened, if inside one.
        let mut body_depth: Option<u32> = None;
        loop {
            self.skip_trivia(body_depth.is_some())?;
            let start = self.here();
            let Some(c) = self.peek() else {
                out.push(CToken {
                    tok: CTok::End,
                    span: start,
                });
                return Ok(out);
            };
            let token = if c == '"' {
                self.string()?
            } else if c.is_ascii_digit() {
                self.number()?
            } else if c.is_ascii_alphabetic() || c == '_' {
                self.word()
            } else if let Some(p) = PUNCTS.iter().find(|p| self.rest().starts_with(**p)) {
                for _ in 0..p.len() {
                    self.bump();
                }
                CToken {
                    tok: CTok::Punct(p),
                    span: self.since(start),
                }
            } else {
                return Err(Diagnostic::error(format!(
                    "unexpected character `{}`",
                    c.escape_debug()
                ))
                .at(self.here_token_span()));
            };
            if depth == 0 {
                let cond = match &token.tok {
                    CTok::Ident(w) => CONDITION_WORDS.contains(&w.as_str()),
                    CTok::Punct("~") => true,
                    _ => false,
                };
                if cond {
                    out.push(CToken {
                        tok: CTok::End,
                        span: token.span,
                    });
                    return Ok(out);
                }
            }
            match token.tok {
                CTok::Punct("{" | "(" | "[") => {
                    // A `{` right after a parameter list `)` opens a thread body.
                    if token.tok == CTok::Punct("{")
                        && depth == 0
                        && out.last().is_some_and(|t| t.tok == CTok::Punct(")"))
                    {
                        body_depth = Some(0);
                    }
                    depth = depth.saturating_add(1);
                }
                CTok::Punct("}" | ")" | "]") => {
                    depth = depth.saturating_sub(1);
                    if token.tok == CTok::Punct("}") && body_depth == Some(depth) {
                        body_depth = None;
                    }
                }
                _ => {}
            }
            out.push(token);
        }
    }

    fn string(&mut self) -> Result<CToken, Diagnostic> {
        let (inner, span) = self.cur.string()?;
        Ok(CToken {
            tok: CTok::Str(inner),
            span,
        })
    }

    fn number(&mut self) -> Result<CToken, Diagnostic> {
        let start = self.here();
        let hex = self.peek() == Some('0') && matches!(self.peek_n(1), Some('x' | 'X'));
        if hex {
            self.bump();
            self.bump();
        }
        let digits_start = self.pos();
        while self.peek().is_some_and(is_word_char) {
            self.bump();
        }
        let span = self.since(start);
        let word = self.src().get(digits_start..self.pos()).unwrap_or("");
        let digits = word.trim_end_matches(['u', 'U', 'l', 'L']);
        let radix = if hex { 16 } else { 10 };
        let valid = !digits.is_empty() && digits.chars().all(|d| d.is_digit(radix));
        if !valid {
            return Err(
                Diagnostic::error(format!("invalid number `{}`", self.text(span)))
                    .at(span)
                    .expecting(&["a decimal or 0x-prefixed hexadecimal integer"]),
            );
        }
        match i64::from_str_radix(digits, radix) {
            Ok(v) => Ok(CToken {
                tok: CTok::Int(v),
                span,
            }),
            Err(_) => Err(Diagnostic::error(format!(
                "integer `{}` does not fit in 64 bits",
                self.text(span)
            ))
            .at(span)),
        }
    }

    /// A name, with any `::`-joined parts.
    fn word(&mut self) -> CToken {
        let start = self.here();
        loop {
            while self.peek().is_some_and(is_word_char) {
                self.bump();
            }
            let joined = self.peek() == Some(':')
                && self.peek_n(1) == Some(':')
                && self
                    .peek_n(2)
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            if !joined {
                break;
            }
            self.bump();
            self.bump();
        }
        let span = self.since(start);
        CToken {
            tok: CTok::Ident(self.text(span).to_string()),
            span,
        }
    }
}
