//! `#if` expressions: C's integer constant expressions over `intmax_t`/`uintmax_t`, with
//! short-circuit evaluation (`ev` false: parsed, not evaluated, so `0 && 1/0` is fine).

use super::{ExprResult, Kind, Loc, Tok, MAX_IF_NESTING};

/// An integer of `#if`: `intmax_t` or `uintmax_t`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Val {
    pub(super) v: u64,
    unsigned: bool,
}

impl Val {
    fn int(b: bool) -> Val {
        Val {
            v: b as u64,
            unsigned: false,
        }
    }
}

pub(super) struct Expr<'t> {
    pub(super) toks: &'t [Tok],
    pub(super) pos: usize,
    /// Where the expression ends, for "ends too early".
    pub(super) end: Loc,
    /// How many unary operators and parentheses are open.
    pub(super) depth: usize,
}

impl Expr<'_> {
    pub(super) fn parse(&mut self) -> ExprResult<Val> {
        let v = self.comma(true)?;
        if let Some(t) = self.toks.get(self.pos) {
            return Err((
                t.at,
                format!(
                    "unexpected `{}` in #if expression (missing operator?)",
                    t.text
                ),
            ));
        }
        Ok(v)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> ExprResult<()> {
        if self.eat(p) {
            return Ok(());
        }
        Err(match self.peek() {
            Some(t) => (
                t.at,
                format!("expected `{p}` in #if expression, found `{}`", t.text),
            ),
            None => (
                self.end,
                format!("expected `{p}` at the end of the #if expression"),
            ),
        })
    }

    fn comma(&mut self, ev: bool) -> ExprResult<Val> {
        let mut v = self.conditional(ev)?;
        while self.eat(",") {
            v = self.conditional(ev)?;
        }
        Ok(v)
    }

    /// `c ? a : b`. A chain `c1 ? a1 : c2 ? a2 : ... : z` nests to the right as deep as it
    /// is long, so its conditions are read by a loop and the arms folded from the last; a
    /// conditional nested in a middle arm is a level of [`MAX_IF_NESTING`].
    fn conditional(&mut self, ev: bool) -> ExprResult<Val> {
        let mut arms: Vec<(bool, Val)> = Vec::new();
        let mut ev = ev;
        loop {
            let c = self.binary(1, ev)?;
            let Some(q) = self.peek().filter(|t| t.is_punct("?")).map(|t| t.at) else {
                // `c` is the last arm; each `ci ? ai :` before it picks `ai` or what follows.
                return Ok(arms.into_iter().rev().fold(c, |b, (yes, a)| Val {
                    v: if yes { a.v } else { b.v },
                    unsigned: a.unsigned || b.unsigned,
                }));
            };
            self.pos += 1;
            let yes = c.v != 0;
            self.depth += 1;
            if self.depth > MAX_IF_NESTING {
                return Err((q, "#if expression nested too deeply".to_string()));
            }
            let a = self.comma(ev && yes);
            self.depth -= 1;
            let a = a?;
            self.expect(":")?;
            arms.push((yes, a));
            ev = ev && !yes;
        }
    }

    fn binary(&mut self, min: u8, ev: bool) -> ExprResult<Val> {
        let mut lhs = self.unary(ev)?;
        loop {
            let Some(t) = self.peek() else {
                return Ok(lhs);
            };
            let Some(prec) = (t.kind == Kind::Punct)
                .then(|| scopecheck_litmus::vocab::binary_precedence(&t.text))
                .flatten()
            else {
                return Ok(lhs);
            };
            if prec < min {
                return Ok(lhs);
            }
            let op = t.clone();
            self.pos += 1;
            lhs = match &*op.text {
                "&&" => {
                    let rhs = self.binary(prec + 1, ev && lhs.v != 0)?;
                    Val::int(lhs.v != 0 && rhs.v != 0)
                }
                "||" => {
                    let rhs = self.binary(prec + 1, ev && lhs.v == 0)?;
                    Val::int(lhs.v != 0 || rhs.v != 0)
                }
                _ => {
                    let rhs = self.binary(prec + 1, ev)?;
                    apply(&op, lhs, rhs, ev)?
                }
            };
        }
    }

    fn unary(&mut self, ev: bool) -> ExprResult<Val> {
        let Some(t) = self.peek().cloned() else {
            return Err((self.end, "the #if expression ends too early".to_string()));
        };
        self.pos += 1;
        let nests = t.kind == Kind::Punct;
        if nests {
            self.depth += 1;
            if self.depth > MAX_IF_NESTING {
                return Err((t.at, "#if expression nested too deeply".to_string()));
            }
        }
        let v = self.operand(t, ev);
        if nests {
            self.depth -= 1;
        }
        v
    }

    fn operand(&mut self, t: Tok, ev: bool) -> ExprResult<Val> {
        match t.kind {
            Kind::Punct => match &*t.text {
                "!" => Ok(Val::int(self.unary(ev)?.v == 0)),
                "~" => {
                    let v = self.unary(ev)?;
                    Ok(Val { v: !v.v, ..v })
                }
                "-" => {
                    let v = self.unary(ev)?;
                    Ok(Val {
                        v: v.v.wrapping_neg(),
                        ..v
                    })
                }
                "+" => self.unary(ev),
                "(" => {
                    let v = self.comma(ev)?;
                    self.expect(")")?;
                    Ok(v)
                }
                _ => Err((t.at, format!("unexpected `{}` in #if expression", t.text))),
            },
            Kind::Number => parse_int(&t.text).map_err(|m| (t.at, m)),
            Kind::Char => parse_char(&t.text).map_err(|m| (t.at, m)),
            Kind::Ident => {
                if self.peek().is_some_and(|n| n.is_punct("(")) {
                    let message = if t.text.starts_with("__has_") {
                        format!("`{}` is not supported (headers are not read)", t.text)
                    } else {
                        format!("`{}` is not a function-like macro", t.text)
                    };
                    return Err((t.at, message));
                }
                Ok(Val::int(&*t.text == "true"))
            }
            Kind::Str => Err((t.at, "a string literal cannot be in #if".to_string())),
            _ => Err((t.at, format!("unexpected `{}` in #if expression", t.text))),
        }
    }
}

