//! The PTX parser: module text (as `nvcc -ptx` and NVRTC write it) to the tree of [`ast`].
//!
//! A recursive-descent parser over the tokens of [`lexer`]. Module scope holds the header
//! directives (`.version`, `.target`, `.address_size`, `.file`), variables, and `.entry` /
//! `.func` definitions and declarations; `.pragma` and `.section` (DWARF debug data) are
//! skipped. A body holds `.reg` and variable declarations, labels, instructions and nested
//! `{ ... }` blocks; `.loc` sets the source position later instructions carry.
//!
//! Every error names what was expected and what was found, at the found token's position.
//! Nesting (blocks, initializer braces) is bounded so that no input can exhaust the stack.

use scopecheck_ir::Span;

use crate::ast::{
    Body, Function, Instruction, Module, Operand, Param, RegDecl, ScalarType, StateSpace,
    Statement, SymbolInit, Variable,
};
use crate::lexer::{self, Tok, Token};

/// A syntax error: what was expected, what was found, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    pub message: String,
    pub span: Span,
    /// 1-based, as in `span`.
    pub line: u32,
    /// 1-based, in characters, as in `span`.
    pub column: u32,
}

impl ParseError {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            span,
            line: span.line,
            column: span.column,
        }
    }
}

/// Parses a whole PTX module.
pub fn parse(text: &str) -> Result<Module, ParseError> {
    let (tokens, lex_error) = lexer::tokens(text);
    let mut parser = Parser {
        src: text,
        tokens,
        pos: 0,
        lex_error,
        module: Module {
            version: None,
            target: None,
            address_size: None,
            files: Vec::new(),
            variables: Vec::new(),
            functions: Vec::new(),
        },
        loc: None,
        inlined_at: Vec::new(),
        inlined: std::collections::HashMap::new(),
        reg_scopes: Vec::new(),
        depth: 0,
        registers: 0,
    };
    parser.module()?;
    Ok(parser.module)
}

/// How deep blocks and initializer braces may nest: far beyond anything a compiler writes,
/// well within any thread's stack.
pub const MAX_DEPTH: usize = 64;

/// The most registers one function may declare (`.reg .b64 %rd<N>;` declares N): lowering
/// names each, so `%rd<2147483647>` took 3.2 GB before this bound; NVCC's functions declare
/// hundreds.
pub const MAX_REGISTERS: u64 = 65_536;

/// The most call sites of the `inlined_at` chain a `.loc` keeps (innermost first): the chain
/// only locates code for messages, and each instruction carries a copy.
pub const MAX_INLINED_AT: usize = 64;

/// The performance-tuning and attribute directives of an `.entry` / `.func` header.
const HEADER_DIRECTIVES: &[&str] = &[
    "maxntid",
    "reqntid",
    "minnctapersm",
    "maxnctapersm",
    "maxnreg",
    "maxclusterrank",
    "reqnctapercluster",
    "explicitcluster",
    "blocksareclusters",
    "noreturn",
];

/// Directives that only module scope holds: met in a body, they mean a `}` is missing.
const MODULE_DIRECTIVES: &[&str] = &[
    ".visible",
    ".weak",
    ".common",
    ".entry",
    ".func",
    ".version",
    ".target",
    ".address_size",
    ".section",
];

struct Parser<'a> {
    src: &'a str,
    /// Always ends with `Tok::Eof`.
    tokens: Vec<Token>,
    pos: usize,
    /// The error that stopped the lexer at the final `Eof`, reported when the parser gets there.
    lex_error: Option<ParseError>,
    module: Module,
    /// The position the last `.loc` gave, for the instructions after it.
    loc: Option<(u32, u32, u32)>,
    /// Its call sites, innermost first, when the code it names was inlined.
    inlined_at: Vec<(u32, u32, u32)>,
    /// For each position a `.loc` with `inlined_at` named, the call it was inlined at.
    inlined: std::collections::HashMap<(u32, u32, u32), (u32, u32, u32)>,
    /// Per enclosing body, the registers declared without a `%` (`.reg .pred p, q;`), so that
    /// `p` reads as a register and not as a symbol.
    reg_scopes: Vec<Vec<(String, Option<u32>)>>,
    depth: usize,
    /// The registers the function being read has declared so far ([`MAX_REGISTERS`]).
    registers: u64,
}

/// The state space a declaration directive names.
fn state_space(directive: &str) -> Option<StateSpace> {
    Some(match directive {
        ".global" => StateSpace::Global,
        ".shared" | ".shared::cta" => StateSpace::Shared,
        ".shared::cluster" => StateSpace::SharedCluster,
        ".const" => StateSpace::Const,
        ".local" => StateSpace::Local,
        ".param" => StateSpace::Param,
        _ => return None,
    })
}

/// The type a directive names (`.u32` is `U(32)`); `None` for anything else, the packed and
/// narrow floating types (`.f16x2`, `.bf16`) included.
fn scalar_type(directive: &str) -> Option<ScalarType> {
    if directive == ".pred" {
        return Some(ScalarType::Pred);
    }
    let name = directive.strip_prefix('.')?;
    let kind = name.chars().next()?;
    let bits: u8 = name.get(1..)?.parse().ok()?;
    match (kind, bits) {
        ('b', 8 | 16 | 32 | 64 | 128) => Some(ScalarType::B(bits)),
        ('u', 8 | 16 | 32 | 64) => Some(ScalarType::U(bits)),
        ('s', 8 | 16 | 32 | 64) => Some(ScalarType::S(bits)),
        ('f', 16 | 32 | 64) => Some(ScalarType::F(bits)),
        _ => None,
    }
}

/// A variable's initial values being read: the numbers (0 for an address), the addresses.
type Init = (Vec<i64>, Vec<SymbolInit>);

/// `-x` for a floating literal: its sign bit flipped.
fn negate_float(bits: u64, double: bool) -> u64 {
    bits ^ if double { 1 << 63 } else { 1 << 31 }
}

