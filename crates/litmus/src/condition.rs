//! The optional `locations [...]` line and the final condition.
//!
//! Grammar (lowest precedence first):
//! ```text
//! condition := ("exists" | "~" "exists" | "forall") or
//! or        := and ("\/" and)*
//! and       := unary ("/\" unary)*
//! unary     := "~" unary | "(" or ")" | "true" | "false" | term ("==" | "=" | "!=") term
//! term      := integer | location | "[" location "]" | thread ":" register
//! thread    := "P" digits | digits
//! ```
//! Registers must already be used by their thread (a condition on a register the thread never
//! touches is certainly a typo); a location the code never touches is created with value 0.

use crate::lexer::Tok;
use crate::ptx::{register_name, Parser};
use scopecheck_ir::{
    CmpOp, Condition, Diagnostic, LocId, Observable, Prop, Quantifier, Term, ThreadId,
};

/// How deeply `~` and parentheses may nest; far beyond any real test, and low enough that the
/// recursion cannot exhaust the stack.
const MAX_DEPTH: usize = 256;

const QUANTIFIERS: [&str; 3] = ["`exists`", "`~exists`", "`forall`"];

impl Parser<'_> {
    /// `[locations [...]] quantifier proposition`.
    pub(crate) fn condition_section(&mut self) -> Result<(Vec<Observable>, Condition), Diagnostic> {
        let mut extra = Vec::new();
        if matches!(&self.peek().tok, Tok::Word(w) if w == "locations") {
            self.bump();
            self.expect(&Tok::LBracket, "`[` after `locations`")?;
            loop {
                if self.eat(&Tok::RBracket).is_some() {
                    break;
                }
                let o = self.observable()?;
                if !extra.contains(&o) {
                    extra.push(o);
                }
                match self.peek().tok {
                    Tok::Semi => {
                        self.bump();
                    }
                    Tok::RBracket => {}
                    _ => {
                        return Err(self.error_expected(
                            "`;` between locations or `]` to close the list",
                            &["`;`", "`]`"],
                        ))
                    }
                }
            }
        }
        let start = self.peek().span;
        let quantifier = match &self.peek().tok {
            Tok::Word(w) if w == "exists" => Quantifier::Exists,
            Tok::Word(w) if w == "forall" => Quantifier::Forall,
            Tok::Tilde if matches!(&self.peek_at(1).tok, Tok::Word(w) if w == "exists") => {
                self.bump();
                Quantifier::NotExists
            }
            Tok::Tilde => {
                self.bump();
                return Err(self.error_expected("`exists` after `~`", &["`exists`"]));
            }
            _ => {
                return Err(self.error_expected(
                    "a condition (`exists`, `~exists` or `forall`)",
                    &QUANTIFIERS,
                ))
            }
        };
        self.bump();
        let prop = self.or()?;
        Ok((
            extra,
            Condition {
                quantifier,
                prop,
                span: Some(self.span_from(start)),
            },
        ))
    }

    /// `a \/ b \/ ...`, read by a loop; a long chain becomes a balanced tree
    /// ([`Prop::chain`]), so that walking it later takes no deep recursion.
    fn or(&mut self) -> Result<Prop, Diagnostic> {
        let mut parts = vec![self.and()?];
        while self.eat(&Tok::Disj).is_some() {
            parts.push(self.and()?);
        }
        Ok(Prop::chain(parts, false).unwrap_or(Prop::False))
    }

    fn and(&mut self) -> Result<Prop, Diagnostic> {
        let mut parts = vec![self.unary()?];
        while self.eat(&Tok::Conj).is_some() {
            parts.push(self.unary()?);
        }
        Ok(Prop::chain(parts, true).unwrap_or(Prop::True))
    }

    fn unary(&mut self) -> Result<Prop, Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(Diagnostic::error(format!(
                "condition nested too deeply (more than {MAX_DEPTH} levels)"
            ))
            .at(self.peek().span));
        }
        self.depth += 1;
        let result = self.unary_inner();
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> Result<Prop, Diagnostic> {
        match &self.peek().tok {
            Tok::Tilde => {
                self.bump();
                Ok(Prop::Not(Box::new(self.unary()?)))
            }
            Tok::LParen => {
                self.bump();
                let p = self.or()?;
                self.expect(&Tok::RParen, "`)` to close the parenthesis")?;
                Ok(p)
            }
            Tok::Word(w) if w == "true" => {
                self.bump();
                Ok(Prop::True)
            }
            Tok::Word(w) if w == "false" => {
                self.bump();
                Ok(Prop::False)
            }
            _ => {
                let a = self.term()?;
                let op = match self.peek().tok {
                    Tok::EqEq | Tok::Assign => CmpOp::Eq,
                    Tok::NotEq => CmpOp::Ne,
                    _ => {
                        return Err(self.error_expected(
                            "`==`, `=` or `!=` after the operand",
                            &["`==`", "`=`", "`!=`"],
                        ))
                    }
                };
                self.bump();
                let b = self.term()?;
                Ok(Prop::Cmp(a, op, b))
            }
        }
    }

    fn term(&mut self) -> Result<Term, Diagnostic> {
        match (&self.peek().tok, &self.peek_at(1).tok) {
            (Tok::Int(v), t) if *t != Tok::Colon => {
                let v = *v;
                self.bump();
                Ok(Term::Const(v))
            }
            (Tok::Int(_) | Tok::Word(_) | Tok::LBracket, _) => {
                Ok(Term::Observable(self.observable()?))
            }
            _ => Err(self.error_expected(
                "an operand (`P0:r0`, `0:r0`, a location, an integer), `true`, `false`, `~` or `(`",
                &[
                    "a register",
                    "a location",
                    "an integer",
                    "`true`",
                    "`false`",
                    "`~`",
                    "`(`",
                ],
            )),
        }
    }

    /// `P1:r0`, `1:r0`, `x` or `[x]`.
    fn observable(&mut self) -> Result<Observable, Diagnostic> {
        if self.peek_at(1).tok == Tok::Colon {
            let (t, thread_span) = self.thread_ref()?;
            self.bump(); // `:`
            let (reg, reg_span) = self.register()?;
            let n = self.threads.len();
            let Some(state) = self.threads.get(t as usize) else {
                return Err(Diagnostic::error(format!(
                    "no thread P{t} in this test: the placement row has {n} thread{}",
                    if n == 1 { "" } else { "s" }
                ))
                .at(thread_span));
            };
            return match state.thread.reg(&reg) {
                Some(r) => Ok(Observable::Reg(ThreadId(t), r)),
                None => Err(
                    Diagnostic::error(format!("thread P{t} never uses register `{reg}`"))
                        .at(reg_span)
                        .expecting(&state.thread.registers),
                ),
            };
        }
        let bracket = self.eat(&Tok::LBracket).is_some();
        let (name, span) = match &self.peek().tok {
            Tok::Word(w) => (w.clone(), self.peek().span),
            _ => {
                return Err(self.error_expected(
                    "a location or a register such as `P0:r0`",
                    &["a location", "a register"],
                ))
            }
        };
        if register_name(&name).is_some() {
            return Err(Diagnostic::error(format!(
                "register `{name}` needs its thread, as in `P0:{name}`"
            ))
            .at(span)
            .expecting(&["`P0:r0`"]));
        }
        self.location_name(&name, span)?;
        self.bump();
        // `a[1]`: an element of an array of the initial state.
        let element = if self.at(&Tok::LBracket) {
            self.bump();
            let (i, ispan) = self.u32_literal("an element number")?;
            self.expect(&Tok::RBracket, "`]` after the element number")?;
            let Some(a) = self.array(&name) else {
                return Err(Diagnostic::error(format!("`{name}` is not an array of the initial state (declare it as `int {name}[N]` or `{name}={{...}}`)")).at(span));
            };
            if i >= a.len {
                return Err(Diagnostic::error(format!(
                    "element {i} is out of bounds of `{name}`, which has {} elements",
                    a.len
                ))
                .at(ispan));
            }
            Some(LocId(a.first.0 + i))
        } else {
            if let Some(a) = self.array(&name) {
                return Err(Diagnostic::error(format!(
                    "`{name}` is an array of {} elements: name one, as in `{name}[0]`",
                    a.len
                ))
                .at(span));
            }
            None
        };
        if bracket {
            self.expect(&Tok::RBracket, "`]` after the location")?;
        }
        Ok(Observable::Loc(match element {
            Some(e) => e,
            None => self.loc(&name, span),
        }))
    }
}