fn apply(op: &Tok, l: Val, r: Val, ev: bool) -> ExprResult<Val> {
    let unsigned = l.unsigned || r.unsigned;
    let cmp = |sl: bool, ul: bool| Val::int(if unsigned { ul } else { sl });
    let (sl, sr) = (l.v as i64, r.v as i64);
    let v = |v: u64| Val { v, unsigned };
    Ok(match &*op.text {
        "*" => v(l.v.wrapping_mul(r.v)),
        "/" | "%" => {
            if r.v == 0 {
                if ev {
                    return Err((op.at, "division by zero in #if".to_string()));
                }
                return Ok(v(0));
            }
            let div = &*op.text == "/";
            v(match (unsigned, div) {
                (true, true) => l.v / r.v,
                (true, false) => l.v % r.v,
                (false, true) => sl.wrapping_div(sr) as u64,
                (false, false) => sl.wrapping_rem(sr) as u64,
            })
        }
        "+" => v(l.v.wrapping_add(r.v)),
        "-" => v(l.v.wrapping_sub(r.v)),
        "<<" | ">>" => {
            let n: i128 = if r.unsigned { r.v as i128 } else { sr as i128 };
            let left = (&*op.text == "<<") == (n >= 0);
            let n = n.unsigned_abs();
            let bits = if left {
                if n >= 64 {
                    0
                } else {
                    l.v << n
                }
            } else if l.unsigned {
                if n >= 64 {
                    0
                } else {
                    l.v >> n
                }
            } else {
                (sl >> n.min(63)) as u64
            };
            Val {
                v: bits,
                unsigned: l.unsigned,
            }
        }
        "<" => cmp(sl < sr, l.v < r.v),
        "<=" => cmp(sl <= sr, l.v <= r.v),
        ">" => cmp(sl > sr, l.v > r.v),
        ">=" => cmp(sl >= sr, l.v >= r.v),
        "==" => Val::int(l.v == r.v),
        "!=" => Val::int(l.v != r.v),
        "&" => v(l.v & r.v),
        "^" => v(l.v ^ r.v),
        "|" => v(l.v | r.v),
        other => return Err((op.at, format!("unexpected `{other}` in #if expression"))),
    })
}