impl Parser<'_> {
    // ---- Tokens ----

    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, n: usize) -> &Token {
        &self.tokens[(self.pos + n).min(self.tokens.len() - 1)]
    }

    /// The next token, consumed (the final `Eof` stays).
    fn next(&mut self) -> Token {
        let token = self.peek().clone();
        if token.tok != Tok::Eof {
            self.pos += 1;
        }
        token
    }

    fn peek_word(&self) -> Option<&str> {
        match &self.peek().tok {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek().tok == *tok {
            self.next();
            true
        } else {
            false
        }
    }

    fn text(&self, span: Span) -> &str {
        self.src
            .get(span.offset..span.offset + span.len)
            .unwrap_or("")
    }

    /// How a message names a token: "`ld.u32`", "`;`", "the end of the input".
    fn describe(&self, token: &Token) -> String {
        match &token.tok {
            Tok::Eof => "the end of the input".to_string(),
            Tok::Str(s) => format!("the string \"{s}\""),
            _ => format!("`{}`", self.text(token.span)),
        }
    }

    /// "expected {expected}, found {the next token}" at the next token; the lexing error
    /// instead when the next token is where the lexer stopped.
    fn unexpected(&self, expected: &str) -> ParseError {
        let token = self.peek();
        if token.tok == Tok::Eof {
            if let Some(e) = &self.lex_error {
                return e.clone();
            }
        }
        ParseError::new(
            token.span,
            format!("expected {expected}, found {}", self.describe(token)),
        )
    }

    fn expect(&mut self, tok: Tok, expected: &str) -> Result<Token, ParseError> {
        if self.peek().tok == tok {
            Ok(self.next())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// From `start` to the end of the last token consumed.
    fn span_from(&self, start: Span) -> Span {
        let end = self.pos.checked_sub(1).map_or(start.offset, |i| {
            let s = self.tokens[i].span;
            s.offset + s.len
        });
        Span {
            len: end.saturating_sub(start.offset),
            ..start
        }
    }

    /// A name (of a variable, parameter, function, register): a word that is no directive.
    fn name(&mut self, expected: &str) -> Result<(String, Span), ParseError> {
        match self.peek_word() {
            Some(w) if !w.starts_with('.') => {
                let token = self.next();
                let Tok::Word(w) = token.tok else {
                    unreachable!("peek_word saw a word")
                };
                Ok((w, token.span))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    /// An integer literal, without sign.
    fn unsigned(&mut self, expected: &str) -> Result<u64, ParseError> {
        match self.peek().tok {
            Tok::Int(v) => {
                self.next();
                Ok(v as u64)
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn unsigned32(&mut self, expected: &str) -> Result<u32, ParseError> {
        let span = self.peek().span;
        let v = self.unsigned(expected)?;
        u32::try_from(v).map_err(|_| {
            ParseError::new(
                span,
                format!("expected {expected}, found `{v}`, which does not fit in 32 bits"),
            )
        })
    }

    /// An integer literal with an optional `-`.
    fn signed(&mut self, expected: &str) -> Result<i64, ParseError> {
        let negative = self.eat(&Tok::Minus);
        match self.peek().tok {
            Tok::Int(v) => {
                self.next();
                Ok(if negative { v.wrapping_neg() } else { v })
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn nesting(&mut self, at: Span, what: &str) -> Result<(), ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(ParseError::new(
                at,
                format!("{what} nested more than {MAX_DEPTH} deep"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    // ---- Module scope ----

    fn module(&mut self) -> Result<(), ParseError> {
        while self.peek().tok != Tok::Eof {
            self.module_item()?;
        }
        match &self.lex_error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn module_item(&mut self) -> Result<(), ParseError> {
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
                return Err(ParseError::new(
                    token.span,
                    "`.param` at module scope: parameters belong to a function's parameter \
                     list or body",
                ))
            }
            ".visible" | ".weak" | ".extern" | ".common" | ".entry" | ".func" => {
                self.declaration(token.span)?
            }
            w if state_space(w).is_some() => self.declaration(token.span)?,
            w if w.starts_with('.') => {
                return Err(ParseError::new(
                    token.span,
                    format!("unknown directive `{w}` at module scope"),
                ))
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
    fn declaration(&mut self, start: Span) -> Result<(), ParseError> {
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
    fn file_directive(&mut self) -> Result<(), ParseError> {
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
    fn loc_directive(&mut self) -> Result<(), ParseError> {
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
    fn skip_pragma(&mut self) -> Result<(), ParseError> {
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
    fn skip_section(&mut self) -> Result<(), ParseError> {
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
                    return Err(ParseError::new(
                        open.span,
                        format!(
                            "this `{{` of section `{name}` is never closed: expected `}}`, \
                             found the end of the input"
                        ),
                    ));
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

    // ---- Variables ----

    /// `.global .align 4 .b8 table[64] = {...}, other;` (the state space next): one variable
    /// per declarator.
    fn variables(
        &mut self,
        start: Span,
        external: bool,
        linkage: Option<String>,
    ) -> Result<Vec<Variable>, ParseError> {
        let space_token = self.next();
        let space = match &space_token.tok {
            Tok::Word(w) => state_space(w),
            _ => None,
        }
        .ok_or_else(|| ParseError::new(space_token.span, "expected a state space"))?;
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
                        return Err(ParseError::new(
                            self.peek().span,
                            format!("vector variables (`{w}`) are not supported"),
                        ))
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
    fn initializer(&mut self, ty: ScalarType, out: &mut Init) -> Result<(), ParseError> {
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

    fn initial_value(&mut self, ty: ScalarType, out: &mut Init) -> Result<(), ParseError> {
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
    fn symbol_initial_value(&mut self, index: usize) -> Result<SymbolInit, ParseError> {
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

    // ---- Functions ----

    /// `.entry name (params) directives { body }` or `.func (returns) name (params) ...`,
    /// the body replaced by `;` in a declaration.
    fn function(&mut self, start: Span) -> Result<(), ParseError> {
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
                    return Err(ParseError::new(
                        self.peek().span,
                        format!(
                            "unknown directive `{w}` in the header of `{name}`: expected a \
                             performance directive (`.maxntid`, `.reqntid`, ...), `{{` or `;`"
                        ),
                    ));
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
    fn params(&mut self, what: &str) -> Result<Vec<Param>, ParseError> {
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
    fn param(&mut self, what: &str) -> Result<Param, ParseError> {
        let start = self.peek().span;
        match self.peek_word() {
            Some(".param") => {
                self.next();
            }
            Some(".reg") => {
                return Err(ParseError::new(
                    start,
                    format!("`.reg` {what}s are not supported: expected `.param`"),
                ))
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
                    return Err(ParseError::new(
                        here,
                        format!("a second type `{w}` in one {what}"),
                    ));
                }
                self.next();
                ty = Some(t);
            } else {
                return Err(ParseError::new(
                    here,
                    format!(
                        "unexpected `{w}` in a {what}: expected a type, `.ptr`, a state space \
                         after `.ptr`, or `.align`"
                    ),
                ));
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

    // ---- Bodies ----

    /// The statements after `open` (a `{`, already consumed) up to the matching `}`.
    fn body(&mut self, open: Span) -> Result<Body, ParseError> {
        self.nesting(open, "blocks")?;
        self.reg_scopes.push(Vec::new());
        let result = self.body_items(open);
        self.reg_scopes.pop();
        self.depth -= 1;
        result
    }

    fn body_items(&mut self, open: Span) -> Result<Body, ParseError> {
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
                    return Err(ParseError::new(
                        Span { len: 1, ..open },
                        "this `{` is never closed: expected `}`, found the end of the input",
                    ));
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

    fn body_directive(&mut self, body: &mut Body, open: Span) -> Result<(), ParseError> {
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
                return Err(ParseError::new(
                    token.span,
                    format!(
                        "expected `}}` to close the body opened at {}:{}, found `{w}`",
                        open.line, open.column
                    ),
                ))
            }
            w => {
                return Err(ParseError::new(
                    token.span,
                    format!("unknown directive `{w}` in a function body"),
                ))
            }
        }
        Ok(())
    }

    /// `.reg .b32 %r<9>;` or `.reg .pred p, q;`.
    fn reg_decl(&mut self) -> Result<RegDecl, ParseError> {
        let start = self.next().span;
        let ty = match self.peek_word() {
            Some(w) if scalar_type(w).is_some() => {
                let ty = scalar_type(w);
                self.next();
                ty.unwrap_or(ScalarType::Pred)
            }
            Some(w @ (".v2" | ".v4" | ".v8")) => {
                return Err(ParseError::new(
                    self.peek().span,
                    format!("vector registers (`{w}`) are not supported"),
                ))
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
                return Err(ParseError::new(
                    if count.is_some() { count_span } else { name_span },
                    format!(
                        "too many registers: with `{name}` this function declares {} of them, more than {MAX_REGISTERS}",
                        self.registers
                    ),
                ));
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
    fn instruction(&mut self) -> Result<Instruction, ParseError> {
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

    fn operand(&mut self) -> Result<Operand, ParseError> {
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
    fn operand_list(&mut self, close: Tok, what: &str) -> Result<Vec<Operand>, ParseError> {
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
    fn simple_operand(&mut self) -> Result<Operand, ParseError> {
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
    fn address(&mut self) -> Result<Operand, ParseError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"//
// Generated by NVIDIA NVVM Compiler
//
// Compiler Build ID: CL-34097967
// Cuda compilation tools, release 12.9, V12.9.86
// Based on NVVM 7.0.1
//

.version 8.8
.target sm_90
.address_size 64

	// .globl	_Z7produceriPiS_
.global .align 4 .u32 counter;
.global .align 4 .b8 table[64];
.shared .align 4 .b8 _ZZ4kernE3buf[128];
.extern .shared .align 16 .b8 dyn[];
.const .align 4 .b8 lut[8] = {1, 0, 0, 0, 2, 0, 0, 0};

.visible .entry _Z7produceriPiS_(
	.param .u32 _Z7produceriPiS__param_0,
	.param .u64 .ptr .global .align 4 _Z7produceriPiS__param_1,
	.param .u64 _Z7produceriPiS__param_2
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<7>;
	.loc	1 12 0
	.file	1 "/tmp/kernel.cu"

	ld.param.u32 	%r1, [_Z7produceriPiS__param_0];
	ld.param.u64 	%rd1, [_Z7produceriPiS__param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r5, %r2, %r3, %r4;
	mul.wide.s32 	%rd3, %r5, 4;
	add.s64 	%rd4, %rd2, %rd3;
	setp.ne.s32 	%p1, %r5, 0;
	@%p1 bra 	$L__BB0_2;
	st.release.gpu.global.b32 	[%rd4+4], %r1;
	atom.global.cas.b32 	%r6, [%rd4], 0, 1;
	atom.relaxed.gpu.global.add.u32 	%r7, [counter], 1;
	red.global.add.u32 	[%rd4], 1;
	ld.volatile.global.v4.u32 	{%r1, %r2, %r3, %r4}, [%rd4];
	@!%p2 bra.uni 	$L__BB0_1;
	membar.gl;
	fence.acq_rel.gpu;
	bar.sync 	0;
	barrier.sync.aligned 	1, 64;
	vote.sync.ballot.b32 	%r8, %p1, -1;
	shfl.sync.bfly.b32	%r8|%p2, %r8, 1, 31, -1;
	selp.b32 	%r8, 1, 0, %p1;
	mov.b32 	%r8, 0f3F800000;
	mov.u64 	%rd5, _ZZ4kernE3buf;
	cvta.shared.u64 	%rd6, %rd5;
	st.shared.u32 	[_ZZ4kernE3buf+8], %r8;
	nanosleep.u32 	100;
$L__BB0_2:
	{ // callseq 0, 0
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd4;
	.param .b32 retval0;
	call.uni (retval0), _Z6helperPi, (param0);
	ld.param.b32 	%r8, [retval0+0];
	} // callseq 0
	ret;
}
.func  (.param .b32 func_retval0) _Z6helperPi(
	.param .b64 _Z6helperPi_param_0
)
{
	.reg .b32 %r<2>;
	ld.param.u64 %rd1, [_Z6helperPi_param_0];
	st.param.b32 [func_retval0+0], %r1;
	ret;
}
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
"#;

    fn reg(name: &str) -> Operand {
        Operand::Reg(name.to_string())
    }

    fn sym(name: &str) -> Operand {
        Operand::Symbol(name.to_string())
    }

    fn addr(base: Operand, offset: i64) -> Operand {
        Operand::Address {
            base: Box::new(base),
            offset,
        }
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// The span of the first `needle` in `text`, `needle` one line long.
    fn span_of(text: &str, needle: &str) -> Span {
        let offset = text.find(needle).expect("needle in text");
        let before = &text[..offset];
        let line = before.matches('\n').count() as u32 + 1;
        let column = before.rsplit('\n').next().unwrap().chars().count() as u32 + 1;
        Span {
            offset,
            len: needle.len(),
            line,
            column,
        }
    }

    fn instructions(statements: &[Statement]) -> Vec<&Instruction> {
        statements
            .iter()
            .filter_map(|s| match s {
                Statement::Instruction(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    /// The instructions of a one-kernel module whose body is `body`.
    fn body_of(body: &str) -> Body {
        let text = format!(".version 8.8\n.target sm_90\n.entry k()\n{{\n{body}\n}}\n");
        let mut module = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        module.functions.remove(0).body.unwrap()
    }

    fn operands_of(instruction: &str) -> Vec<Operand> {
        let body = body_of(&format!(".reg .b64 %rd<9>;\n{instruction}"));
        match &body.statements[..] {
            [Statement::Instruction(i)] => i.operands.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn error(text: &str) -> ParseError {
        match parse(text) {
            Err(e) => e,
            Ok(m) => panic!("parsed: {m:?}"),
        }
    }

    #[test]
    fn example_header_files_and_variables() {
        let m = parse(EXAMPLE).unwrap();
        assert_eq!(m.version.as_deref(), Some("8.8"));
        assert_eq!(m.target.as_deref(), Some("sm_90"));
        assert_eq!(m.address_size, Some(64));
        assert_eq!(m.files, vec![(1, "/tmp/kernel.cu".to_string())]);
        let summary: Vec<_> = m
            .variables
            .iter()
            .map(|v| {
                (
                    v.space,
                    v.external,
                    v.align,
                    v.ty,
                    v.name.as_str(),
                    v.dims.clone(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    StateSpace::Global,
                    false,
                    Some(4),
                    ScalarType::U(32),
                    "counter",
                    vec![]
                ),
                (
                    StateSpace::Global,
                    false,
                    Some(4),
                    ScalarType::B(8),
                    "table",
                    vec![Some(64)]
                ),
                (
                    StateSpace::Shared,
                    false,
                    Some(4),
                    ScalarType::B(8),
                    "_ZZ4kernE3buf",
                    vec![Some(128)]
                ),
                (
                    StateSpace::Shared,
                    true,
                    Some(16),
                    ScalarType::B(8),
                    "dyn",
                    vec![None]
                ),
                (
                    StateSpace::Const,
                    false,
                    Some(4),
                    ScalarType::B(8),
                    "lut",
                    vec![Some(8)]
                ),
            ]
        );
        let lut = &m.variables[4];
        assert_eq!(lut.init, vec![1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(lut.linkage, None);
        let decl = ".const .align 4 .b8 lut[8] = {1, 0, 0, 0, 2, 0, 0, 0};";
        assert_eq!(lut.span, span_of(EXAMPLE, decl));
        assert!(m.variables[..4].iter().all(|v| v.init.is_empty()));
    }

    #[test]
    fn example_functions_and_params() {
        let m = parse(EXAMPLE).unwrap();
        let names: Vec<_> = m
            .functions
            .iter()
            .map(|f| (f.entry, f.name.as_str(), f.body.is_some()))
            .collect();
        assert_eq!(
            names,
            vec![
                (true, "_Z7produceriPiS_", true),
                (false, "_Z6helperPi", true),
                (false, "vprintf", false)
            ]
        );
        let kernel = &m.functions[0];
        assert_eq!(
            kernel.directives,
            vec![("maxntid".to_string(), vec![256, 1, 1])]
        );
        assert!(kernel.returns.is_empty());
        assert_eq!(
            kernel.params[1],
            Param {
                ty: ScalarType::U(64),
                name: "_Z7produceriPiS__param_1".to_string(),
                ptr_space: Some(StateSpace::Global),
                align: Some(4),
                array: None,
                span: span_of(
                    EXAMPLE,
                    ".param .u64 .ptr .global .align 4 _Z7produceriPiS__param_1"
                ),
            }
        );
        let plain: Vec<_> = kernel
            .params
            .iter()
            .map(|p| (p.ty, p.ptr_space, p.align, p.array))
            .collect();
        assert_eq!(
            plain,
            vec![
                (ScalarType::U(32), None, None, None),
                (ScalarType::U(64), Some(StateSpace::Global), Some(4), None),
                (ScalarType::U(64), None, None, None),
            ]
        );
        assert_eq!(kernel.span.line, 20);
        assert_eq!(
            kernel.span.offset + kernel.span.len,
            EXAMPLE.find("}\n.func").unwrap() + 1
        );

        let helper = &m.functions[1];
        assert_eq!(
            (
                helper.returns.len(),
                helper.returns[0].name.as_str(),
                helper.returns[0].ty
            ),
            (1, "func_retval0", ScalarType::B(32))
        );
        assert_eq!(helper.params[0].name, "_Z6helperPi_param_0");
        let vprintf = &m.functions[2];
        assert_eq!(vprintf.returns[0].name, "func_retval0");
        let params: Vec<_> = vprintf.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(params, vec!["vprintf_param_0", "vprintf_param_1"]);
        assert_eq!(vprintf.body, None);
    }

    #[test]
    fn example_body_declarations_and_instructions() {
        let m = parse(EXAMPLE).unwrap();
        let body = m.functions[0].body.as_ref().unwrap();
        let regs: Vec<_> = body.regs.iter().map(|r| (r.ty, r.names.clone())).collect();
        assert_eq!(
            regs,
            vec![
                (ScalarType::Pred, vec![("%p".to_string(), Some(3))]),
                (ScalarType::B(32), vec![("%r".to_string(), Some(9))]),
                (ScalarType::B(64), vec![("%rd".to_string(), Some(7))]),
            ]
        );
        assert!(body.locals.is_empty());
        assert_eq!(body.statements.len(), 32);
        let all = instructions(&body.statements);
        assert!(all.iter().all(|i| i.loc == Some((1, 12, 0))));

        // `@%p1 bra $L__BB0_2;`, exactly.
        assert_eq!(
            *all[10],
            Instruction {
                guard: Some(("%p1".to_string(), false)),
                opcode: "bra".to_string(),
                modifiers: vec![],
                operands: vec![sym("$L__BB0_2")],
                span: span_of(EXAMPLE, "@%p1 bra \t$L__BB0_2;"),
                loc: Some((1, 12, 0)),
                inlined_at: Vec::new(),
            }
        );
        assert_eq!((all[10].span.line, all[10].span.column), (43, 2));
        let negated = all[16];
        assert_eq!(negated.guard, Some(("%p2".to_string(), true)));
        assert_eq!(
            (negated.opcode.as_str(), negated.modifiers.clone()),
            ("bra", strings(&["uni"]))
        );

        let st = all[11];
        assert_eq!(st.opcode, "st");
        assert_eq!(st.modifiers, strings(&["release", "gpu", "global", "b32"]));
        assert_eq!(st.operands, vec![addr(reg("%rd4"), 4), reg("%r1")]);

        assert_eq!(
            all[12].operands,
            vec![
                reg("%r6"),
                addr(reg("%rd4"), 0),
                Operand::Int(0),
                Operand::Int(1)
            ]
        );
        assert_eq!(all[13].operands[1], addr(sym("counter"), 0));
        assert_eq!(all[3].operands, vec![reg("%r2"), reg("%ctaid.x")]);
        assert_eq!(all[0].operands[1], addr(sym("_Z7produceriPiS__param_0"), 0));
        assert_eq!(
            all[15].operands,
            vec![
                Operand::Vector(vec![reg("%r1"), reg("%r2"), reg("%r3"), reg("%r4")]),
                addr(reg("%rd4"), 0)
            ]
        );
        assert_eq!(
            all[15].modifiers,
            strings(&["volatile", "global", "v4", "u32"])
        );
        assert_eq!(
            (all[17].opcode.as_str(), all[17].operands.len()),
            ("membar", 0)
        );
        assert_eq!(all[18].modifiers, strings(&["acq_rel", "gpu"]));
        assert_eq!(
            all[21].operands,
            vec![reg("%r8"), reg("%p1"), Operand::Int(-1)]
        );
        // The shfl destination pair: two operands, the predicate second.
        assert_eq!(
            all[22].operands,
            vec![
                reg("%r8"),
                reg("%p2"),
                reg("%r8"),
                Operand::Int(1),
                Operand::Int(31),
                Operand::Int(-1)
            ]
        );
        assert_eq!(
            all[24].operands[1],
            Operand::Float {
                bits: 0x3F80_0000,
                double: false
            }
        );
        assert_eq!(all[25].operands[1], sym("_ZZ4kernE3buf"));
        assert_eq!(all[27].operands[0], addr(sym("_ZZ4kernE3buf"), 8));
        assert_eq!(
            body.statements[29],
            Statement::Label(
                "$L__BB0_2".to_string(),
                Span {
                    len: 9,
                    ..span_of(EXAMPLE, "$L__BB0_2:")
                }
            )
        );
        let ret = instructions(&body.statements[31..]);
        assert_eq!((ret[0].opcode.as_str(), ret[0].span.line), ("ret", 70));
    }

    #[test]
    fn example_call_block() {
        let m = parse(EXAMPLE).unwrap();
        let body = m.functions[0].body.as_ref().unwrap();
        let Statement::Block(block) = &body.statements[30] else {
            panic!("{:?}", body.statements[30]);
        };
        let locals: Vec<_> = block
            .locals
            .iter()
            .map(|v| (v.space, v.ty, v.name.as_str()))
            .collect();
        assert_eq!(
            locals,
            vec![
                (StateSpace::Param, ScalarType::B(64), "param0"),
                (StateSpace::Param, ScalarType::B(32), "retval0")
            ]
        );
        let calls = instructions(&block.statements);
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].operands, vec![addr(sym("param0"), 0), reg("%rd4")]);
        assert_eq!(
            (calls[1].opcode.as_str(), calls[1].modifiers.clone()),
            ("call", strings(&["uni"]))
        );
        assert_eq!(
            calls[1].operands,
            vec![
                Operand::List(vec![sym("retval0")]),
                sym("_Z6helperPi"),
                Operand::List(vec![sym("param0")])
            ]
        );
        assert_eq!(calls[2].operands, vec![reg("%r8"), addr(sym("retval0"), 0)]);
        assert!(calls.iter().all(|i| i.loc == Some((1, 12, 0))));

        let helper = m.functions[1].body.as_ref().unwrap();
        let helper_code = instructions(&helper.statements);
        // A `.loc` does not carry over into the next function.
        assert!(helper_code.iter().all(|i| i.loc.is_none()));
        assert_eq!(helper_code[1].operands[0], addr(sym("func_retval0"), 0));
    }

    #[test]
    fn immediates_in_every_form() {
        let ops = operands_of(
            "mov.b64 %rd1, 12, -12, 0x1F, 0X1f, 017, 0b101, 4294967295U, 0xFFFFFFFFFFFFFFFF, \
             0f3F800000, 0d3FF0000000000000, -0f3F800000, 0, 1.5;",
        );
        assert_eq!(
            ops,
            vec![
                reg("%rd1"),
                Operand::Int(12),
                Operand::Int(-12),
                Operand::Int(31),
                Operand::Int(31),
                Operand::Int(15),
                Operand::Int(5),
                Operand::Int(4_294_967_295),
                Operand::Int(-1),
                Operand::Float {
                    bits: 0x3F80_0000,
                    double: false
                },
                Operand::Float {
                    bits: 0x3FF0_0000_0000_0000,
                    double: true
                },
                Operand::Float {
                    bits: 0xBF80_0000,
                    double: false
                },
                Operand::Int(0),
                Operand::Float {
                    bits: 1.5f64.to_bits(),
                    double: true
                },
            ]
        );
    }

    #[test]
    fn addresses_sinks_lists_and_negation() {
        assert_eq!(
            operands_of(
                "ld.u32 _, [%rd4+-8], [%rd4-8], [%rd4 + 0x10], [sym+8], [sym], [%rd4], [0x100];"
            ),
            vec![
                Operand::Sink,
                addr(reg("%rd4"), -8),
                addr(reg("%rd4"), -8),
                addr(reg("%rd4"), 16),
                addr(sym("sym"), 8),
                addr(sym("sym"), 0),
                addr(reg("%rd4"), 0),
                addr(Operand::Int(256), 0),
            ]
        );
        assert_eq!(
            operands_of("tex.2d.v4.s32.f32 {%r1, _, _, _}, [t, smp, {%f1, %f2}];"),
            vec![
                Operand::Vector(vec![
                    reg("%r1"),
                    Operand::Sink,
                    Operand::Sink,
                    Operand::Sink
                ]),
                Operand::Texture(vec![
                    sym("t"),
                    sym("smp"),
                    Operand::Vector(vec![reg("%f1"), reg("%f2")])
                ])
            ]
        );
        assert_eq!(
            operands_of("and.pred %p1, !%p2, %p3;"),
            vec![reg("%p1"), Operand::Not(Box::new(reg("%p2"))), reg("%p3")]
        );
        assert_eq!(
            operands_of("call.uni _Z3foov, ();"),
            vec![sym("_Z3foov"), Operand::List(vec![])]
        );
        assert_eq!(
            operands_of("mov.b64 {%r1, _}, %rd1;"),
            vec![
                Operand::Vector(vec![reg("%r1"), Operand::Sink]),
                reg("%rd1")
            ]
        );
        assert_eq!(
            operands_of("setp.lt.s32 %p1|%p2, %r1, %r2;"),
            vec![reg("%p1"), reg("%p2"), reg("%r1"), reg("%r2")]
        );
    }

    #[test]
    fn double_colon_qualifiers_stay_whole() {
        let body = body_of(
            "ld.shared::cluster.u32 %r1, [%r2];\n\
             mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], %r2;",
        );
        let all = instructions(&body.statements);
        assert_eq!(all[0].modifiers, strings(&["shared::cluster", "u32"]));
        assert_eq!(
            (all[1].opcode.as_str(), all[1].modifiers.clone()),
            (
                "mbarrier",
                strings(&["try_wait", "parity", "shared::cta", "b64"])
            )
        );
    }

    #[test]
    fn plain_register_names_and_locals() {
        let body = body_of(
            ".reg .pred p, q;\n.reg .b32 r<3>;\n.local .align 8 .b8 __local_depot0[32];\n\
             .shared .u32 s;\nsetp.eq.u32 p, r2, r3;\n@!q bra L;\nL:\nmov.u32 r2, s;",
        );
        assert_eq!(
            body.regs[0].names,
            vec![("p".to_string(), None), ("q".to_string(), None)]
        );
        assert_eq!(body.regs[1].names, vec![("r".to_string(), Some(3))]);
        let locals: Vec<_> = body
            .locals
            .iter()
            .map(|v| (v.space, v.name.as_str(), v.dims.clone(), v.align))
            .collect();
        assert_eq!(
            locals,
            vec![
                (StateSpace::Local, "__local_depot0", vec![Some(32)], Some(8)),
                (StateSpace::Shared, "s", vec![], None)
            ]
        );
        let all = instructions(&body.statements);
        // `r3` is beyond `r<3>` (r0..r2): a symbol.
        assert_eq!(all[0].operands, vec![reg("p"), reg("r2"), sym("r3")]);
        assert_eq!(all[1].guard, Some(("q".to_string(), true)));
        assert_eq!(all[2].operands, vec![reg("r2"), sym("s")]);
        assert!(matches!(&body.statements[2], Statement::Label(l, _) if l == "L"));
    }

    #[test]
    fn loc_with_inlining_context_comments_pragmas_and_sections() {
        let text = "/* header\n comment */ .version 7.8 // trailing\n.target sm_90a, debug\n\
            .address_size 64\n.file 1 \"a.cu\", 1700000000, 1234\n.file 2 \"b.h\"\n\
            .weak .func f()\n.noreturn\n{\n.pragma \"nounroll\";\n\
            .loc 2 5 3, function_name $L__info_string0, inlined_at 1 12 7\n\
            exit;\n.loc 2 40 1, function_name $L__info_string1, inlined_at 2 5 3\ntrap;\n\
            .loc 1 9 1\nret;\n}\n\
            .section .debug_info\n{\n.b32 $L__end-$L__start\n.b8 1, 2 // c\n{ .b8 3 }\n}\n\
            .section .debug_abbrev { }\n.pragma \"x\", \"y\";\n\
            .visible .global .attribute(.managed) .align 8 .u64 g = 5, h[2] = {-1, 0x10};";
        let m = parse(text).unwrap();
        assert_eq!(m.version.as_deref(), Some("7.8"));
        assert_eq!(m.target.as_deref(), Some("sm_90a"));
        assert_eq!(
            m.files,
            vec![(1, "a.cu".to_string()), (2, "b.h".to_string())]
        );
        let f = &m.functions[0];
        assert_eq!(f.directives, vec![("noreturn".to_string(), vec![])]);
        let all = instructions(&f.body.as_ref().unwrap().statements);
        let locs: Vec<_> = all
            .iter()
            .map(|i| (i.opcode.as_str(), i.loc, i.inlined_at.clone()))
            .collect();
        // Inlining nests: the second `.loc` was inlined at the first, itself inlined at
        // a.cu line 12: its chain runs b.h line 5, then a.cu line 12.
        assert_eq!(
            locs,
            vec![
                ("exit", Some((2, 5, 3)), vec![(1, 12, 7)]),
                ("trap", Some((2, 40, 1)), vec![(2, 5, 3), (1, 12, 7)]),
                ("ret", Some((1, 9, 1)), vec![])
            ]
        );
        let vars: Vec<_> = m
            .variables
            .iter()
            .map(|v| {
                (
                    v.name.as_str(),
                    v.linkage.as_deref(),
                    v.align,
                    v.dims.clone(),
                    v.init.clone(),
                )
            })
            .collect();
        assert_eq!(
            vars,
            vec![
                ("g", Some("visible"), Some(8), vec![], vec![5]),
                ("h", Some("visible"), Some(8), vec![Some(2)], vec![-1, 16])
            ]
        );
    }

    #[test]
    fn struct_params_b128_and_float_initializers() {
        let text = ".const .f32 one = 1.0;\n.const .f64 two[2] = {0f3F800000, -2.0};\n\
            .global .b128 wide;\n\
            .entry k(.param .align 8 .b8 s[16], .param .u64 .ptr .align 1 p)\n\
            .reqntid 32 .minnctapersm 2\n{ ret; }";
        let m = parse(text).unwrap();
        assert_eq!(m.variables[0].init, vec![i64::from(1.0f32.to_bits())]);
        assert_eq!(
            m.variables[1].init,
            vec![1.0f64.to_bits() as i64, (-2.0f64).to_bits() as i64]
        );
        assert_eq!(m.variables[2].ty, ScalarType::B(128));
        let k = &m.functions[0];
        let params: Vec<_> = k
            .params
            .iter()
            .map(|p| (p.ty, p.ptr_space, p.align, p.array))
            .collect();
        assert_eq!(
            params,
            vec![
                (ScalarType::B(8), None, Some(8), Some(16)),
                (ScalarType::U(64), Some(StateSpace::Generic), Some(1), None)
            ]
        );
        assert_eq!(
            k.directives,
            vec![
                ("reqntid".to_string(), vec![32]),
                ("minnctapersm".to_string(), vec![2])
            ]
        );
    }

    #[test]
    fn address_initial_values() {
        let text = ".global .align 4 .u32 x;\n.global .align 8 .u64 px = generic(x);\n\
            .global .align 8 .u64 tab[3] = {_Z2f1i, 7, generic(x)+8};\n.global .u64 q = x-4;";
        let m = parse(text).unwrap();
        let init = |i: usize| {
            (
                m.variables[i].init.clone(),
                m.variables[i].init_symbols.clone(),
            )
        };
        let at = |index, symbol: &str, offset, generic| SymbolInit {
            index,
            symbol: symbol.to_string(),
            offset,
            generic,
        };
        assert_eq!(init(0), (vec![], vec![]));
        assert_eq!(init(1), (vec![0], vec![at(0, "x", 0, true)]));
        assert_eq!(
            init(2),
            (
                vec![0, 7, 0],
                vec![at(0, "_Z2f1i", 0, false), at(2, "x", 8, true)]
            )
        );
        assert_eq!(init(3), (vec![0], vec![at(0, "x", -4, false)]));
    }

    #[test]
    fn error_missing_semicolon() {
        let e = error(".entry k()\n{\n\tmov.u32 %r1, %r2\n}\n");
        assert_eq!(e.message, "expected `;` after the instruction, found `}`");
        assert_eq!((e.line, e.column), (4, 1));
        assert_eq!(
            e.to_string(),
            "4:1: expected `;` after the instruction, found `}`"
        );
        let e = error(".entry k()\n{\n\tmov.u32 %r1, %r2\n\tret;\n}\n");
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (4, 2, "expected `;` after the instruction, found `ret`")
        );
        let e = error(".global .u32 x\n.global .u32 y;");
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (
                2,
                1,
                "expected `;` after the variable declaration, found `.global`"
            )
        );
    }

    #[test]
    fn error_unknown_module_directive() {
        let e = error(".version 8.8\n  .texref t;\n");
        assert_eq!(e.message, "unknown directive `.texref` at module scope");
        assert_eq!((e.line, e.column, e.span.len), (2, 3, 7));
        let e = error(".version 8.8\nmov.u32 %r1, 0;");
        assert_eq!((e.line, e.column), (2, 1));
        assert!(
            e.message.starts_with("expected a directive"),
            "{}",
            e.message
        );
        assert!(e.message.ends_with("found `mov.u32`"), "{}", e.message);
        let e = error(".entry k() { .maxntid 1; }");
        assert_eq!(e.message, "unknown directive `.maxntid` in a function body");
    }

    #[test]
    fn error_unterminated_brace() {
        let e = error(".entry k()\n  {\n\tret;\n");
        assert_eq!(
            e.message,
            "this `{` is never closed: expected `}`, found the end of the input"
        );
        assert_eq!((e.line, e.column, e.span.len), (2, 3, 1));
        let e = error(".entry k()\n{\n\tret;\n.entry j() { ret; }");
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (
                4,
                1,
                "expected `}` to close the body opened at 2:1, found `.entry`"
            )
        );
        let e = error(".section .debug_info {\n.b8 1\n");
        assert_eq!((e.line, e.column), (1, 22));
        assert!(e.message.contains("never closed"), "{}", e.message);
    }

    #[test]
    fn error_bad_number() {
        let e = error(".entry k()\n{\n\tadd.u32 %r1, %r2, 0x1G;\n}\n");
        assert_eq!(
            e.message,
            "bad number `0x1G`: `g` is not a hexadecimal digit"
        );
        assert_eq!((e.line, e.column, e.span.len), (3, 20, 4));
        let e = error(".global .b8 a[09];");
        assert_eq!((e.line, e.column), (1, 15));
        assert_eq!(e.message, "bad number `09`: `9` is not a octal digit");
    }

    #[test]
    fn earlier_syntax_error_wins_over_later_lexing_error() {
        let e = error(".entry k()\n{\n\tret\n}\n#");
        assert_eq!((e.line, e.column), (4, 1));
        let e = error(".entry k()\n{\n\tret;\n}\n#");
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (5, 1, "unexpected character `#`")
        );
    }

    #[test]
    fn other_errors_name_what_was_expected() {
        let cases = [
            (".entry k( .param x )", "expected a type (`.u32`, `.b64`, ...) for the parameter, found `x`"),
            (".entry k() { ld.u32 %r1, [%rd1+%r2]; }", "expected an integer offset after `+`, found `%r2`"),
            (".entry k() { ld.u32 %r1, [%rd1; }", "expected `]` to close the address, found `;`"),
            (".entry k() { @!1 bra L; }", "expected a predicate register after `@`, found `1`"),
            (".entry k() { .reg .b32 %r<x>; }", "expected a register count after `<`, found `x`"),
            (".entry k() { mov.u32 %r1, .u32; }", "expected an operand, found `.u32`"),
            (".entry k() .foo { }", "unknown directive `.foo` in the header of `k`: expected a performance directive (`.maxntid`, `.reqntid`, ...), `{` or `;`"),
            (".global .u64 p = generic(1);", "expected a variable name inside `generic(`, found `1`"),
            (".global .u64 p = {.u32};", "expected an initial value (a number, a variable or function, or `generic(...)`), found `.u32`"),
            (".global .v4 .f32 x;", "vector variables (`.v4`) are not supported"),
            (".global .f16x2 x;", "expected a type (`.b8`, `.u32`, `.s64`, `.f32`, ...) in the variable declaration, found `.f16x2`"),
            (".address_size 99999999999", "expected an address size after `.address_size`, found `99999999999`, which does not fit in 32 bits"),
            (".file 1 \"a.cu", "unterminated string: this `\"` has no closing `\"` on its line"),
            (".version 8.8\n/* open", "unterminated comment: this `/*` has no closing `*/`"),
            (".entry k() { ret; }}", "expected a directive (`.version`, `.target`, `.entry`, `.func`, a variable declaration), found `}`"),
            (".visible .reg .b32 r;", "expected `.entry`, `.func` or a state space (`.global`, `.shared`, `.const`, `.local`), found `.reg`"),
            (".param .u32 p;", "`.param` at module scope: parameters belong to a function's parameter list or body"),
        ];
        for (text, message) in cases {
            assert_eq!(error(text).message, message, "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = format!(".entry k() {}{}", "{".repeat(10_000), "}".repeat(10_000));
        let e = error(&text);
        assert_eq!(
            e.message,
            format!("blocks nested more than {MAX_DEPTH} deep")
        );
        let text = format!(
            ".global .u32 x[1] = {}1{};",
            "{".repeat(10_000),
            "}".repeat(10_000)
        );
        assert!(error(&text)
            .message
            .starts_with("initializer braces nested"));
    }

    #[test]
    fn every_truncation_of_the_example_parses_or_errs_without_panicking() {
        let mut errors = 0;
        for (end, _) in EXAMPLE.char_indices() {
            match parse(&EXAMPLE[..end]) {
                Ok(_) => {}
                Err(e) => {
                    errors += 1;
                    // The position is inside the text (or just past it).
                    assert!(e.span.offset <= end, "{end}: {e}");
                    assert!(e.line >= 1 && e.column >= 1);
                }
            }
        }
        assert!(errors > EXAMPLE.len() / 2);
    }

    /// Pieces of PTX that, shuffled, reach deep into the parser.
    const SOUP: &[&str] = &[
        ".entry",
        ".func",
        ".visible",
        ".extern",
        ".global",
        ".shared",
        ".param",
        ".reg",
        ".b32",
        ".u64",
        ".pred",
        ".ptr",
        ".align",
        "4",
        "-1",
        "0f3F800000",
        ".loc",
        "1",
        ".file",
        "\"a.cu\"",
        ".section",
        ".pragma",
        ".maxntid",
        "k",
        "%r<3>",
        "%r1",
        "p",
        "_",
        "[",
        "]",
        "{",
        "}",
        "(",
        ")",
        ",",
        ";",
        ":",
        "@",
        "!",
        "|",
        "+",
        "-",
        "=",
        "<",
        ">",
        "ld.u32",
        "bra",
        "$L1",
        "\n",
        ".callprototype",
        ".attribute",
    ];

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "[ -~\t\né]{0,200}") {
            let _ = parse(&text);
        }

        #[test]
        fn token_soup_never_panics(words in proptest::collection::vec(proptest::sample::select(SOUP), 0..60)) {
            let text = words.join(" ");
            if let Err(e) = parse(&text) {
                proptest::prop_assert!(e.span.offset <= text.len());
            }
        }

        #[test]
        fn mutated_example_never_panics(at in 0..EXAMPLE.len(), cut in 0usize..40, insert in "[ -~\n]{0,8}") {
            let at = (0..=at).rev().find(|&i| EXAMPLE.is_char_boundary(i)).unwrap_or(0);
            let end = (at + cut..=EXAMPLE.len()).find(|&i| EXAMPLE.is_char_boundary(i)).unwrap_or(EXAMPLE.len());
            let text = format!("{}{}{}", &EXAMPLE[..at], insert, &EXAMPLE[end..]);
            if let Err(e) = parse(&text) {
                proptest::prop_assert!(e.span.offset + e.span.len <= text.len());
            }
        }
    }
}
