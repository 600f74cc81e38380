//! The PTX dialect: header, description, initial state, placement row and instruction table.
//!
//! The [`Parser`] holds the token stream and the program being built; [`crate::instr`] and
//! [`crate::condition`] add methods to it for one instruction and for the condition.
//!
//! Names are resolved as they are met: a location is created at its first mention (initial
//! state first, then code in row order), a register at its first mention in its thread (initial
//! state first). Branch targets are resolved once the whole table is read, since a label may
//! come after its use.

use crate::lexer::{Lexer, Tok, Token};
use crate::Test;
use scopecheck_ir::{
    Arch, Array, Condition, DevicePlacement, Diagnostic, Instr, InstrKind, IntType, LocId,
    Location, MemorySpace, Observable, Placement, Program, RegId, Span, Thread, Value,
};

/// Parses a PTX test; `lexer` stands just after the `PTX` word.
pub(crate) fn parse(mut lexer: Lexer<'_>) -> Result<Test, Diagnostic> {
    let src = lexer.source();
    let (name, name_span) = lexer.rest_of_line();
    if name.is_empty() {
        return Err(
            Diagnostic::error("expected the test name after `PTX` on the header line")
                .at(name_span)
                .expecting(&["a test name"]),
        );
    }
    let tokens = lexer.tokens()?;
    let mut p = Parser::new(src, tokens);
    let program = p.program(name)?;
    Ok(Test {
        program,
        warnings: Vec::new(),
        docs: std::mem::take(&mut p.docs),
        options: crate::option_words(src, &lexer.comments),
    })
}

/// A branch whose label is resolved after the table is read.
struct Fixup {
    instr: usize,
    label: String,
    span: Span,
}

/// A thread under construction.
pub(crate) struct ThreadState {
    pub(crate) thread: Thread,
    labels: Vec<(String, usize)>,
    fixups: Vec<Fixup>,
    /// Memory accesses written with a type suffix: instruction index, type, its span.
    typed: Vec<(usize, IntType, Span)>,
}

/// Where the placement row put a thread before clusters are numbered.
pub(crate) enum RawPlacement {
    Host,
    Device {
        warp: Option<u32>,
        cta: u32,
        cluster: Option<(u32, Span)>,
        gpu: u32,
    },
}

/// A register initialised in the initial state, checked once the threads are known.
struct RegInit {
    thread: u32,
    thread_span: Span,
    reg: String,
    value: Value,
    span: Span,
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    /// Returned by `peek` past the end, so that no lookahead can index out of bounds.
    eof: Token,
    /// The span of the last token consumed, for spans that end there.
    prev: Span,
    pub(crate) locations: Vec<Location>,
    /// The arrays of the initial state (`int a[2]`, `a={1,2}`), whose elements are the
    /// locations `a[0]`, `a[1]`, ...
    pub(crate) arrays: Vec<Array>,
    pub(crate) threads: Vec<ThreadState>,
    /// Current nesting depth of the condition, bounded so that `((((...` cannot overflow the
    /// stack.
    pub(crate) depth: usize,
    /// Whether any identifier may name a register in the condition (the C dialect, whose
    /// registers are the threads' local variables), not only `r<digits>`.
    any_register_name: bool,
    /// The type suffix of the access instruction just parsed, if it had one.
    pub(crate) access_type: Option<(IntType, Span)>,
    /// The quoted strings after the description.
    docs: Vec<String>,
}

/// Which tokens start the part after the instruction table.
const CONDITION_WORDS: &[&str] = &["exists", "forall", "locations"];

impl<'a> Parser<'a> {
    fn new(src: &'a str, tokens: Vec<Token>) -> Self {
        let end = Span {
            offset: src.len(),
            len: 0,
            line: tokens.last().map_or(1, |t| t.span.line),
            column: tokens.last().map_or(1, |t| t.span.column),
        };
        Parser {
            src,
            tokens,
            pos: 0,
            eof: Token {
                tok: Tok::Eof,
                span: end,
            },
            prev: end,
            locations: Vec::new(),
            arrays: Vec::new(),
            threads: Vec::new(),
            depth: 0,
            any_register_name: false,
            access_type: None,
            docs: Vec::new(),
        }
    }

