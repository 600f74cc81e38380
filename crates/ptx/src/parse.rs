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

use scopecheck_ir::{Diagnostic, Span};

use crate::ast::{Module, ScalarType, StateSpace, SymbolInit};
use crate::lexer::{self, Tok, Token};

mod body;
mod module;

/// Parses a whole PTX module.
pub fn parse(text: &str) -> Result<Module, Diagnostic> {
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
    lex_error: Option<Diagnostic>,
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
    fn unexpected(&self, expected: &str) -> Diagnostic {
        let token = self.peek();
        if token.tok == Tok::Eof {
            if let Some(e) = &self.lex_error {
                return e.clone();
            }
        }
        Diagnostic::error(format!(
            "expected {expected}, found {}",
            self.describe(token)
        ))
        .at(token.span)
    }

    fn expect(&mut self, tok: Tok, expected: &str) -> Result<Token, Diagnostic> {
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
    fn name(&mut self, expected: &str) -> Result<(String, Span), Diagnostic> {
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
    fn unsigned(&mut self, expected: &str) -> Result<u64, Diagnostic> {
        match self.peek().tok {
            Tok::Int(v) => {
                self.next();
                Ok(v as u64)
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn unsigned32(&mut self, expected: &str) -> Result<u32, Diagnostic> {
        let span = self.peek().span;
        let v = self.unsigned(expected)?;
        u32::try_from(v).map_err(|_| {
            Diagnostic::error(format!(
                "expected {expected}, found `{v}`, which does not fit in 32 bits"
            ))
            .at(span)
        })
    }

    /// An integer literal with an optional `-`.
    fn signed(&mut self, expected: &str) -> Result<i64, Diagnostic> {
        let negative = self.eat(&Tok::Minus);
        match self.peek().tok {
            Tok::Int(v) => {
                self.next();
                Ok(if negative { v.wrapping_neg() } else { v })
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn nesting(&mut self, at: Span, what: &str) -> Result<(), Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(
                Diagnostic::error(format!("{what} nested more than {MAX_DEPTH} deep")).at(at),
            );
        }
        self.depth += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
