//! The PTX lexer: module text to tokens with exact spans.
//!
//! A word keeps its `.`-joined qualifiers and `::` parts (`ld.shared::cluster.u32`, `%tid.x`,
//! `.shared::cta`), so the parser sees an opcode, a special register or a state space as one
//! token. Numbers are read whole (`0x1F`, `017`, `0b101`, `4294967295U`, `0f3F800000`, `1.5`),
//! without a sign: `-` is a token of its own, since PTX writes `[%rd4+-8]` and `-1` alike.
//!
//! The lexer stops at the first bad character or number; the parser only meets that error
//! when it reaches it, so an earlier syntax error is still the one reported.
//!
//! Columns count characters, not bytes (the shared [`Cursor`] keeps them), so that an editor
//! puts the cursor on the right spot after non-ASCII text in a comment.

use scopecheck_ir::cursor::Cursor;
use scopecheck_ir::{Diagnostic, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An identifier, register, opcode or directive, qualifiers included: `ld.param.u32`,
    /// `%r1`, `%tid.x`, `$L__BB0_2`, `.reg`, `_`.
    Word(String),
    /// An integer literal's 64 bits (a `u64` above `i64::MAX` as the `i64` with those bits).
    Int(i64),
    /// A floating literal's bits: `double` for `0d...` and decimal literals (PTX reads those
    /// as 64-bit doubles), not for `0f...` (32 bits).
    Float {
        bits: u64,
        double: bool,
    },
    /// A `"..."` string, without its quotes, `\"` and `\\` unescaped.
    Str(String),
    Comma,
    Semi,
    Colon,
    At,
    Bang,
    Pipe,
    Plus,
    Minus,
    Assign,
    Less,
    Greater,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    /// The end of the input, or the place of the lexing error that stopped the lexer.
    Eof,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// The tokens of `src`, ending with [`Tok::Eof`]; when a lexing error stopped the lexer, the
/// `Eof` sits at the error's position and the error comes with it.
pub(crate) fn tokens(src: &str) -> (Vec<Token>, Option<Diagnostic>) {
    let mut lexer = Lexer {
        cur: Cursor::new(src),
    };
    let mut out = Vec::new();
    loop {
        match lexer.token() {
            Ok(Some(token)) => out.push(token),
            Ok(None) => {
                out.push(Token {
                    tok: Tok::Eof,
                    span: lexer.here(),
                });
                return (out, None);
            }
            Err(e) => {
                // Every lexing error has its span; the lexer's place would do as well.
                out.push(Token {
                    tok: Tok::Eof,
                    span: e.span.unwrap_or_else(|| lexer.here()),
                });
                return (out, Some(e));
            }
        }
    }
}

/// Characters that may follow the first of an identifier (PTX: `[a-zA-Z0-9_$]`).
fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// The lexer: PTX's token grammar over the shared character cursor.
struct Lexer<'a> {
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

impl Lexer<'_> {
    /// Skips whitespace, `// ...` and `/* ... */`.
    fn skip_trivia(&mut self) -> Result<(), Diagnostic> {
        loop {
            match (self.peek(), self.peek_n(1)) {
                (Some(c), _) if c.is_whitespace() || (c == '\u{feff}' && self.pos() == 0) => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let start = self.here();
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            None => {
                                return Err(Diagnostic::error(
                                    "unterminated comment: this `/*` has no closing `*/`",
                                )
                                .at(Span { len: 2, ..start }))
                            }
                            Some('*') if self.peek() == Some('/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn token(&mut self) -> Result<Option<Token>, Diagnostic> {
        self.skip_trivia()?;
        let start = self.here();
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        let tok = match c {
            c if c.is_ascii_digit() => self.number(start)?,
            c if c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%' | '.') => {
                self.word(start)?
            }
            '"' => self.string(start)?,
            _ => {
                self.bump();
                match c {
                    ',' => Tok::Comma,
                    ';' => Tok::Semi,
                    ':' => Tok::Colon,
                    '@' => Tok::At,
                    '!' => Tok::Bang,
                    '|' => Tok::Pipe,
                    '+' => Tok::Plus,
                    '-' => Tok::Minus,
                    '=' => Tok::Assign,
                    '<' => Tok::Less,
                    '>' => Tok::Greater,
                    '{' => Tok::LBrace,
                    '}' => Tok::RBrace,
                    '[' => Tok::LBracket,
                    ']' => Tok::RBracket,
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    _ => {
                        return Err(Diagnostic::error(format!(
                            "unexpected character `{}`",
                            c.escape_debug()
                        ))
                        .at(self.since(start)))
                    }
                }
            }
        };
        Ok(Some(Token {
            tok,
            span: self.since(start),
        }))
    }

    /// A word: a first character (`%`, `.`, `$`, `_` or a letter), identifier characters,
    /// and `.`/`::` followed by more of them.
    fn word(&mut self, start: Span) -> Result<Tok, Diagnostic> {
        let first = self.bump();
        if matches!(first, Some('%' | '.')) && !self.peek().is_some_and(is_ident_char) {
            return Err(Diagnostic::error(format!(
                "expected a name after `{}`",
                first.map(|c| c.to_string()).unwrap_or_default()
            ))
            .at(self.since(start)));
        }
        loop {
            match (self.peek(), self.peek_n(1), self.peek_n(2)) {
                (Some(c), _, _) if is_ident_char(c) => {
                    self.bump();
                }
                (Some('.'), Some(c), _) if is_ident_char(c) => {
                    self.bump();
                }
                (Some(':'), Some(':'), Some(c)) if is_ident_char(c) => {
                    self.bump();
                    self.bump();
                }
                _ => break,
            }
        }
        Ok(Tok::Word(self.text(self.since(start)).to_string()))
    }

    fn string(&mut self, start: Span) -> Result<Tok, Diagnostic> {
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('"') => return Ok(Tok::Str(value)),
                Some('\\') if matches!(self.peek(), Some('"' | '\\')) => {
                    value.extend(self.bump());
                }
                Some(c) if c != '\n' => value.push(c),
                _ => {
                    return Err(Diagnostic::error(
                        "unterminated string: this `\"` has no closing `\"` on its line",
                    )
                    .at(Span { len: 1, ..start }))
                }
            }
        }
    }

    /// A number, read whole (`0x1FU`, `1.5e-3`) and then classified, so that `12ab` is one
    /// bad number rather than `12` followed by a name.
    fn number(&mut self, start: Span) -> Result<Tok, Diagnostic> {
        while self.peek().is_some_and(is_ident_char) {
            self.bump();
        }
        let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        // A decimal floating literal: `1.5`, `1.5e-3`, `1e+9`.
        if digits_only(self.text(self.since(start)))
            && self.peek() == Some('.')
            && self.peek_n(1).is_some_and(|c| c.is_ascii_digit())
        {
            self.bump();
            while self.peek().is_some_and(is_ident_char) {
                self.bump();
            }
        }
        let so_far = self.text(self.since(start));
        let mantissa = so_far.strip_suffix(['e', 'E']).unwrap_or("");
        if !mantissa.is_empty()
            && mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && matches!(self.peek(), Some('+' | '-'))
            && self.peek_n(1).is_some_and(|c| c.is_ascii_digit())
        {
            self.bump();
            while self.peek().is_some_and(is_ident_char) {
                self.bump();
            }
        }
        let span = self.since(start);
        let text = self.text(span);
        classify_number(text)
            .map_err(|why| Diagnostic::error(format!("bad number `{text}`: {why}")).at(span))
    }
}