    /// A parser for the `locations` line and the condition of a test whose threads another
    /// dialect built (the C dialect): `tokens` start at the condition; registers may be any
    /// identifier.
    pub(crate) fn for_condition(
        src: &'a str,
        tokens: Vec<Token>,
        locations: Vec<Location>,
        arrays: Vec<Array>,
        threads: Vec<Thread>,
    ) -> Self {
        let mut p = Parser::new(src, tokens);
        p.locations = locations;
        p.arrays = arrays;
        p.threads = threads
            .into_iter()
            .map(|thread| ThreadState {
                thread,
                labels: Vec::new(),
                fixups: Vec::new(),
                typed: Vec::new(),
            })
            .collect();
        p.any_register_name = true;
        p
    }

    /// Reads the `locations` line and the condition up to the end of the input; gives back the
    /// locations (the condition may add some) and the threads.
    #[allow(clippy::type_complexity)]
    pub(crate) fn finish_condition(
        mut self,
    ) -> Result<(Vec<Location>, Vec<Thread>, Vec<Observable>, Condition), Diagnostic> {
        let (extra, condition) = self.condition_section()?;
        if !self.at(&Tok::Eof) {
            return Err(self.error_expected(
                "nothing after the condition (only comments may follow it)",
                &["the end of the input"],
            ));
        }
        Ok((
            self.locations,
            self.threads.into_iter().map(|s| s.thread).collect(),
            extra,
            condition,
        ))
    }

    // ---- token stream helpers ----

    pub(crate) fn peek(&self) -> &Token {
        self.tokens.get(self.pos).unwrap_or(&self.eof)
    }

    pub(crate) fn peek_at(&self, n: usize) -> &Token {
        self.tokens
            .get(self.pos.saturating_add(n))
            .unwrap_or(&self.eof)
    }

    pub(crate) fn at(&self, tok: &Tok) -> bool {
        &self.peek().tok == tok
    }

