//! Functions (`.entry`, `.func`, their parameters) and bodies: declarations, labels,
//! instructions and their operands.

use scopecheck_ir::{Diagnostic, Span};

use crate::ast::{
    Body, Function, Instruction, Operand, Param, RegDecl, ScalarType, StateSpace, Statement,
};
use crate::lexer::Tok;

use super::{
    negate_float, scalar_type, state_space, Parser, HEADER_DIRECTIVES, MAX_REGISTERS,
    MODULE_DIRECTIVES,
};

impl Parser<'_> {
    /// `.entry name (params) directives { body }` or `.func (returns) name (params) ...`,
    /// the body replaced by `;` in a declaration.
    pub(super) fn function(&mut self, start: Span) -> Result<(), Diagnostic> {
        self.registers = 0;
        let entry = self.next().tok == Tok::Word(".entry".to_string());
        let returns = if !entry && self.peek().tok == Tok::LParen {
            self.params("return parameter")?
        } else {
            Vec::new()
        };
        let (name, _) = self.name("the function name")?;
        let params = if self.peek().tok == Tok::LParen {
            self.params("parameter")?
        } else {
            Vec::new()
        };
        let mut directives = Vec::new();
        loop {
            match self.peek_word() {
                Some(".pragma") => self.skip_pragma()?,
                Some(w)
                    if w.strip_prefix('.')
                        .is_some_and(|d| HEADER_DIRECTIVES.contains(&d)) =>
                {
                    let directive = w[1..].to_string();
                    self.next();
                    let mut values = Vec::new();
                    if matches!(self.peek().tok, Tok::Int(_)) {
                        loop {
                            values.push(self.unsigned(&format!("a number after `.{directive}`"))?);
                            if !self.eat(&Tok::Comma) {
                                break;
                            }
                        }
                    }
                    directives.push((directive, values));
                }
                _ => break,
            }
        }
        let body = match self.peek().tok {
            Tok::LBrace => {
                let open = self.next().span;
                // A `.loc` of the previous function does not describe this one.
                self.loc = None;
                self.inlined_at.clear();
                Some(self.body(open)?)
            }
            Tok::Semi => {
                self.next();
                None
            }
            _ => {
                let header_end = format!("`{{` or `;` after the header of `{name}`");
                if let Some(w) = self
                    .peek_word()
                    .filter(|w| w.starts_with('.') && !MODULE_DIRECTIVES.contains(w))
                {
                    return Err(Diagnostic::error(format!(
                        "unknown directive `{w}` in the header of `{name}`: expected a \
                             performance directive (`.maxntid`, `.reqntid`, ...), `{{` or `;`"
                    ))
                    .at(self.peek().span));
                }
                return Err(self.unexpected(&header_end));
            }
        };
        let span = self.span_from(start);
        self.module.functions.push(Function {
            entry,
            name,
            returns,
            params,
            directives,
            body,
            span,
        });
        Ok(())
    }

    /// `( .param ..., .param ... )`.
    fn params(&mut self, what: &str) -> Result<Vec<Param>, Diagnostic> {
        self.next();
        let mut params = Vec::new();
        if self.eat(&Tok::RParen) {
            return Ok(params);
        }
        loop {
            params.push(self.param(what)?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::RParen, &format!("`,` or `)` after the {what}"))?;
        Ok(params)
    }

    /// `.param .u64 .ptr .global .align 4 name` or `.param .align 8 .b8 name[16]`.
    fn param(&mut self, what: &str) -> Result<Param, Diagnostic> {
        let start = self.peek().span;
        match self.peek_word() {
            Some(".param") => {
                self.next();
            }
            Some(".reg") => {
                return Err(Diagnostic::error(format!(
                    "`.reg` {what}s are not supported: expected `.param`"
                ))
                .at(start))
            }
            _ => return Err(self.unexpected(&format!("`.param` to begin a {what}"))),
        }
        let (mut ty, mut ptr, mut ptr_space, mut align) = (None, false, None, None);
        while let Some(w) = self.peek_word().filter(|w| w.starts_with('.')) {
            let here = self.peek().span;
            if w == ".align" {
                self.next();
                align = Some(self.unsigned32("an alignment after `.align`")?);
            } else if w == ".ptr" {
                self.next();
                ptr = true;
                // `.ptr` alone points into the generic space.
                ptr_space = Some(StateSpace::Generic);
            } else if let Some(space) = state_space(w).filter(|&s| ptr && s != StateSpace::Param) {
                self.next();
                ptr_space = Some(space);
            } else if let Some(t) = scalar_type(w) {
                if ty.is_some() {
                    return Err(
                        Diagnostic::error(format!("a second type `{w}` in one {what}")).at(here),
                    );
                }
                self.next();
                ty = Some(t);
            } else {
                return Err(Diagnostic::error(format!(
                    "unexpected `{w}` in a {what}: expected a type, `.ptr`, a state space \
                         after `.ptr`, or `.align`"
                ))
                .at(here));
            }
        }
        let Some(ty) = ty else {
            return Err(self.unexpected(&format!("a type (`.u32`, `.b64`, ...) for the {what}")));
        };
        let (name, _) = self.name(&format!("the {what}'s name"))?;
        let array = if self.eat(&Tok::LBracket) {
            let size = self.unsigned("the parameter's size in bytes")?;
            self.expect(Tok::RBracket, "`]` after the size")?;
            Some(size)
        } else {
            None
        };
        Ok(Param {
            ty,
            name,
            ptr_space,
            align,
            array,
            span: self.span_from(start),
        })
    }

    /// The statements after `open` (a `{`, already consumed) up to the matching `}`.
    fn body(&mut self, open: Span) -> Result<Body, Diagnostic> {
        self.nesting(open, "blocks")?;
        self.reg_scopes.push(Vec::new());
        let result = self.body_items(open);
        self.reg_scopes.pop();
        self.depth -= 1;
        result
    }

    fn body_items(&mut self, open: Span) -> Result<Body, Diagnostic> {
        let mut body = Body {
            regs: Vec::new(),
            locals: Vec::new(),
            statements: Vec::new(),
        };
        loop {
            let token = self.peek().clone();
            match &token.tok {
                Tok::RBrace => {
                    self.next();
                    return Ok(body);
                }
                Tok::Eof => {
                    if let Some(e) = &self.lex_error {
                        return Err(e.clone());
                    }
                    return Err(Diagnostic::error(
                        "this `{` is never closed: expected `}`, found the end of the input",
                    )
                    .at(Span { len: 1, ..open }));
                }
                Tok::LBrace => {
                    self.next();
                    let block = self.body(token.span)?;
                    body.statements.push(Statement::Block(block));
                }
                Tok::Word(w) if w.starts_with('.') => self.body_directive(&mut body, open)?,
                Tok::Word(w) if self.peek_at(1).tok == Tok::Colon => {
                    let label = w.clone();
                    self.next();
                    self.next();
                    body.statements.push(Statement::Label(label, token.span));
                }
                Tok::Word(_) | Tok::At => {
                    let instruction = self.instruction()?;
                    body.statements.push(Statement::Instruction(instruction));
                }
                _ => return Err(self.unexpected("an instruction, a label, a declaration or `}`")),
            }
        }
    }

    fn body_directive(&mut self, body: &mut Body, open: Span) -> Result<(), Diagnostic> {
        let token = self.peek().clone();
        let Tok::Word(w) = &token.tok else {
            return Err(self.unexpected("a directive"));
        };
        match w.as_str() {
            ".reg" => body.regs.push(self.reg_decl()?),
            // `.param` declarations are the argument and return buffers of a call.
            w if state_space(w).is_some() => {
                let variables = self.variables(token.span, false, None)?;
                body.locals.extend(variables);
            }
            ".extern" if matches!(&self.peek_at(1).tok, Tok::Word(w) if state_space(w).is_some()) =>
            {
                self.next();
                let variables = self.variables(token.span, true, None)?;
                body.locals.extend(variables);
            }
            ".loc" => self.loc_directive()?,
            ".file" => self.file_directive()?,
            ".pragma" => self.skip_pragma()?,
            // Indirect-call prototypes and target lists (`proto: .callprototype ...;`).
            ".callprototype" | ".calltargets" | ".branchtargets" => {
                while !matches!(self.peek().tok, Tok::Semi | Tok::RBrace | Tok::Eof) {
                    self.next();
                }
                self.expect(Tok::Semi, &format!("`;` after `{w}`"))?;
            }
            w if MODULE_DIRECTIVES.contains(&w) || w == ".extern" => {
                return Err(Diagnostic::error(format!(
                    "expected `}}` to close the body opened at {}:{}, found `{w}`",
                    open.line, open.column
                ))
                .at(token.span))
            }
            w => {
                return Err(Diagnostic::error(format!(
                    "unknown directive `{w}` in a function body"
                ))
                .at(token.span))
            }
        }
        Ok(())
    }

    /// `.reg .b32 %r<9>;` or `.reg .pred p, q;`.
    fn reg_decl(&mut self) -> Result<RegDecl, Diagnostic> {
        let start = self.next().span;
        let ty = match self.peek_word() {
            Some(w) if scalar_type(w).is_some() => {
                let ty = scalar_type(w);
                self.next();
                ty.unwrap_or(ScalarType::Pred)
            }
            Some(w @ (".v2" | ".v4" | ".v8")) => {
                return Err(Diagnostic::error(format!(
                    "vector registers (`{w}`) are not supported"
                ))
                .at(self.peek().span))
            }
            _ => return Err(self.unexpected("a type (`.b32`, `.u64`, `.pred`, ...) after `.reg`")),
        };
        let mut names = Vec::new();
        loop {
            let (name, name_span) = self.name("a register name")?;
            let count_span = self.peek_at(1).span;
            let count = if self.eat(&Tok::Less) {
                let n = self.unsigned32("a register count after `<`")?;
                self.expect(Tok::Greater, "`>` after the register count")?;
                Some(n)
            } else {
                None
            };
            // Checked before anything is allocated for them.
            self.registers = self.registers.saturating_add(count.map_or(1, u64::from));
            if self.registers > MAX_REGISTERS {
                return Err(Diagnostic::error(format!(
                        "too many registers: with `{name}` this function declares {} of them, more than {MAX_REGISTERS}",
                        self.registers
                    )).at(if count.is_some() { count_span } else { name_span }));
            }
            if !name.starts_with('%') {
                if let Some(scope) = self.reg_scopes.last_mut() {
                    scope.push((name.clone(), count));
                }
            }
            names.push((name, count));
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::Semi, "`;` after the register declaration")?;
        Ok(RegDecl {
            ty,
            names,
            span: self.span_from(start),
        })
    }

    /// Whether `name` is a register: `%` names always are; others when a `.reg` in an
    /// enclosing body declared them (`p`, or `r3` from `.reg .b32 r<4>`).
    fn is_register(&self, name: &str) -> bool {
        name.starts_with('%')
            || self
                .reg_scopes
                .iter()
                .flatten()
                .any(|(declared, count)| match count {
                    None => declared == name,
                    Some(n) => name
                        .strip_prefix(declared.as_str())
                        .and_then(|i| i.parse::<u32>().ok())
                        .is_some_and(|i| i < *n),
                })
    }

    /// `@!%p1 bra.uni $L__BB0_1;`
    fn instruction(&mut self) -> Result<Instruction, Diagnostic> {
        let start = self.peek().span;
        let guard = if self.eat(&Tok::At) {
            let negated = self.eat(&Tok::Bang);
            let (register, _) = self.name("a predicate register after `@`")?;
            Some((register, negated))
        } else {
            None
        };
        let token = self.peek().clone();
        let mnemonic = match &token.tok {
            Tok::Word(w) if w.starts_with(|c: char| c.is_ascii_alphabetic()) => w.clone(),
            _ => return Err(self.unexpected("an instruction")),
        };
        self.next();
        let mut parts = mnemonic.split('.');
        let opcode = parts.next().unwrap_or_default().to_string();
        let modifiers: Vec<String> = parts.map(str::to_string).collect();
        let mut operands = Vec::new();
        if self.peek().tok != Tok::Semi {
            loop {
                operands.push(self.operand()?);
                // `%r8|%p2` (shfl, setp): the destination pair is two operands, the
                // predicate right after the register, so the lowering finds it by position.
                if self.eat(&Tok::Pipe) {
                    operands.push(self.operand()?);
                }
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::Semi, "`;` after the instruction")?;
        Ok(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            span: self.span_from(start),
            loc: self.loc,
            inlined_at: self.inlined_at.clone(),
        })
    }

    fn operand(&mut self) -> Result<Operand, Diagnostic> {
        match self.peek().tok {
            Tok::LBracket => self.address(),
            Tok::LBrace => {
                self.next();
                let elements = self.operand_list(Tok::RBrace, "the vector operand")?;
                if elements.is_empty() {
                    return Err(self.unexpected("an operand in the vector `{...}`"));
                }
                Ok(Operand::Vector(elements))
            }
            Tok::LParen => {
                self.next();
                Ok(Operand::List(
                    self.operand_list(Tok::RParen, "the argument list")?,
                ))
            }
            Tok::Bang => {
                self.next();
                Ok(Operand::Not(Box::new(self.simple_operand()?)))
            }
            _ => self.simple_operand(),
        }
    }

    /// Simple operands separated by `,` up to `close` (the opener consumed); empty allowed.
    fn operand_list(&mut self, close: Tok, what: &str) -> Result<Vec<Operand>, Diagnostic> {
        let mut list = Vec::new();
        if self.eat(&close) {
            return Ok(list);
        }
        loop {
            list.push(self.simple_operand()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let closer = if close == Tok::RBrace { "`}`" } else { "`)`" };
        self.expect(close, &format!("`,` or {closer} in {what}"))?;
        Ok(list)
    }

    /// A register, symbol, sink or literal.
    fn simple_operand(&mut self) -> Result<Operand, Diagnostic> {
        let token = self.peek().clone();
        let operand = match token.tok {
            Tok::Minus => {
                self.next();
                return match self.peek().tok {
                    Tok::Int(v) => {
                        self.next();
                        Ok(Operand::Int(v.wrapping_neg()))
                    }
                    Tok::Float { bits, double } => {
                        self.next();
                        Ok(Operand::Float {
                            bits: negate_float(bits, double),
                            double,
                        })
                    }
                    _ => Err(self.unexpected("a number after `-`")),
                };
            }
            Tok::Int(v) => Operand::Int(v),
            Tok::Float { bits, double } => Operand::Float { bits, double },
            Tok::Word(w) if w == "_" => Operand::Sink,
            Tok::Word(w) if !w.starts_with('.') => {
                if self.is_register(&w) {
                    Operand::Reg(w)
                } else {
                    Operand::Symbol(w)
                }
            }
            _ => return Err(self.unexpected("an operand")),
        };
        self.next();
        Ok(operand)
    }

    /// `[%rd4]`, `[%rd4+4]`, `[%rd4+-8]`, `[%rd4-8]`, `[sym+8]`, `[0x100]`; or the texture
    /// tuple `[tex, {%r1}]`.
    fn address(&mut self) -> Result<Operand, Diagnostic> {
        self.next();
        let token = self.peek().clone();
        let base = match token.tok {
            Tok::Word(w) if !w.starts_with('.') && w != "_" => {
                if self.is_register(&w) {
                    Operand::Reg(w)
                } else {
                    Operand::Symbol(w)
                }
            }
            Tok::Int(v) => Operand::Int(v),
            _ => return Err(self.unexpected("a register, a variable or an address after `[`")),
        };
        self.next();
        if self.eat(&Tok::Comma) {
            let mut parts = vec![base];
            loop {
                parts.push(if self.peek().tok == Tok::LBrace {
                    self.operand()?
                } else {
                    self.simple_operand()?
                });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::RBracket, "`,` or `]` in the texture operand")?;
            return Ok(Operand::Texture(parts));
        }
        let offset = if self.eat(&Tok::Plus) {
            self.signed("an integer offset after `+`")?
        } else if self.eat(&Tok::Minus) {
            match self.peek().tok {
                Tok::Int(v) => {
                    self.next();
                    v.wrapping_neg()
                }
                _ => return Err(self.unexpected("an integer offset after `-`")),
            }
        } else {
            0
        };
        self.expect(Tok::RBracket, "`]` to close the address")?;
        Ok(Operand::Address {
            base: Box::new(base),
            offset,
        })
    }
}