/// An integer literal of `#if`.
fn parse_int(text: &str) -> Result<Val, String> {
    let t: String = text.chars().filter(|&c| c != '\'').collect();
    let lower = t.to_ascii_lowercase();
    let (radix, start) = if lower.starts_with("0x") {
        (16, 2)
    } else if lower.starts_with("0b") {
        (2, 2)
    } else if lower.starts_with('0') && lower.len() > 1 {
        (8, 1)
    } else {
        (10, 0)
    };
    let float = lower.contains('.')
        || (radix == 16 && lower.contains('p'))
        || (radix != 16 && lower[start..].contains('e'));
    if float {
        return Err(format!("floating-point constant `{text}` in #if"));
    }
    let is_digit = |c: char| {
        if radix == 16 {
            c.is_ascii_hexdigit()
        } else {
            c.is_ascii_digit()
        }
    };
    let digits_end = lower[start..]
        .find(|c: char| !is_digit(c))
        .map_or(lower.len(), |k| k + start);
    let (digits, suffix) = (&lower[start..digits_end], &lower[digits_end..]);
    if !matches!(
        suffix,
        "" | "u" | "l" | "ul" | "lu" | "ll" | "ull" | "llu" | "z" | "uz" | "zu"
    ) {
        return Err(format!(
            "invalid suffix `{suffix}` on integer constant `{text}`"
        ));
    }
    if digits.is_empty() {
        return Err(format!("invalid integer constant `{text}`"));
    }
    if let Some(bad) = digits.chars().find(|c| c.to_digit(radix).is_none()) {
        return Err(format!(
            "invalid digit `{bad}` in integer constant `{text}`"
        ));
    }
    let v = u64::from_str_radix(digits, radix)
        .map_err(|_| format!("integer constant `{text}` is too large"))?;
    Ok(Val {
        v,
        unsigned: suffix.contains('u') || v > i64::MAX as u64,
    })
}

/// A character constant of `#if`.
fn parse_char(text: &str) -> Result<Val, String> {
    let quote = text.find('\'').unwrap_or(0);
    let wide = quote > 0;
    let body = text[quote + 1..]
        .strip_suffix('\'')
        .ok_or_else(|| format!("missing terminating `'` in character constant {text}"))?;
    let b = body.as_bytes();
    let mut values: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            if wide {
                let c = body[i..].chars().next().unwrap_or_default();
                values.push(c as u32);
                i += c.len_utf8();
            } else {
                values.push(b[i] as u32);
                i += 1;
            }
            continue;
        }
        i += 1;
        let Some(&e) = b.get(i) else {
            return Err(format!("invalid escape in character constant {text}"));
        };
        i += 1;
        let v = match e {
            b'n' => 10,
            b't' => 9,
            b'r' => 13,
            b'a' => 7,
            b'b' => 8,
            b'f' => 12,
            b'v' => 11,
            b'e' => 27,
            b'\\' | b'\'' | b'"' | b'?' => e as u32,
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                let mut k = 0;
                while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                v
            }
            b'x' => {
                let start = i;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
                u32::from_str_radix(&body[start..i], 16)
                    .map_err(|_| format!("invalid hexadecimal escape in {text}"))?
            }
            _ => {
                return Err(format!(
                    "unsupported escape `\\{}` in character constant {text}",
                    e as char
                ));
            }
        };
        values.push(v);
    }
    match (values.as_slice(), wide) {
        ([], _) => Err(format!("empty character constant {text}")),
        ([v], true) => Ok(Val {
            v: *v as u64,
            unsigned: false,
        }),
        (_, true) => Err(format!("multi-character wide character constant {text}")),
        (vs, false) => {
            let v = if vs.len() == 1 {
                vs[0] as u8 as i8 as i64
            } else {
                vs.iter()
                    .fold(0i32, |acc, &c| acc.wrapping_shl(8) | (c & 0xff) as i32)
                    as i64
            };
            Ok(Val {
                v: v as u64,
                unsigned: false,
            })
        }
    }
}
