//! Macro expansion: the text lines between directives, rescanned with their hide sets,
//! arguments collected, substituted, stringized (`#`) and pasted (`##`).

use scopecheck_ir::Diagnostic;
use std::collections::VecDeque;
use std::rc::Rc;

use super::{
    single_token, Hide, Item, ItemKind, Kind, Macro, Out, Pp, Tok, FILE_NAME, MAX_ARGUMENT_TOKENS,
    MAX_EXPANDED_TOKENS, MAX_MACRO_NESTING,
};

/// One use of a macro being replaced: the macro, the use (its name token), the arguments as
/// written, each argument's full expansion once a parameter outside `#` and `##` needs it,
/// and the expansion depth.
pub(super) struct MacroUse<'a> {
    m: &'a Macro,
    inv: &'a Tok,
    args: &'a [Vec<Tok>],
    expanded: Vec<Option<Vec<Tok>>>,
    depth: usize,
}
impl Pp<'_> {
    /// Expands the text lines gathered since the last directive and writes them out.
    pub(super) fn flush(
        &mut self,
        group: &mut VecDeque<Tok>,
        out: &mut Out,
    ) -> Result<(), Diagnostic> {
        let mut q = std::mem::take(group);
        while let Some(t) = q.pop_front() {
            if t.kind == Kind::Ident {
                if t.src {
                    out.goto(t.at);
                }
                if &*t.text == "_Pragma" {
                    self.pragma_operator(&t, &mut q)?;
                    continue;
                }
                if let Some(rep) = self.try_expand(&t, &mut q, 0)? {
                    push_front_all(&mut q, rep);
                    continue;
                }
            }
            out.emit(&t);
        }
        Ok(())
    }

    /// Drops `_Pragma ( "..." )`.
    pub(super) fn pragma_operator(&self, t: &Tok, q: &mut VecDeque<Tok>) -> Result<(), Diagnostic> {
        let solid: Vec<usize> = q
            .iter()
            .enumerate()
            .filter(|(_, x)| !x.is_ws())
            .map(|(k, _)| k)
            .take(3)
            .collect();
        let ok = solid.len() == 3
            && q[solid[0]].is_punct("(")
            && q[solid[1]].kind == Kind::Str
            && q[solid[2]].is_punct(")");
        if !ok {
            return Err(self.err(
                t.at,
                "`_Pragma` must be followed by a string literal in parentheses",
            ));
        }
        q.drain(..=solid[2]);
        Ok(())
    }

    /// Expands a list of tokens completely, without reading past its end.
    pub(super) fn expand_list(
        &mut self,
        toks: Vec<Tok>,
        depth: usize,
    ) -> Result<Vec<Tok>, Diagnostic> {
        let mut q: VecDeque<Tok> = toks.into();
        let mut out = Vec::with_capacity(q.len());
        while let Some(t) = q.pop_front() {
            if t.kind == Kind::Ident {
                if let Some(rep) = self.try_expand(&t, &mut q, depth)? {
                    push_front_all(&mut q, rep);
                    continue;
                }
            }
            out.push(t);
        }
        Ok(out)
    }

    /// The expansion of `t` when it is a macro use (its arguments taken from `q`).
    pub(super) fn try_expand(
        &mut self,
        t: &Tok,
        q: &mut VecDeque<Tok>,
        depth: usize,
    ) -> Result<Option<Vec<Tok>>, Diagnostic> {
        let name = &t.text;
        if t.hide.contains(name) {
            return Ok(None);
        }
        let Some(m) = self.macros.get(name).cloned() else {
            let text = match &**name {
                "__LINE__" => self.span(t.at).line.to_string(),
                "__FILE__" => FILE_NAME.to_string(),
                _ => return Ok(None),
            };
            let kind = if name.as_ref() == "__LINE__" {
                Kind::Number
            } else {
                Kind::Str
            };
            return Ok(Some(vec![Tok::synth(kind, &text, t.at, t.space)]));
        };
        // Checked before the arguments are collected: each level copies them.
        if depth > MAX_MACRO_NESTING {
            return Err(self.err(
                t.at,
                format!("macro uses nested too deeply (more than {MAX_MACRO_NESTING} levels)"),
            ));
        }
        let mut hs = t.hide.with(name);
        let mut args = Vec::new();
        if m.function {
            let Some(p) = q.iter().position(|x| !x.is_ws()) else {
                return Ok(None);
            };
            if !q[p].is_punct("(") {
                return Ok(None);
            }
            q.drain(..=p);
            let (a, rparen) = self.collect_args(t, &m, q, depth)?;
            self.check_count(t, &m, &a)?;
            hs = t.hide.intersect(&rparen.hide).with(name);
            args = a;
        }
        let held: usize = args.iter().map(Vec::len).sum();
        if self.arg_tokens + held > MAX_ARGUMENT_TOKENS {
            return Err(self.err(
                t.at,
                format!(
                    "macro arguments too large: the macro uses being expanded here hold more \
                     than {MAX_ARGUMENT_TOKENS} tokens of arguments"
                ),
            ));
        }
        self.arg_tokens += held;
        let rep = self.subst(&m, t, &args, &hs, depth);
        self.arg_tokens -= held;
        let rep = rep?;
        self.produced += rep.len() + 1;
        if self.produced > MAX_EXPANDED_TOKENS {
            return Err(self.err(
                t.at,
                format!("macro expansion too large (over {MAX_EXPANDED_TOKENS} tokens)"),
            ));
        }
        Ok(Some(rep))
    }

    /// The arguments of a use of `m` whose `(` was taken from `q`, and the closing `)`.
    pub(super) fn collect_args(
        &self,
        t: &Tok,
        m: &Macro,
        q: &mut VecDeque<Tok>,
        depth: usize,
    ) -> Result<(Vec<Vec<Tok>>, Tok), Diagnostic> {
        let mut args: Vec<Vec<Tok>> = vec![Vec::new()];
        let mut nest = 0usize;
        while let Some(mut a) = q.pop_front() {
            if a.is_ws() {
                continue;
            }
            a.src = false;
            if a.is_punct(")") && nest == 0 {
                return Ok((args, a));
            }
            if a.is_punct(",") && nest == 0 && !(m.variadic && args.len() == m.params.len()) {
                args.push(Vec::new());
                continue;
            }
            if a.is_punct("(") {
                nest += 1;
            } else if a.is_punct(")") {
                nest -= 1;
            }
            if let Some(last) = args.last_mut() {
                last.push(a);
            }
        }
        let mut message = format!("unterminated argument list invoking macro `{}`", t.text);
        if depth == 0 {
            match self.group_end {
                Some(line) => message.push_str(&format!(
                    ": the directive at line {} comes before its `)` (directives inside macro \
                     arguments are not supported)",
                    self.lines[line].segs[0].phys + 1
                )),
                None => message.push_str(": the file ends before its `)`"),
            }
        }
        Err(self.err(t.at, message))
    }

    pub(super) fn check_count(
        &self,
        t: &Tok,
        m: &Macro,
        args: &[Vec<Tok>],
    ) -> Result<(), Diagnostic> {
        let n = m.params.len();
        let given = args.len();
        let plural = |k: usize| if k == 1 { "" } else { "s" };
        let message = if m.variadic {
            let named = n - 1;
            if given >= named {
                return Ok(());
            }
            format!(
                "macro `{}` takes at least {named} argument{}, but {given} {} given",
                t.text,
                plural(named),
                if given == 1 { "was" } else { "were" }
            )
        } else if n == 0 {
            if given == 1 && args[0].is_empty() {
                return Ok(());
            }
            format!(
                "macro `{}` takes no arguments, but {given} {} given",
                t.text,
                if given == 1 { "was" } else { "were" }
            )
        } else {
            if given == n {
                return Ok(());
            }
            format!(
                "macro `{}` takes {n} argument{}, but {given} {} given",
                t.text,
                plural(n),
                if given == 1 { "was" } else { "were" }
            )
        };
        Err(self.err(t.at, message))
    }

    /// The replacement of a use `inv` of `m`, before rescanning.
    pub(super) fn subst(
        &mut self,
        m: &Macro,
        inv: &Tok,
        args: &[Vec<Tok>],
        hs: &Hide,
        depth: usize,
    ) -> Result<Vec<Tok>, Diagnostic> {
        let mut call = MacroUse {
            m,
            inv,
            args,
            expanded: vec![None; m.params.len()],
            depth,
        };
        let mut raw = Vec::new();
        self.subst_items(&m.body, &mut call, &mut raw)?;
        let mut pasted: Vec<Tok> = Vec::with_capacity(raw.len());
        let mut it = raw.into_iter();
        while let Some(tok) = it.next() {
            if tok.kind == Kind::PasteOp {
                let pm = || Tok::synth(Kind::Placemarker, "", inv.at, false);
                let left = pasted.pop().unwrap_or_else(pm);
                let right = it.next().unwrap_or_else(pm);
                pasted.push(self.glue(left, right, inv)?);
            } else {
                pasted.push(tok);
            }
        }
        let mut first = true;
        Ok(pasted
            .into_iter()
            .filter(|t| t.kind != Kind::Placemarker)
            .map(|mut t| {
                t.hide = t.hide.union(hs);
                t.src = false;
                if first {
                    t.space = inv.space;
                    first = false;
                }
                t
            })
            .collect())
    }

    /// Appends to `out` the replacement `items` of `call` (its macro's body, or the inside of
    /// a `__VA_OPT__`), before pasting.
    pub(super) fn subst_items(
        &mut self,
        items: &[Item],
        call: &mut MacroUse,
        out: &mut Vec<Tok>,
    ) -> Result<(), Diagnostic> {
        let (m, inv, args, depth) = (call.m, call.inv, call.args, call.depth);
        let empty: &[Tok] = &[];
        let arg = |p: usize| args.get(p).map_or(empty, |a| a.as_slice());
        let va = m.params.len().wrapping_sub(1);
        let is_paste = |k: usize| {
            items
                .get(k)
                .is_some_and(|i| matches!(i.kind, ItemKind::Paste))
        };
        let placemarker = || Tok::synth(Kind::Placemarker, "", inv.at, false);
        let push_arg = |out: &mut Vec<Tok>, toks: &[Tok], space: bool| {
            for (k, a) in toks.iter().enumerate() {
                let mut a = a.clone();
                a.src = false;
                if k == 0 {
                    a.space = space;
                }
                out.push(a);
            }
        };
        let mut i = 0;
        while i < items.len() {
            let item = &items[i];
            let pasted = (i > 0 && is_paste(i - 1)) || is_paste(i + 1);
            match &item.kind {
                ItemKind::Tok(t) => {
                    let gnu_comma = m.variadic
                        && t.is_punct(",")
                        && is_paste(i + 1)
                        && matches!(items.get(i + 2), Some(Item { kind: ItemKind::Param(p), .. }) if *p == va);
                    let mut t = t.clone();
                    t.space = item.space;
                    t.at = inv.at;
                    t.src = false;
                    if gnu_comma {
                        // `, ## __VA_ARGS__`: the comma goes when the variable arguments are
                        // empty.
                        let v = arg(va);
                        if !v.is_empty() {
                            out.push(t);
                            push_arg(out, v, items[i + 2].space);
                        }
                        i += 3;
                        continue;
                    }
                    out.push(t);
                }
                ItemKind::Param(p) => {
                    if pasted {
                        if arg(*p).is_empty() {
                            out.push(placemarker());
                        } else {
                            push_arg(out, arg(*p), item.space);
                        }
                    } else {
                        if call.expanded[*p].is_none() {
                            let e = self.expand_list(arg(*p).to_vec(), depth + 1)?;
                            call.expanded[*p] = Some(e);
                        }
                        let e = call.expanded[*p].as_deref().unwrap_or_default();
                        push_arg(out, e, item.space);
                    }
                }
                ItemKind::Stringize(p) => {
                    out.push(Tok::synth(
                        Kind::Str,
                        &stringize(arg(*p)),
                        inv.at,
                        item.space,
                    ));
                }
                ItemKind::Paste => out.push(Tok::synth(Kind::PasteOp, "##", inv.at, false)),
                ItemKind::VaOpt(inner) => {
                    let before = out.len();
                    if !arg(va).is_empty() {
                        self.subst_items(inner, call, out)?;
                    }
                    match out.get_mut(before) {
                        Some(first) => first.space = item.space,
                        None => out.push(placemarker()),
                    }
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// `l ## r`.
    pub(super) fn glue(&self, l: Tok, r: Tok, inv: &Tok) -> Result<Tok, Diagnostic> {
        if l.kind == Kind::Placemarker {
            return Ok(Tok {
                space: l.space,
                ..r
            });
        }
        if r.kind == Kind::Placemarker {
            return Ok(l);
        }
        let text = format!("{}{}", l.text, r.text);
        let Some(kind) = single_token(&text) else {
            return Err(self.err(
                inv.at,
                format!(
                    "pasting `{}` and `{}` does not give a valid preprocessing token",
                    l.text, r.text
                ),
            ));
        };
        Ok(Tok {
            kind,
            text: Rc::from(text),
            space: l.space,
            hide: l.hide.intersect(&r.hide),
            at: l.at,
            src: false,
        })
    }
}

fn push_front_all(q: &mut VecDeque<Tok>, rep: Vec<Tok>) {
    for r in rep.into_iter().rev() {
        q.push_front(r);
    }
}

/// Tokens written out, one space where whitespace separated them.
pub(super) fn spell(toks: &[Tok]) -> String {
    let mut s = String::new();
    for (k, t) in toks.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

/// `#arg`: the argument's spelling as a string literal.
fn stringize(toks: &[Tok]) -> String {
    let mut s = String::from("\"");
    for (k, t) in toks.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        if matches!(t.kind, Kind::Str | Kind::Char) {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    s
}