/// The value of a number as PTX writes it.
fn classify_number(text: &str) -> Result<Tok, String> {
    let lower = text.to_ascii_lowercase();
    let float_bits = |hex: &str, width: usize| -> Result<u64, String> {
        if hex.len() == width && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            u64::from_str_radix(hex, 16).map_err(|e| e.to_string())
        } else {
            Err(format!(
                "a floating literal `0{}` needs exactly {width} hexadecimal digits",
                &lower[1..2]
            ))
        }
    };
    if let Some(hex) = lower.strip_prefix("0f") {
        return Ok(Tok::Float {
            bits: float_bits(hex, 8)?,
            double: false,
        });
    }
    if let Some(hex) = lower.strip_prefix("0d") {
        return Ok(Tok::Float {
            bits: float_bits(hex, 16)?,
            double: true,
        });
    }
    // The `U` suffix only says the literal is unsigned; the bits are the same.
    let body = lower.strip_suffix('u').unwrap_or(&lower);
    let (digits, radix, base) = if let Some(d) = body.strip_prefix("0x") {
        (d, 16, "hexadecimal")
    } else if let Some(d) = body.strip_prefix("0b") {
        (d, 2, "binary")
    } else if body.len() > 1 && body.starts_with('0') && !body.contains(['.', 'e']) {
        (&body[1..], 8, "octal")
    } else {
        (body, 10, "decimal")
    };
    if radix == 10 && !body.bytes().all(|b| b.is_ascii_digit()) {
        // Not an integer: a decimal floating literal, or nothing PTX knows.
        let is_float_text = body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
            && body.len() == lower.len();
        return match body.parse::<f64>() {
            Ok(v) if is_float_text => Ok(Tok::Float {
                bits: v.to_bits(),
                double: true,
            }),
            _ => Err("not a PTX integer or floating literal".to_string()),
        };
    }
    if digits.is_empty() {
        return Err(format!("no {base} digits"));
    }
    if let Some(bad) = digits.chars().find(|c| !c.is_digit(radix)) {
        return Err(format!("`{bad}` is not a {base} digit"));
    }
    u64::from_str_radix(digits, radix)
        .map(|v| Tok::Int(v as i64))
        .map_err(|_| "does not fit in 64 bits".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let (t, e) = tokens(src);
        assert_eq!(e, None, "{src}");
        t.into_iter().map(|t| t.tok).collect()
    }

    fn word(w: &str) -> Tok {
        Tok::Word(w.to_string())
    }

    #[test]
    fn words_keep_qualifiers_and_double_colons() {
        assert_eq!(
            toks("ld.shared::cluster.u32 %r1, [%rd4+-8]; $L__BB0_2: .shared::cta %tid.x"),
            vec![
                word("ld.shared::cluster.u32"),
                word("%r1"),
                Tok::Comma,
                Tok::LBracket,
                word("%rd4"),
                Tok::Plus,
                Tok::Minus,
                Tok::Int(8),
                Tok::RBracket,
                Tok::Semi,
                word("$L__BB0_2"),
                Tok::Colon,
                word(".shared::cta"),
                word("%tid.x"),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn numbers_in_every_base() {
        let ints: Vec<Tok> = [0i64, 7, 31, 31, 15, 5, 5, 4294967295, -1, 17]
            .into_iter()
            .map(Tok::Int)
            .chain([Tok::Eof])
            .collect();
        assert_eq!(
            toks("0 7 0x1F 0X1f 017 0b101 0B101U 4294967295U 0xFFFFFFFFFFFFFFFF 17u"),
            ints
        );
        assert_eq!(
            toks("0f3F800000 0d3FF0000000000000 1.5 2e-3"),
            vec![
                Tok::Float {
                    bits: 0x3F80_0000,
                    double: false
                },
                Tok::Float {
                    bits: 0x3FF0_0000_0000_0000,
                    double: true
                },
                Tok::Float {
                    bits: 1.5f64.to_bits(),
                    double: true
                },
                Tok::Float {
                    bits: 2e-3f64.to_bits(),
                    double: true
                },
                Tok::Eof
            ]
        );
    }

    #[test]
    fn bad_numbers_are_named() {
        for (src, why) in [
            (
                "12ab",
                "bad number `12ab`: not a PTX integer or floating literal",
            ),
            ("09", "bad number `09`: `9` is not a octal digit"),
            ("0x", "bad number `0x`: no hexadecimal digits"),
            ("0b102", "bad number `0b102`: `2` is not a binary digit"),
            (
                "0f3F80",
                "bad number `0f3F80`: a floating literal `0f` needs exactly 8 hexadecimal digits",
            ),
            (
                "18446744073709551616",
                "bad number `18446744073709551616`: does not fit in 64 bits",
            ),
        ] {
            let (_, e) = tokens(&format!("  {src}"));
            let e = e.unwrap();
            assert_eq!(e.message, why);
            assert_eq!(
                (e.line(), e.column(), e.span.expect("a span").len),
                (1, 3, src.len())
            );
        }
    }

    #[test]
    fn comments_and_strings() {
        assert_eq!(
            toks("// x\n/* y\n z */ .file 1 \"a\\\"b.cu\""),
            vec![
                word(".file"),
                Tok::Int(1),
                Tok::Str("a\"b.cu".to_string()),
                Tok::Eof
            ]
        );
        let (t, e) = tokens("a /* never closed");
        assert_eq!(
            e.unwrap().message,
            "unterminated comment: this `/*` has no closing `*/`"
        );
        assert_eq!(t.last().unwrap().span.column, 3);
        let (_, e) = tokens("x\n/*é*/ #");
        let e = e.unwrap();
        assert_eq!(
            (e.line(), e.column(), e.message.as_str()),
            (2, 7, "unexpected character `#`")
        );
    }
}