    pub(crate) fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        self.prev = t.span;
        t
    }

    pub(crate) fn eat(&mut self, tok: &Tok) -> Option<Span> {
        if self.at(tok) {
            Some(self.bump().span)
        } else {
            None
        }
    }

    /// Consumes `tok` or fails with "expected {what}, found ..." at the next token.
    pub(crate) fn expect(&mut self, tok: &Tok, what: &str) -> Result<Span, Diagnostic> {
        match self.eat(tok) {
            Some(span) => Ok(span),
            None => Err(self.error_expected(what, &[tok.describe()])),
        }
    }

    /// "expected {what}, found {next token}", at the next token.
    pub(crate) fn error_expected<S: ToString>(&self, what: &str, expected: &[S]) -> Diagnostic {
        let t = self.peek();
        Diagnostic::error(format!("expected {what}, found {}", t.tok.describe()))
            .at(t.span)
            .expecting(expected)
    }

    pub(crate) fn prev_span(&self) -> Span {
        self.prev
    }

    /// The span from `start` to the end of the last consumed token.
    pub(crate) fn span_from(&self, start: Span) -> Span {
        let end = self.prev.offset + self.prev.len;
        Span {
            len: end.saturating_sub(start.offset),
            ..start
        }
    }

    pub(crate) fn text(&self, span: Span) -> &'a str {
        self.src
            .get(span.offset..span.offset + span.len)
            .unwrap_or("")
    }

    /// A non-negative integer that fits in `u32`.
    pub(crate) fn u32_literal(&mut self, what: &str) -> Result<(u32, Span), Diagnostic> {
        match self.peek().tok {
            Tok::Int(v) => {
                let span = self.peek().span;
                let v = u32::try_from(v).map_err(|_| {
                    Diagnostic::error(format!("{what} must be between 0 and {}", u32::MAX)).at(span)
                })?;
                self.bump();
                Ok((v, span))
            }
            _ => Err(self.error_expected(what, &[what])),
        }
    }

    // ---- names ----

    /// Finds or creates the location `name`, first mentioned at `span`. An array's name is
    /// its first element (a pointer to the array points there).
    pub(crate) fn loc(&mut self, name: &str, span: Span) -> LocId {
        if let Some(a) = self.array(name) {
            return a.first;
        }
        if let Some(i) = self.locations.iter().position(|l| l.name == name) {
            return LocId(i as u32);
        }
        self.locations.push(Location {
            name: name.to_string(),
            space: MemorySpace::Global,
            init: 0,
            ty: IntType::S32,
            span: Some(span),
        });
        LocId((self.locations.len() - 1) as u32)
    }

    /// The array named `name`, if any.
    pub(crate) fn array(&self, name: &str) -> Option<&Array> {
        self.arrays.iter().find(|a| a.name == name)
    }

    /// The allocation `loc` belongs to: its first location and length.
    fn allocation(&self, loc: LocId) -> (LocId, u32) {
        self.arrays
            .iter()
            .find(|a| (a.first.0..a.first.0 + a.len).contains(&loc.0))
            .map_or((loc, 1), |a| (a.first, a.len))
    }

    /// Gives every location the type its typed accesses state, and every access without a
    /// type suffix its location's type. A location accessed with no type suffix at all holds
    /// untyped integers, as 32-bit signed values (`.s32`, the width of the
    /// GPU's words). Accesses of two widths to one
    /// location are an error: that is mixed-size, which scopecheck's models do not cover.
    fn type_accesses(&mut self) -> Result<(), Diagnostic> {
        let mut stated: Vec<Option<(IntType, Span)>> = vec![None; self.locations.len()];
        for state in &self.threads {
            for &(i, ty, span) in &state.typed {
                let Some(loc) = state.thread.code[i].kind.named_loc() else {
                    continue;
                };
                // An array's elements share one type: its accesses are typed together.
                let loc = self.allocation(loc).0;
                match stated[loc.0 as usize] {
                    Some((first, at)) if first.bits != ty.bits => {
                        return Err(Diagnostic::error(format!(
                                "`{}` is accessed as .{} here and as .{} at line {}: mixed-size accesses to one location are not supported",
                                self.locations[loc.0 as usize].name,
                                ty.ptx_name(),
                                first.ptx_name(),
                                at.line
                            )).at(span))
                    }
                    Some(_) => {}
                    None => stated[loc.0 as usize] = Some((ty, span)),
                }
            }
        }
        for i in 0..self.locations.len() {
            let (first, _) = self.allocation(LocId(i as u32));
            if let Some((ty, _)) = stated[first.0 as usize] {
                let l = &mut self.locations[i];
                l.ty = ty;
                l.init = ty.wrap(l.init);
            }
        }
        let locations = &self.locations;
        for state in &mut self.threads {
            for (i, instr) in state.thread.code.iter_mut().enumerate() {
                let explicit = state.typed.iter().any(|&(j, _, _)| j == i);
                let Some(loc) = instr.kind.named_loc() else {
                    continue;
                };
                if explicit {
                    continue;
                }
                if let InstrKind::Load { ty, .. }
                | InstrKind::Store { ty, .. }
                | InstrKind::Rmw { ty, .. } = &mut instr.kind
                {
                    *ty = locations[loc.0 as usize].ty;
                }
            }
        }
        Ok(())
    }

    /// Finds or creates register `name` (already normalised) of thread `t`.
    pub(crate) fn reg(&mut self, t: usize, name: &str) -> RegId {
        let Some(state) = self.threads.get_mut(t) else {
            // Callers only pass threads that exist; a stray index names no register.
            return RegId(0);
        };
        let regs = &mut state.thread.registers;
        if let Some(i) = regs.iter().position(|r| r == name) {
            return RegId(i as u32);
        }
        regs.push(name.to_string());
        RegId((regs.len() - 1) as u32)
    }

    /// Checks that `word` (at `span`) can name a location.
    pub(crate) fn location_name(&self, word: &str, span: Span) -> Result<(), Diagnostic> {
        if register_name(word).is_some() {
            return Err(Diagnostic::error(format!(
                "expected a location name, found register `{word}`"
            ))
            .at(span)
            .expecting(&["a location name"]));
        }
        if word.contains('.') || word.starts_with('%') {
            return Err(
                Diagnostic::error(format!("`{word}` is not a valid location name"))
                    .at(span)
                    .expecting(&["a location name"]),
            );
        }
        Ok(())
    }

    // ---- sections ----

    fn program(&mut self, name: String) -> Result<Program, Diagnostic> {
        // The description, then any further strings (a source, a URL), kept as docs.
        let mut description = None;
        while let Tok::Str(s) = &self.peek().tok {
            let s = s.clone();
            self.bump();
            match description {
                None => description = Some(s),
                Some(_) => self.docs.push(s),
            }
        }
        let reg_inits = if self.at(&Tok::LBrace) {
            self.init_section()?
        } else {
            Vec::new()
        };
        self.placement_row()?;
        // Registers named by the initial state come first in their thread's register list.
        let n = self.threads.len();
        for init in reg_inits {
            let t = init.thread as usize;
            if t >= n {
                return Err(Diagnostic::error(format!(
                    "no thread P{} in this test: the placement row has {n} thread{}",
                    init.thread,
                    if n == 1 { "" } else { "s" }
                ))
                .at(init.thread_span));
            }
            let r = self.reg(t, &init.reg);
            if let Some(state) = self.threads.get_mut(t) {
                if state.thread.init_regs.iter().any(|(id, _)| *id == r) {
                    return Err(Diagnostic::error(format!(
                        "register P{}:{} is initialised twice",
                        init.thread, init.reg
                    ))
                    .at(init.span));
                }
                state.thread.init_regs.push((r, init.value));
            }
        }
        self.code_rows()?;
        self.resolve_labels()?;
        self.type_accesses()?;
        let (extra_observables, condition) = self.condition_section()?;
        if !self.at(&Tok::Eof) {
            return Err(self.error_expected(
                "nothing after the condition (only comments may follow it)",
                &["the end of the input"],
            ));
        }
        Ok(Program {
            arch: Arch::Ptx,
            name,
            description,
            locations: std::mem::take(&mut self.locations),
            arrays: std::mem::take(&mut self.arrays),
            threads: std::mem::take(&mut self.threads)
                .into_iter()
                .map(|s| s.thread)
                .collect(),
            condition,
            extra_observables,
        })
    }

    /// `{ x=0; int y = 1; [z]=2; w@shared=0; P1:r0=5; }`. Locations are created here, in
    /// order; register entries wait until the placement row says which threads exist.
    fn init_section(&mut self) -> Result<Vec<RegInit>, Diagnostic> {
        self.expect(&Tok::LBrace, "`{` to open the initial state")?;
        let mut regs = Vec::new();
        loop {
            if self.eat(&Tok::RBrace).is_some() {
                break;
            }
            self.init_entry(&mut regs)?;
            match self.peek().tok {
                Tok::Semi => {
                    self.bump();
                }
                Tok::RBrace => {}
                _ => {
                    return Err(self.error_expected(
                        "`;` between initial-state entries, or `}` to close the initial state",
                        &["`;`", "`}`"],
                    ))
                }
            }
        }
        Ok(regs)
    }

    fn init_entry(&mut self, regs: &mut Vec<RegInit>) -> Result<(), Diagnostic> {
        let start = self.peek().span;
        // A register of a thread: `P1:r0` or `1:r0`.
        if self.peek_at(1).tok == Tok::Colon {
            let (thread, thread_span) = self.thread_ref()?;
            self.bump(); // `:`
            let (reg, _) = self.register()?;
            self.expect(&Tok::Assign, "`=` and the register's initial value")?;
            let value = self.int_value("the register's initial value")?;
            regs.push(RegInit {
                thread,
                thread_span,
                reg,
                value,
                span: self.span_from(start),
            });
            return Ok(());
        }
        // A thread name here means the placement row came before the `}`.
        if let Tok::Word(w) = &self.peek().tok {
            if thread_number(w).is_some()
                && !matches!(self.peek_at(1).tok, Tok::Assign | Tok::At | Tok::Word(_))
            {
                return Err(self.error_expected("`}` to close the initial state", &["`}`"]));
            }
        }
        // `[x]`, or type words (`int`, `uint32_t`, ...) followed by the name.
        let (name, name_span) = if self.eat(&Tok::LBracket).is_some() {
            let n = self.plain_word("a location name")?;
            self.expect(&Tok::RBracket, "`]` after the location name")?;
            n
        } else {
            let mut n = self.plain_word("a location, `[location]` or `P0:r0`")?;
            while matches!(self.peek().tok, Tok::Word(_)) {
                n = self.plain_word("a location name")?;
            }
            n
        };
        self.location_name(&name, name_span)?;
        // `a[4]`: an array of that many elements.
        let declared_len = if self.eat(&Tok::LBracket).is_some() {
            let len = array_length(self.u32_literal("the array's length")?)?;
            self.expect(&Tok::RBracket, "`]` after the array's length")?;
            Some(len)
        } else {
            None
        };
        let space = if self.eat(&Tok::At).is_some() {
            self.memory_space()?
        } else {
            MemorySpace::Global
        };
        if self.locations.iter().any(|l| l.name == name) || self.array(&name).is_some() {
            return Err(
                Diagnostic::error(format!("location `{name}` is initialised twice")).at(name_span),
            );
        }
        let values =
            if declared_len.is_some() && matches!(self.peek().tok, Tok::Semi | Tok::RBrace) {
                // `int a[2];`: every element 0.
                Vec::new()
            } else {
                self.expect(&Tok::Assign, "`=` and the location's initial value")?;
                if self.at(&Tok::LBrace) {
                    self.array_values()?
                } else if declared_len.is_some() {
                    return Err(self
                        .error_expected("the array's values in braces, as in `{1, 2}`", &["`{`"]));
                } else {
                    let value = self.int_value("the location's initial value")?;
                    let id = self.loc(&name, name_span);
                    if let Some(l) = self.locations.get_mut(id.0 as usize) {
                        l.space = space;
                        l.init = value;
                    }
                    return Ok(());
                }
            };
        let len = initialised_length(&name, name_span, declared_len, &values)?;
        let values: Vec<Value> = values.into_iter().map(|(v, _)| v).collect();
        let (locations, arrays) = (&mut self.locations, &mut self.arrays);
        add_array(locations, arrays, &name, name_span, len, &values, space)?;
        Ok(())
    }

    /// `{1, 2, -3}`: an array's values, each with its span.
    fn array_values(&mut self) -> Result<Vec<(Value, Span)>, Diagnostic> {
        self.expect(&Tok::LBrace, "`{` and the array's values")?;
        let mut values = Vec::new();
        if self.eat(&Tok::RBrace).is_some() {
            return Ok(values);
        }
        loop {
            let span = self.peek().span;
            values.push((self.int_value("an element's initial value")?, span));
            if self.eat(&Tok::Comma).is_some() {
                continue;
            }
            self.expect(&Tok::RBrace, "`,` or `}` after an element's value")?;
            return Ok(values);
        }
    }

    fn memory_space(&mut self) -> Result<MemorySpace, Diagnostic> {
        const SPACES: &[&str] = &["global", "shared", "host", "managed"];
        let t = self.peek().clone();
        let space = match &t.tok {
            Tok::Word(w) => match w.as_str() {
                "global" => Some(MemorySpace::Global),
                "shared" => Some(MemorySpace::Shared),
                "host" => Some(MemorySpace::HostMapped),
                "managed" => Some(MemorySpace::Managed),
                _ => None,
            },
            _ => None,
        };
        match space {
            Some(s) => {
                self.bump();
                Ok(s)
            }
            None => Err(Diagnostic::error(format!(
                "unknown memory space {}; expected one of global, shared, host, managed",
                t.tok.describe()
            ))
            .at(t.span)
            .expecting(SPACES)),
        }
    }

    /// An integer (for initial values).
    pub(crate) fn int_value(&mut self, what: &str) -> Result<Value, Diagnostic> {
        match self.peek().tok {
            Tok::Int(v) => {
                self.bump();
                Ok(v)
            }
            _ => Err(self.error_expected(what, &["an integer"])),
        }
    }

    /// A word without qualifiers or `%` (a name).
    pub(crate) fn plain_word(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match &self.peek().tok {
            Tok::Word(w) if !w.contains('.') && !w.starts_with('%') => {
                let w = w.clone();
                Ok((w, self.bump().span))
            }
            _ => Err(self.error_expected(what, &[what])),
        }
    }

    /// A thread as conditions and the initial state name it: `P1` or `1`.
    pub(crate) fn thread_ref(&mut self) -> Result<(u32, Span), Diagnostic> {
        let t = self.peek().clone();
        let n = match &t.tok {
            Tok::Word(w) => thread_number(w),
            Tok::Int(v) => u32::try_from(*v).ok(),
            _ => None,
        };
        match n {
            Some(n) => {
                self.bump();
                Ok((n, t.span))
            }
            None => Err(self.error_expected("a thread such as `P0` or `0`", &["a thread"])),
        }
    }

    /// A register `r<digits>` or `%r<digits>`, returned normalised (`r0`).
    pub(crate) fn register(&mut self) -> Result<(String, Span), Diagnostic> {
        let t = self.peek().clone();
        if let Tok::Word(w) = &t.tok {
            if let Some(r) = register_name(w) {
                self.bump();
                return Ok((r, t.span));
            }
            if self.any_register_name && !w.contains('.') && !w.starts_with('%') {
                let w = w.clone();
                self.bump();
                return Ok((w, t.span));
            }
        }
        Err(self.error_expected("a register such as `r0`", &["a register"]))
    }

    /// The first row: `P0@cta 0,gpu 0 | P1@host | P2 ;`.
    fn placement_row(&mut self) -> Result<(), Diagnostic> {
        let mut raw = Vec::new();
        loop {
            let cell_start = self.peek().span;
            let expected_name = format!("P{}", raw.len());
            match &self.peek().tok {
                Tok::Word(w) if *w == expected_name => {
                    self.bump();
                }
                Tok::Word(w) if thread_number(w).is_some() => {
                    return Err(Diagnostic::error(format!("expected thread `{expected_name}`, found `{w}`: threads must be named P0, P1, ... in order")).at(cell_start)
                    .expecting(&[format!("`{expected_name}`")]));
                }
                _ => {
                    return Err(self.error_expected(
                        &format!("thread `{expected_name}` in the placement row"),
                        &[format!("`{expected_name}`")],
                    ))
                }
            }
            let placement = if self.eat(&Tok::At).is_some() {
                self.placement()?
            } else {
                RawPlacement::Device {
                    warp: None,
                    cta: 0,
                    cluster: None,
                    gpu: 0,
                }
            };
            raw.push((placement, self.span_from(cell_start), expected_name));
            match self.peek().tok {
                Tok::Pipe => {
                    self.bump();
                }
                Tok::Semi => {
                    self.bump();
                    break;
                }
                _ => {
                    return Err(self.error_expected(
                        "`|` before the next thread or `;` at end of the placement row",
                        &["`|`", "`;`"],
                    ))
                }
            }
        }
        let placements = number_clusters(&raw)?;
        for ((_, span, name), placement) in raw.into_iter().zip(placements) {
            self.threads.push(ThreadState {
                typed: Vec::new(),
                thread: Thread {
                    name,
                    placement,
                    span: Some(span),
                    registers: Vec::new(),
                    init_regs: Vec::new(),
                    code: Vec::new(),
                    after: vec![],
                },
                labels: Vec::new(),
                fixups: Vec::new(),
            });
        }
        Ok(())
    }

    /// After `@`: `host`, or `[warp N,] cta N [, cluster N] [, gpu N]` (items in that order,
    /// commas optional, missing numbers 0).
    fn placement(&mut self) -> Result<RawPlacement, Diagnostic> {
        const ITEMS: [&str; 4] = ["warp", "cta", "cluster", "gpu"];
        if let Tok::Word(w) = &self.peek().tok {
            if w == "host" {
                self.bump();
                return Ok(RawPlacement::Host);
            }
        }
        let mut values: [Option<(u32, Span)>; 4] = [None; 4];
        let mut last: Option<usize> = None;
        loop {
            let t = self.peek().clone();
            let index = match &t.tok {
                Tok::Word(w) => ITEMS.iter().position(|i| i == w),
                _ => None,
            };
            let Some(index) = index else {
                let what = if last.is_none() {
                    "a placement (`host`, or `cta N, gpu N` with optional `warp N` first and `cluster N` before `gpu`)"
                } else {
                    "a placement item (`warp`, `cta`, `cluster`, `gpu`), `|` or `;`"
                };
                return Err(
                    self.error_expected(what, &["`host`", "`warp`", "`cta`", "`cluster`", "`gpu`"])
                );
            };
            if last.is_some_and(|l| l >= index) {
                return Err(Diagnostic::error(format!(
                        "`{}` out of place: placement items go in the order warp, cta, cluster, gpu, each at most once",
                        ITEMS[index]
                    )).at(t.span));
            }
            self.bump();
            let v = self.u32_literal(&format!("the {} number", ITEMS[index]))?;
            if let Some(slot) = values.get_mut(index) {
                *slot = Some(v);
            }
            last = Some(index);
            self.eat(&Tok::Comma);
            if matches!(self.peek().tok, Tok::Pipe | Tok::Semi) {
                break;
            }
        }
        let [warp, cta, cluster, gpu] = values;
        Ok(RawPlacement::Device {
            warp: warp.map(|v| v.0),
            cta: cta.map_or(0, |v| v.0),
            cluster,
            gpu: gpu.map_or(0, |v| v.0),
        })
    }

    /// Instruction rows, until the `locations` line, the condition or the end.
    fn code_rows(&mut self) -> Result<(), Diagnostic> {
        let n = self.threads.len();
        loop {
            if self.at_condition_start() {
                return Ok(());
            }
            let mut cell = 0usize;
            loop {
                let opener = self.prev_span();
                if !matches!(self.peek().tok, Tok::Pipe | Tok::Semi) {
                    if cell >= n {
                        return Err(self.too_many_cells(self.peek().span, n));
                    }
                    self.cell(cell)?;
                } else if cell >= n {
                    return Err(self.too_many_cells(opener, n));
                }
                match self.peek().tok {
                    Tok::Pipe => {
                        self.bump();
                        cell += 1;
                    }
                    Tok::Semi => {
                        self.bump();
                        break;
                    }
                    _ if cell + 1 >= n => {
                        return Err(self.error_expected("`;` at end of instruction row", &["`;`"]))
                    }
                    _ => {
                        return Err(self.error_expected(
                            "`|` before the next thread's cell or `;` at end of instruction row",
                            &["`|`", "`;`"],
                        ))
                    }
                }
            }
        }
    }

    fn too_many_cells(&self, span: Span, n: usize) -> Diagnostic {
        Diagnostic::error(format!(
            "this row has more cells than the {n} thread{} of the placement row",
            if n == 1 { "" } else { "s" }
        ))
        .at(span)
        .expecting(&["`;`"])
    }

    /// Whether the next token starts the part after the table.
    fn at_condition_start(&self) -> bool {
        match &self.peek().tok {
            Tok::Eof | Tok::Tilde => true,
            Tok::Word(w) => {
                CONDITION_WORDS.contains(&w.as_str()) && self.peek_at(1).tok != Tok::Colon
            }
            _ => false,
        }
    }

    /// One cell of thread `t`: labels `L:` then an optional instruction.
    fn cell(&mut self, t: usize) -> Result<(), Diagnostic> {
        while let (Tok::Word(w), Tok::Colon) = (&self.peek().tok, &self.peek_at(1).tok) {
            let (label, span) = (w.clone(), self.peek().span);
            if label.contains('.') || label.starts_with('%') {
                return Err(
                    Diagnostic::error(format!("`{label}` is not a valid label name"))
                        .at(span)
                        .expecting(&["a label name"]),
                );
            }
            self.bump();
            self.bump();
            let Some(state) = self.threads.get_mut(t) else {
                break;
            };
            if state.labels.iter().any(|(l, _)| *l == label) {
                return Err(Diagnostic::error(format!(
                    "label `{label}` is defined twice in thread {}",
                    state.thread.name
                ))
                .at(span));
            }
            let here = state.thread.code.len();
            state.labels.push((label, here));
        }
        if matches!(self.peek().tok, Tok::Pipe | Tok::Semi) {
            return Ok(());
        }
        let start = self.peek().span;
        self.access_type = None;
        let (kind, label) = self.instruction(t)?;
        let typed = self.access_type.take();
        if self.at(&Tok::Comma) {
            return Err(self.error_expected(
                "the end of the instruction (too many operands)",
                &["`|`", "`;`"],
            ));
        }
        let span = self.span_from(start);
        let text = self.text(span).trim().to_string();
        let Some(state) = self.threads.get_mut(t) else {
            return Ok(());
        };
        if let Some((label, span)) = label {
            state.fixups.push(Fixup {
                instr: state.thread.code.len(),
                label,
                span,
            });
        }
        if let Some((ty, ty_span)) = typed {
            state.typed.push((state.thread.code.len(), ty, ty_span));
        }
        state.thread.code.push(Instr { kind, span, text });
        Ok(())
    }

    fn resolve_labels(&mut self) -> Result<(), Diagnostic> {
        for state in &mut self.threads {
            for fix in &state.fixups {
                let Some(&(_, target)) = state.labels.iter().find(|(l, _)| *l == fix.label) else {
                    let known: Vec<String> =
                        state.labels.iter().map(|(l, _)| format!("`{l}`")).collect();
                    return Err(Diagnostic::error(format!(
                        "unknown label `{}` in thread {}{}",
                        fix.label,
                        state.thread.name,
                        if known.is_empty() {
                            String::new()
                        } else {
                            format!("; its labels are {}", known.join(", "))
                        }
                    ))
                    .at(fix.span)
                    .expecting(&known));
                };
                if let Some(Instr {
                    kind: InstrKind::Branch { target: slot, .. },
                    ..
                }) = state.thread.code.get_mut(fix.instr)
                {
                    *slot = target;
                }
            }
        }
        Ok(())
    }
}

