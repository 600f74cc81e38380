//! `#define`, `#undef`, `#include`, `#if` and the other directives, and the conditions of
//! conditional groups (`defined`, then the `#if` expression of `if_expr`).

use scopecheck_ir::Diagnostic;
use std::rc::Rc;

use super::expand::spell;
use super::if_expr::Expr;
use super::{Cond, Item, ItemKind, Kind, Loc, Macro, Pp, Tok, PREDEFINED_LINE, RESERVED};

impl Pp<'_> {
    pub(super) fn directive(
        &mut self,
        hash: &Tok,
        toks: &[Tok],
        conds: &mut Vec<Cond>,
    ) -> Result<(), Diagnostic> {
        let active = conds.last().is_none_or(|c| c.active);
        let Some(name_tok) = toks.first() else {
            return Ok(()); // the null directive
        };
        let loc = if name_tok.at.line == hash.at.line {
            Loc {
                len: name_tok.at.off + name_tok.at.len - hash.at.off,
                ..hash.at
            }
        } else {
            hash.at
        };
        let name: &str = if name_tok.kind == Kind::Ident {
            &name_tok.text
        } else {
            ""
        };
        let rest = &toks[1..];
        match name {
            "if" | "ifdef" | "ifndef" => {
                let v = if active {
                    self.condition(name, rest, loc)?
                } else {
                    false
                };
                conds.push(Cond {
                    parent_active: active,
                    active: v,
                    taken: v,
                    else_at: None,
                    at: loc,
                    name: name.to_string(),
                });
            }
            "elif" | "elifdef" | "elifndef" => {
                let Some(c) = conds.last_mut() else {
                    return Err(self.err(loc, format!("#{name} without #if")));
                };
                if let Some(e) = c.else_at {
                    let line = self.span(e).line;
                    return Err(self.err(loc, format!("#{name} after #else (line {line})")));
                }
                if c.parent_active && !c.taken {
                    let v = self.condition(name, rest, loc)?;
                    c.active = v;
                    c.taken = v;
                } else {
                    c.active = false;
                }
            }
            "else" => {
                let Some(c) = conds.last_mut() else {
                    return Err(self.err(loc, "#else without #if"));
                };
                if let Some(e) = c.else_at {
                    let line = self.span(e).line;
                    return Err(self.err(loc, format!("#else after #else (line {line})")));
                }
                c.else_at = Some(loc);
                c.active = c.parent_active && !c.taken;
                c.taken = true;
                if c.parent_active {
                    self.extra_tokens("else", rest);
                }
            }
            "endif" => {
                let Some(c) = conds.pop() else {
                    return Err(self.err(loc, "#endif without #if"));
                };
                if c.parent_active {
                    self.extra_tokens("endif", rest);
                }
            }
            _ if !active => {}
            "define" => self.define(rest, loc)?,
            "undef" => {
                let Some(t) = rest.first() else {
                    return Err(self.err(loc, "#undef needs a macro name"));
                };
                self.check_name(t, "undefined")?;
                self.extra_tokens("undef", &rest[1..]);
                self.macros.remove(&t.text);
            }
            "include" | "include_next" | "import" if self.inc.is_some() => {
                self.include(rest, loc)?;
            }
            // System headers (`<...>`) are known to the front-end; a file of the user's own is
            // not read, which the user must know.
            "include" | "include_next" | "import" => {
                if let Some(t) = rest.first().filter(|t| t.text.starts_with('"')) {
                    self.warn(
                        loc,
                        format!(
                            "`#include {}` is not read: scopecheck checks one file; what it declares must be in this file",
                            t.text
                        ),
                    );
                }
            }
            "pragma" => {
                if let (Some(file), Some(inc)) = (&self.file, &self.inc) {
                    if rest.first().is_some_and(|t| t.text.as_ref() == "once") {
                        inc.once.borrow_mut().insert(file.clone());
                    }
                }
            }
            "error" => {
                let text = spell(rest);
                let message = if text.is_empty() {
                    "#error".to_string()
                } else {
                    format!("#error {text}")
                };
                return Err(self.err(loc, message));
            }
            "warning" => {
                let text = spell(rest);
                let message = if text.is_empty() {
                    "#warning".to_string()
                } else {
                    format!("#warning {text}")
                };
                self.warn(loc, message);
            }
            "line" => return Err(self.err(loc, "#line is not supported")),
            "" if name_tok.kind == Kind::Number => {
                return Err(self.err(
                    loc,
                    format!("line markers (`# {}`) are not supported", name_tok.text),
                ));
            }
            "" => {
                return Err(self.err(
                    name_tok.at,
                    format!("invalid preprocessing directive `#{}`", name_tok.text),
                ));
            }
            other => {
                return Err(self.err(loc, format!("unknown directive #{other}")));
            }
        }
        Ok(())
    }

    pub(super) fn extra_tokens(&mut self, directive: &str, rest: &[Tok]) {
        if let Some(t) = rest.first() {
            self.warn(
                t.at,
                format!("extra tokens at end of #{directive} directive"),
            );
        }
    }

    /// Refuses a name that is no identifier, or one of the built-in names.
    pub(super) fn check_name(&self, t: &Tok, what: &str) -> Result<(), Diagnostic> {
        if t.kind != Kind::Ident {
            return Err(self.err(
                t.at,
                format!("macro names must be identifiers, found `{}`", t.text),
            ));
        }
        if RESERVED.contains(&&*t.text) {
            return Err(self.err(t.at, format!("`{}` cannot be {what}", t.text)));
        }
        Ok(())
    }

    pub(super) fn define(&mut self, toks: &[Tok], loc: Loc) -> Result<(), Diagnostic> {
        let Some(name) = toks.first() else {
            return Err(self.err(loc, "#define needs a macro name"));
        };
        let (key, m) = self.parse_macro(toks, loc)?;
        if let Some(old) = self.macros.get(&key) {
            if old.spelling == m.spelling {
                return Ok(());
            }
            {
                let previous = match old.line {
                    0 => "predefined".to_string(),
                    l => format!("defined at line {l}"),
                };
                self.warn(
                    name.at,
                    format!("macro `{key}` redefined (it was {previous})"),
                );
            }
        }
        self.macros.insert(key, Rc::new(m));
        Ok(())
    }

    /// A macro definition: the tokens after `#define` (no whitespace).
    pub(super) fn parse_macro(
        &self,
        toks: &[Tok],
        loc: Loc,
    ) -> Result<(Rc<str>, Macro), Diagnostic> {
        let Some(name) = toks.first() else {
            return Err(self.err(loc, "#define needs a macro name"));
        };
        self.check_name(name, "defined")?;
        let function = toks.get(1).is_some_and(|t| t.is_punct("(") && !t.space);
        let mut params: Vec<Rc<str>> = Vec::new();
        let mut variadic = false;
        let mut i = 1;
        if function {
            i = 2;
            let missing = |at: Loc| {
                self.err(
                    at,
                    format!("missing `)` in the parameter list of macro `{}`", name.text),
                )
            };
            loop {
                let Some(t) = toks.get(i) else {
                    return Err(missing(name.at));
                };
                i += 1;
                if t.is_punct(")") && params.is_empty() {
                    break;
                }
                if t.is_punct("...") {
                    variadic = true;
                    params.push(Rc::from("__VA_ARGS__"));
                } else if t.kind == Kind::Ident {
                    if t.text.starts_with("__VA_") {
                        return Err(
                            self.err(t.at, format!("`{}` cannot be a macro parameter", t.text))
                        );
                    }
                    if params.contains(&t.text) {
                        return Err(
                            self.err(t.at, format!("duplicate macro parameter `{}`", t.text))
                        );
                    }
                    params.push(t.text.clone());
                    if toks.get(i).is_some_and(|t| t.is_punct("...")) {
                        variadic = true;
                        i += 1;
                    }
                } else {
                    return Err(self.err(
                        t.at,
                        format!(
                            "expected a parameter name in macro `{}`, found `{}`",
                            name.text, t.text
                        ),
                    ));
                }
                match toks.get(i) {
                    Some(t) if t.is_punct(")") => {
                        i += 1;
                        break;
                    }
                    Some(t) if t.is_punct(",") && !variadic => i += 1,
                    Some(t) if variadic => {
                        return Err(self.err(
                            t.at,
                            "the variadic parameter must be the last parameter (`)` expected)",
                        ));
                    }
                    Some(t) => {
                        return Err(self.err(
                            t.at,
                            format!(
                                "expected `,` or `)` in the parameter list of macro `{}`, \
                                 found `{}`",
                                name.text, t.text
                            ),
                        ));
                    }
                    None => return Err(missing(t.at)),
                }
            }
        }
        let body = &toks[i..];
        let items = self.parse_items(body, &params, function, variadic, false)?;
        let mut spelling = format!("{function}{variadic}(");
        for p in &params {
            spelling.push_str(p);
            spelling.push(',');
        }
        spelling.push(')');
        spelling.push_str(&spell(body));
        let line = if name.at.line == PREDEFINED_LINE {
            0
        } else {
            self.span(name.at).line
        };
        Ok((
            name.text.clone(),
            Macro {
                function,
                params,
                variadic,
                body: items,
                line,
                spelling,
            },
        ))
    }

    /// The replacement list of a macro, with its parameters and operators found.
    pub(super) fn parse_items(
        &self,
        body: &[Tok],
        params: &[Rc<str>],
        function: bool,
        variadic: bool,
        in_va_opt: bool,
    ) -> Result<Vec<Item>, Diagnostic> {
        let param = |t: &Tok| {
            (t.kind == Kind::Ident)
                .then(|| params.iter().position(|p| *p == t.text))
                .flatten()
        };
        let mut items = Vec::new();
        let mut j = 0;
        while j < body.len() {
            let t = &body[j];
            let kind = if function && t.is_punct("#") {
                match body.get(j + 1) {
                    Some(n) if param(n).is_some() => {
                        j += 1;
                        ItemKind::Stringize(param(n).unwrap_or_default())
                    }
                    Some(n) if n.is_ident("__VA_OPT__") => {
                        return Err(self.err(n.at, "`#__VA_OPT__` is not supported"));
                    }
                    _ => {
                        return Err(self.err(t.at, "`#` is not followed by a macro parameter"));
                    }
                }
            } else if t.is_punct("##") {
                ItemKind::Paste
            } else if let Some(p) = param(t) {
                ItemKind::Param(p)
            } else if t.is_ident("__VA_ARGS__") {
                return Err(self.err(
                    t.at,
                    "`__VA_ARGS__` can only appear in the body of a variadic macro declared \
                     with `...`",
                ));
            } else if t.is_ident("__VA_OPT__") {
                if !variadic || in_va_opt {
                    return Err(self.err(
                        t.at,
                        "`__VA_OPT__` can only appear in the body of a variadic macro, not \
                         nested",
                    ));
                }
                if !body.get(j + 1).is_some_and(|n| n.is_punct("(")) {
                    return Err(self.err(t.at, "`__VA_OPT__` must be followed by `(`"));
                }
                let mut depth = 0usize;
                let mut close = None;
                for (k, n) in body.iter().enumerate().skip(j + 1) {
                    if n.is_punct("(") {
                        depth += 1;
                    } else if n.is_punct(")") {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(k);
                            break;
                        }
                    }
                }
                let Some(close) = close else {
                    return Err(self.err(t.at, "missing `)` after `__VA_OPT__(`"));
                };
                let inner =
                    self.parse_items(&body[j + 2..close], params, function, variadic, true)?;
                j = close;
                ItemKind::VaOpt(inner)
            } else {
                ItemKind::Tok(t.clone())
            };
            items.push(Item {
                kind,
                space: t.space,
            });
            j += 1;
        }
        let is_paste = |it: &Item| matches!(it.kind, ItemKind::Paste);
        if items.first().is_some_and(is_paste) || items.last().is_some_and(is_paste) {
            let at = body.iter().find(|t| t.is_punct("##")).map_or(
                Loc {
                    line: 0,
                    off: 0,
                    len: 0,
                },
                |t| t.at,
            );
            return Err(self.err(at, "`##` cannot appear at either end of a macro body"));
        }
        if items.windows(2).any(|w| is_paste(&w[0]) && is_paste(&w[1])) {
            let at = body
                .windows(2)
                .find(|w| w[0].is_punct("##") && w[1].is_punct("##"))
                .map_or(
                    Loc {
                        line: 0,
                        off: 0,
                        len: 0,
                    },
                    |w| w[1].at,
                );
            return Err(self.err(at, "`##` cannot be followed by `##`"));
        }
        Ok(items)
    }

    // -----------------------------------------------------------------------------------------
    // Conditions

    pub(super) fn condition(
        &mut self,
        name: &str,
        rest: &[Tok],
        loc: Loc,
    ) -> Result<bool, Diagnostic> {
        if name != "if" && name != "elif" {
            let Some(t) = rest.first() else {
                return Err(self.err(loc, format!("#{name} needs a macro name")));
            };
            if t.kind != Kind::Ident {
                return Err(self.err(
                    t.at,
                    format!("macro names must be identifiers, found `{}`", t.text),
                ));
            }
            self.extra_tokens(name, &rest[1..]);
            return Ok(self.is_defined(&t.text) != name.ends_with("ndef"));
        }
        if rest.is_empty() {
            return Err(self.err(loc, format!("#{name} with no expression")));
        }
        let toks = self.replace_defined(rest)?;
        let toks = self.expand_list(toks, 1)?;
        let toks = self.replace_defined(&toks)?;
        let mut e = Expr {
            toks: &toks,
            pos: 0,
            end: rest.last().map_or(loc, |t| t.at),
            depth: 0,
        };
        let v = e.parse().map_err(|(at, m)| self.err(at, m))?;
        Ok(v.v != 0)
    }

    /// `defined X` and `defined(X)` replaced by `1` or `0`.
    pub(super) fn replace_defined(&self, toks: &[Tok]) -> Result<Vec<Tok>, Diagnostic> {
        let mut out = Vec::with_capacity(toks.len());
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if !t.is_ident("defined") {
                out.push(t.clone());
                i += 1;
                continue;
            }
            let (name, next) = match (toks.get(i + 1), toks.get(i + 2), toks.get(i + 3)) {
                (Some(n), _, _) if n.kind == Kind::Ident => (n, i + 2),
                (Some(p), Some(n), Some(c))
                    if p.is_punct("(") && n.kind == Kind::Ident && c.is_punct(")") =>
                {
                    (n, i + 4)
                }
                (Some(p), Some(n), _) if p.is_punct("(") && n.kind == Kind::Ident => {
                    return Err(self.err(n.at, "missing `)` after `defined(NAME`"));
                }
                _ => {
                    return Err(self.err(t.at, "operator `defined` requires an identifier"));
                }
            };
            let v = if self.is_defined(&name.text) {
                "1"
            } else {
                "0"
            };
            out.push(Tok::synth(Kind::Number, v, t.at, t.space));
            i = next;
        }
        Ok(out)
    }
}
