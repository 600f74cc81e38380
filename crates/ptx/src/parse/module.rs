//! Module scope (header directives, declarations, `.file`, `.loc`, skipped `.pragma` and
//! `.section`) and variables with their initializers.

use scopecheck_ir::{Diagnostic, Span};

use crate::ast::{ScalarType, StateSpace, SymbolInit, Variable};
use crate::lexer::Tok;

use super::{negate_float, scalar_type, state_space, Init, Parser, MAX_INLINED_AT};

impl Parser<'_> {
    pub(super) fn module(&mut self) -> Result<(), Diagnostic> {
        while self.peek().tok != Tok::Eof {
            self.module_item()?;
        }
        match &self.lex_error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn module_item(&mut self) -> Result<(), Diagnostic> {
        let token = self.peek().clone();
        let Tok::Word(word) = &token.tok else {
            return Err(self.unexpected(
                "a directive (`.version`, `.target`, `.entry`, `.func`, a variable declaration)",
            ));
        };
        match word.as_str() {
            ".version" => {
                self.next();
                let number = self.peek().clone();
                match number.tok {
                    Tok::Int(_) | Tok::Float { .. } => {
                        self.next();
                        self.module.version = Some(self.text(number.span).to_string());
                    }
                    _ => return Err(self.unexpected("a version number after `.version`")),
                }
            }
            ".target" => {
                self.next();
                let (target, _) = self.name("a target name after `.target`")?;
                // Further names (`, texmode_independent`, `, debug`) do not change the model.
                while self.eat(&Tok::Comma) {
                    self.name("a target name after `,`")?;
                }
                self.module.target = Some(target);
            }
            ".address_size" => {
                self.next();
                self.module.address_size =
                    Some(self.unsigned32("an address size after `.address_size`")?);
            }
            ".file" => self.file_directive()?,
            ".loc" => self.loc_directive()?,
            ".pragma" => self.skip_pragma()?,
            ".section" => self.skip_section()?,
            ".param" => {
                return Err(Diagnostic::error(
                    "`.param` at module scope: parameters belong to a function's parameter \
                     list or body",
                )
                .at(token.span))
            }
            ".visible" | ".weak" | ".extern" | ".common" | ".entry" | ".func" => {
                self.declaration(token.span)?
            }
            w if state_space(w).is_some() => self.declaration(token.span)?,
            w if w.starts_with('.') => {
                return Err(
                    Diagnostic::error(format!("unknown directive `{w}` at module scope"))
                        .at(token.span),
                )
            }
            _ => {
                return Err(self.unexpected(
                    "a directive (`.version`, `.target`, `.entry`, `.func`, a variable \
                     declaration)",
                ))
            }
        }
        Ok(())
    }

    /// Linkage directives, then a function or a module variable.
    fn declaration(&mut self, start: Span) -> Result<(), Diagnostic> {
        let mut external = false;
        let mut linkage = None;
        loop {
            match self.peek_word() {
                Some(".extern") => external = true,
                Some(w @ (".visible" | ".weak" | ".common")) => linkage = Some(w[1..].to_string()),
                _ => break,
            }
            self.next();
        }
        match self.peek_word() {
            Some(".entry" | ".func") => self.function(start),
            Some(w) if state_space(w).is_some_and(|s| s != StateSpace::Param) => {
                let variables = self.variables(start, external, linkage)?;
                self.module.variables.extend(variables);
                Ok(())
            }
            _ => Err(self.unexpected(
                "`.entry`, `.func` or a state space (`.global`, `.shared`, `.const`, `.local`)",
            )),
        }
    }

    /// `.file 1 "kernel.cu"`, perhaps with `, timestamp, size`.
    pub(super) fn file_directive(&mut self) -> Result<(), Diagnostic> {
        self.next();
        let number = self.unsigned32("a file number after `.file`")?;
        let name = match &self.peek().tok {
            Tok::Str(s) => s.clone(),
            _ => return Err(self.unexpected("the file name (a string) after `.file N`")),
        };
        self.next();
        while self.eat(&Tok::Comma) {
            self.unsigned("a timestamp or size after `,` in `.file`")?;
        }
        self.module.files.push((number, name));
        Ok(())
    }

    /// `.loc file line column`, perhaps with `, function_name ..., inlined_at ...`.
    pub(super) fn loc_directive(&mut self) -> Result<(), Diagnostic> {
        let loc_line = self.next().span.line;
        let file = self.unsigned32("a file number after `.loc`")?;
        let line = self.unsigned32("a line number after `.loc N`")?;
        let column = self.unsigned32("a column after `.loc N N`")?;
        self.loc = Some((file, line, column));
        self.inlined_at.clear();
        // The inlining context: `, function_name $L__info_string0, inlined_at F L C`. `.loc`
        // has no `;`, so its end is the end of its line.
        if self.peek().tok == Tok::Comma {
            let mut words: Vec<Tok> = Vec::new();
            while self.peek().span.line == loc_line
                && !matches!(
                    self.peek().tok,
                    Tok::Eof | Tok::Semi | Tok::LBrace | Tok::RBrace
                )
            {
                words.push(self.next().tok.clone());
            }
            let at = words
                .iter()
                .position(|w| matches!(w, Tok::Word(s) if s == "inlined_at"));
            let num = |w: Option<&Tok>| match w {
                Some(Tok::Int(v)) => u32::try_from(*v).ok(),
                _ => None,
            };
            if let Some(k) = at {
                if let (Some(f), Some(l), Some(c)) = (
                    num(words.get(k + 1)),
                    num(words.get(k + 2)),
                    num(words.get(k + 3)),
                ) {
                    let caller = (f, l, c);
                    self.inlined.insert((file, line, column), caller);
                    // The chain outwards, each call site's own `inlined_at` in turn.
                    let mut at = caller;
                    self.inlined_at.push(at);
                    while let Some(&next) = self.inlined.get(&at) {
                        if self.inlined_at.contains(&next)
                            || self.inlined_at.len() >= MAX_INLINED_AT
                        {
                            break;
                        }
                        self.inlined_at.push(next);
                        at = next;
                    }
                }
            }
        }
        Ok(())
    }

    /// `.pragma "nounroll";`: hints to the optimizer, nothing the model needs.
    pub(super) fn skip_pragma(&mut self) -> Result<(), Diagnostic> {
        self.next();
        loop {
            if !matches!(self.peek().tok, Tok::Str(_)) {
                return Err(self.unexpected("a string after `.pragma`"));
            }
            self.next();
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::Semi, "`;` after the `.pragma`")?;
        Ok(())
    }

    /// `.section .debug_info { ... }`: DWARF data, skipped up to the matching `}`.
    fn skip_section(&mut self) -> Result<(), Diagnostic> {
        self.next();
        let (name, _) = match self.peek_word() {
            Some(_) => {
                let token = self.next();
                (self.text(token.span).to_string(), token.span)
            }
            None => return Err(self.unexpected("a section name after `.section`")),
        };
        let open = self.expect(Tok::LBrace, &format!("`{{` after `.section {name}`"))?;
        let mut depth = 1usize;
        loop {
            match self.peek().tok {
                Tok::Eof => {
                    if let Some(e) = &self.lex_error {
                        return Err(e.clone());
                    }
                    return Err(Diagnostic::error(format!(
                        "this `{{` of section `{name}` is never closed: expected `}}`, \
                             found the end of the input"
                    ))
                    .at(open.span));
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        self.next();
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.next();
        }
    }

    /// `.global .align 4 .b8 table[64] = {...}, other;` (the state space next): one variable
    /// per declarator.
    pub(super) fn variables(
        &mut self,
        start: Span,
        external: bool,
        linkage: Option<String>,
    ) -> Result<Vec<Variable>, Diagnostic> {
        let space_token = self.next();
        let space = match &space_token.tok {
            Tok::Word(w) => state_space(w),
            _ => None,
        }
        .ok_or_else(|| Diagnostic::error("expected a state space").at(space_token.span))?;
        let mut align = None;
        let ty =
            loop {
                match self.peek_word() {
                    Some(".align") => {
                        self.next();
                        align = Some(self.unsigned32("an alignment after `.align`")?);
                    }
                    // `.attribute(.managed)`: how the host maps the variable, not how it is used.
                    Some(".attribute") => {
                        self.next();
                        self.expect(Tok::LParen, "`(` after `.attribute`")?;
                        while !matches!(self.peek().tok, Tok::RParen | Tok::Eof | Tok::Semi) {
                            self.next();
                        }
                        self.expect(Tok::RParen, "`)` to close `.attribute(`")?;
                    }
                    Some(w) if scalar_type(w).is_some() => {
                        let ty = scalar_type(w);
                        self.next();
                        break ty.unwrap_or(ScalarType::Pred);
                    }
                    Some(w @ (".v2" | ".v4" | ".v8")) => {
                        return Err(Diagnostic::error(format!(
                            "vector variables (`{w}`) are not supported"
                        ))
                        .at(self.peek().span))
                    }
                    _ => return Err(self.unexpected(
                        "a type (`.b8`, `.u32`, `.s64`, `.f32`, ...) in the variable declaration",
                    )),
                }
            };
        let mut declarators = Vec::new();
        loop {
            let (name, _) = self.name("a variable name")?;
            let mut dims = Vec::new();
            while self.eat(&Tok::LBracket) {
                if self.eat(&Tok::RBracket) {
                    dims.push(None);
                } else {
                    dims.push(Some(self.unsigned("an array size or `]`")?));
                    self.expect(Tok::RBracket, "`]` after the array size")?;
                }
            }
            let mut init = (Vec::new(), Vec::new());
            if self.eat(&Tok::Assign) {
                self.initializer(ty, &mut init)?;
            }
            declarators.push((name, dims, init));
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::Semi, "`;` after the variable declaration")?;
        let span = self.span_from(start);
        Ok(declarators
            .into_iter()
            .map(|(name, dims, (init, init_symbols))| Variable {
                space,
                external,
                linkage: linkage.clone(),
                align,
                ty,
                name,
                dims,
                init,
                init_symbols,
                span,
            })
            .collect())
    }

    /// `5`, `-1`, `0f3F800000`, `generic(x)` or `{1, {2, 3}}` (flattened, in order), into the
    /// values and the address values of a [`Variable`].
    fn initializer(&mut self, ty: ScalarType, out: &mut Init) -> Result<(), Diagnostic> {
        let open = self.peek().span;
        if !self.eat(&Tok::LBrace) {
            return self.initial_value(ty, out);
        }
        self.nesting(open, "initializer braces")?;
        let result = (|| {
            if self.eat(&Tok::RBrace) {
                return Ok(());
            }
            loop {
                self.initializer(ty, out)?;
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::RBrace, "`,` or `}` in the initializer")?;
            Ok(())
        })();
        self.depth -= 1;
        result
    }

    fn initial_value(&mut self, ty: ScalarType, out: &mut Init) -> Result<(), Diagnostic> {
        if matches!(&self.peek().tok, Tok::Word(w) if !w.starts_with('.')) {
            let symbol = self.symbol_initial_value(out.0.len())?;
            out.0.push(0);
            out.1.push(symbol);
            return Ok(());
        }
        let negative = self.eat(&Tok::Minus);
        let token = self.peek().clone();
        let value = match token.tok {
            Tok::Int(v) if negative => v.wrapping_neg(),
            Tok::Int(v) => v,
            Tok::Float { bits, double } => {
                // PTX converts a floating literal to the variable's type.
                let (bits, double) = match (ty, double) {
                    (ScalarType::F(32), true) => {
                        (u64::from((f64::from_bits(bits) as f32).to_bits()), false)
                    }
                    (ScalarType::F(64), false) => {
                        (f64::from(f32::from_bits(bits as u32)).to_bits(), true)
                    }
                    _ => (bits, double),
                };
                (if negative {
                    negate_float(bits, double)
                } else {
                    bits
                }) as i64
            }
            _ => {
                return Err(self.unexpected(
                    "an initial value (a number, a variable or function, or `generic(...)`)",
                ))
            }
        };
        self.next();
        out.0.push(value);
        Ok(())
    }

    /// `x`, `generic(x)`, `x+4`, `generic(x)-8`: the address value at `index`.
    fn symbol_initial_value(&mut self, index: usize) -> Result<SymbolInit, Diagnostic> {
        let generic = self.peek_word() == Some("generic") && self.peek_at(1).tok == Tok::LParen;
        let (symbol, _) = if generic {
            self.next();
            self.next();
            let name = self.name("a variable name inside `generic(`")?;
            self.expect(Tok::RParen, "`)` to close `generic(`")?;
            name
        } else {
            self.name("an initial value")?
        };
        let offset = if self.eat(&Tok::Plus) {
            self.signed("an integer offset after `+`")?
        } else if self.eat(&Tok::Minus) {
            self.unsigned("an integer offset after `-`")?.wrapping_neg() as i64
        } else {
            0
        };
        Ok(SymbolInit {
            index,
            symbol,
            offset,
            generic,
        })
    }
}