/// An array's length from its literal: at least one element.
pub(crate) fn array_length((len, span): (u32, Span)) -> Result<u32, Diagnostic> {
    if len == 0 {
        return Err(Diagnostic::error("an array needs at least one element").at(span));
    }
    if len > crate::MAX_ARRAY_LENGTH {
        return Err(Diagnostic::error(format!(
            "an array of {len} elements is too long (at most {} elements)",
            crate::MAX_ARRAY_LENGTH
        ))
        .at(span));
    }
    Ok(len)
}

/// The length of array `name` initialised with `values`: the declared one, which must hold
/// them, or else theirs.
pub(crate) fn initialised_length(
    name: &str,
    name_span: Span,
    declared_len: Option<u32>,
    values: &[(Value, Span)],
) -> Result<u32, Diagnostic> {
    match declared_len {
        Some(len) if values.len() > len as usize => Err(Diagnostic::error(format!(
            "`{name}` has {len} element{} but {} values are given",
            if len == 1 { "" } else { "s" },
            values.len()
        ))
        .at(values[len as usize].1)),
        Some(len) => Ok(len),
        None => array_length((values.len() as u32, name_span)),
    }
}

/// Adds the locations of an array `name` of `len` elements initialised with `values` (the
/// rest 0): `name[0]`, `name[1]`, ..., one allocation. An array of one element is the
/// location `name` itself, as a one-element C array is one object.
pub(crate) fn add_array(
    locations: &mut Vec<Location>,
    arrays: &mut Vec<Array>,
    name: &str,
    span: Span,
    len: u32,
    values: &[Value],
    space: MemorySpace,
) -> Result<LocId, Diagnostic> {
    // Checked before anything is allocated: each element is a location.
    if locations.len().saturating_add(len as usize) > crate::MAX_LOCATIONS {
        return Err(Diagnostic::error(format!(
            "too many locations: with `{name}`'s {len} elements the test would have more than {}",
            crate::MAX_LOCATIONS
        ))
        .at(span));
    }
    let first = LocId(locations.len() as u32);
    for i in 0..len {
        locations.push(Location {
            name: if len == 1 {
                name.to_string()
            } else {
                format!("{name}[{i}]")
            },
            space,
            init: values.get(i as usize).copied().unwrap_or(0),
            ty: IntType::S32,
            span: Some(span),
        });
    }
    if len > 1 {
        arrays.push(Array {
            name: name.to_string(),
            first,
            len,
        });
    }
    Ok(first)
}

/// Gives each device thread its cluster number. Threads of one (gpu, cta) share a cluster: the
/// one a thread of that CTA names, or else a fresh number unused by any named cluster, so that
/// `.cluster` scope means the same as `.cta` for CTAs placed without one.
pub(crate) fn number_clusters(
    raw: &[(RawPlacement, Span, String)],
) -> Result<Vec<Placement>, Diagnostic> {
    let mut named: Vec<((u32, u32), u32)> = Vec::new();
    for (p, _, _) in raw {
        if let RawPlacement::Device {
            cta,
            cluster: Some((c, span)),
            gpu,
            ..
        } = p
        {
            match named.iter().find(|(k, _)| *k == (*gpu, *cta)) {
                Some((_, other)) if other != c => {
                    return Err(Diagnostic::error(format!(
                        "CTA {cta} of GPU {gpu} is already placed in cluster {other}; a CTA \
                             belongs to one cluster"
                    ))
                    .at(*span))
                }
                Some(_) => {}
                None => named.push(((*gpu, *cta), *c)),
            }
        }
    }
    let mut next = named
        .iter()
        .map(|(_, c)| c.saturating_add(1))
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for (p, _, _) in raw {
        out.push(match p {
            RawPlacement::Host => Placement::Host,
            RawPlacement::Device { warp, cta, gpu, .. } => {
                let cluster = match named.iter().find(|(k, _)| *k == (*gpu, *cta)) {
                    Some((_, c)) => *c,
                    None => {
                        let fresh = next;
                        named.push(((*gpu, *cta), fresh));
                        next = next.saturating_add(1);
                        fresh
                    }
                };
                Placement::Device(DevicePlacement {
                    gpu: *gpu,
                    cluster,
                    cta: *cta,
                    warp: *warp,
                })
            }
        });
    }
    Ok(out)
}

/// `r<digits>` or `%r<digits>`, normalised to `r<digits>`.
pub(crate) fn register_name(word: &str) -> Option<String> {
    let bare = word.strip_prefix('%').unwrap_or(word);
    let digits = bare.strip_prefix('r')?;
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        Some(bare.to_string())
    } else {
        None
    }
}

/// `P<digits>` as a thread number.
pub(crate) fn thread_number(word: &str) -> Option<u32> {
    let digits = word.strip_prefix('P')?;
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}
