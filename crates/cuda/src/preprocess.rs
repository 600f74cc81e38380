//! A C preprocessor pass for the CUDA and OpenCL front-ends that keeps line numbers.
//!
//! [`preprocess`] turns a source into text with exactly as many lines as the source, each line
//! of the source giving the same line of the output, so that every position the parser and the
//! lowering report afterwards is still on the right line:
//!
//! - a directive line becomes an empty line (`#include` and `#pragma` are dropped: headers are
//!   not read);
//! - a backslash-continued line is joined on its first line and its continuation lines become
//!   empty lines;
//! - the text of inactive conditional branches becomes empty lines;
//! - a macro use is replaced by its expansion on the line of the macro name; when the argument
//!   list of a function-like macro spans several lines, the lines it consumes become empty (what
//!   follows the closing `)` stays on its own line, indented to its column).
//!
//! Text without a macro use is copied byte for byte; columns may shift only where a macro
//! expands. Comments, string and character literals are never expanded in, and multi-line
//! block comments keep their line breaks.
//!
//! Expansion follows C: a macro is not re-expanded inside its own expansion (every token carries
//! the set of macros it came from, its *hide set*), arguments are fully expanded before they are
//! substituted except as operands of `#` and `##`, the result is rescanned together with the
//! rest of the text. `__LINE__` and `__FILE__` (`"input"`) are built in; `__VA_ARGS__`,
//! `__VA_OPT__`, GNU named variadic parameters (`args...`) and the GNU `, ## __VA_ARGS__` comma
//! elision are supported, and the `_Pragma("...")` operator is dropped like `#pragma`.
//!
//! Not supported, each with an error: `#line` (and GCC line markers `# 12 "f"`), directives
//! inside the argument list of a macro use, `__has_include` and the other `__has_*`
//! operators in `#if`, `#__VA_OPT__`. A function-like macro name whose `(` only comes after a
//! directive is not a use of the macro.
//!
//! This file holds the lines, tokens, output and macro table and the main loop; the directives
//! and conditions are in `directive`, macro expansion in `expand`, `#if` expressions in
//! `if_expr`.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::rc::Rc;

use scopecheck_ir::{Diagnostic, Span};

use crate::include::{Header, IncludePath, IncludeState};
use std::path::{Path, PathBuf};

/// The preprocessed text (as many lines as the source) and the warnings met on the way
/// (`#warning`, a macro redefined differently, extra tokens after a directive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preprocessed {
    pub text: String,
    pub warnings: Vec<(Span, String)>,
}

/// What `__FILE__` expands to.
const FILE_NAME: &str = "\"input\"";

/// The most tokens all macro expansions of one source may produce together.
const MAX_EXPANDED_TOKENS: usize = 4_000_000;

/// How deeply macro uses may nest inside the arguments of other macro uses.
pub const MAX_MACRO_NESTING: usize = 200;

/// How deeply the operators of an `#if` expression may nest.
const MAX_IF_NESTING: usize = 200;

/// The most tokens the arguments of the macro uses being expanded may hold together: each
/// level of `F(F(F(...)))` keeps its own copy of its arguments while the inner ones expand,
/// so 100,000 nested uses would hold billions of tokens before reaching
/// [`MAX_MACRO_NESTING`]; this bounds that memory (a few hundred MB at most).
pub const MAX_ARGUMENT_TOKENS: usize = 3_000_000;

/// Preprocesses `source`, with the object-like or function-like macros `predefined` defined
/// first: `("__CUDA_ARCH__", "900")` is `#define __CUDA_ARCH__ 900`, `("MAX(a, b)", "...")`
/// a function-like macro.
pub fn preprocess(source: &str, predefined: &[(&str, &str)]) -> Result<Preprocessed, Diagnostic> {
    run_source(source, predefined, None)
}

/// As [`preprocess`], reading the headers `#include` names from `path` (`include.rs`): a
/// header found is preprocessed with the file's macros and put on its `#include` line; a
/// quoted one not found is an error, an angled one not found is known to the front-end when
/// it is the system's or CUDA's, and otherwise a warning. Also returns the headers read.
pub fn preprocess_with(
    source: &str,
    predefined: &[(&str, &str)],
    path: &IncludePath,
) -> Result<(Preprocessed, Vec<Header>), Diagnostic> {
    let state = Rc::new(IncludeState {
        path: path.clone(),
        ..IncludeState::default()
    });
    let pre = run_source(source, predefined, Some(state.clone()))?;
    let headers = state.headers.take();
    Ok((pre, headers))
}

fn run_source(
    source: &str,
    predefined: &[(&str, &str)],
    inc: Option<Rc<IncludeState>>,
) -> Result<Preprocessed, Diagnostic> {
    let dir = inc.as_ref().and_then(|i| i.path.file_dir.clone());
    let (lines, crs) = splice(source);
    let mut pp = Pp {
        lines: &lines,
        macros: HashMap::new(),
        warnings: Vec::new(),
        produced: 0,
        arg_tokens: 0,
        group_end: None,
        inc,
        dir,
        file: None,
        depth: 0,
        included: Vec::new(),
    };
    for (name, body) in predefined {
        pp.predefine(name, body)?;
    }
    let mut out = Out::new(lines.len());
    pp.run(&mut out)?;
    for (k, text) in std::mem::take(&mut pp.included) {
        out.lines[k] = text;
    }
    let mut physical: Vec<String> = Vec::with_capacity(crs.len());
    for (k, l) in lines.iter().enumerate() {
        physical.push(std::mem::take(&mut out.lines[k]));
        for _ in 1..l.count {
            physical.push(String::new());
        }
    }
    for (s, &cr) in physical.iter_mut().zip(&crs) {
        if cr && !s.ends_with('\r') {
            s.push('\r');
        }
    }
    Ok(Preprocessed {
        text: physical.join("\n"),
        warnings: pp.warnings,
    })
}

// ---------------------------------------------------------------------------------------------
// Lines

/// A part of a logical line that comes from one physical line.
#[derive(Debug)]
struct Segment {
    /// Where the part starts in the logical line.
    log_off: usize,
    /// Its physical line (0-based).
    phys: usize,
    /// The byte offset in the source where the part starts.
    src_off: usize,
}

/// Physical lines joined by backslash-newline.
#[derive(Debug)]
struct LogicalLine {
    text: String,
    /// How many physical lines it spans.
    count: usize,
    segs: Vec<Segment>,
}

/// The logical lines of a source, and for each physical line whether it ended with `\r`.
fn splice(source: &str) -> (Vec<LogicalLine>, Vec<bool>) {
    let pieces: Vec<&str> = source.split('\n').collect();
    let mut lines = Vec::new();
    let mut crs = Vec::with_capacity(pieces.len());
    let mut cur: Option<LogicalLine> = None;
    let mut off = 0;
    for (i, piece) in pieces.iter().enumerate() {
        let cr = piece.ends_with('\r');
        crs.push(cr);
        let body = if cr { &piece[..piece.len() - 1] } else { piece };
        let continued = body.ends_with('\\') && i + 1 < pieces.len();
        let l = cur.get_or_insert_with(|| LogicalLine {
            text: String::new(),
            count: 0,
            segs: Vec::new(),
        });
        l.segs.push(Segment {
            log_off: l.text.len(),
            phys: i,
            src_off: off,
        });
        l.count += 1;
        if continued {
            l.text.push_str(&body[..body.len() - 1]);
        } else {
            l.text.push_str(piece);
            lines.extend(cur.take());
        }
        off += piece.len() + 1;
    }
    lines.extend(cur.take());
    (lines, crs)
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
    /// A character that is no token of C (`@`, `$`, a stray `\`, ...).
    Other,
    Space,
    Comment,
    /// An empty argument, while substituting.
    Placemarker,
    /// The `##` operator of a macro body, while substituting.
    PasteOp,
}

/// A place in a logical line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Loc {
    line: usize,
    off: usize,
    len: usize,
}

/// The logical line of the tokens of predefined macros (they have no place in the source).
const PREDEFINED_LINE: usize = usize::MAX;

/// The macros a token came from: it is not expanded as one of them again.
#[derive(Clone, Debug, Default)]
struct Hide(Option<Rc<BTreeSet<Rc<str>>>>);

impl Hide {
    fn contains(&self, name: &str) -> bool {
        self.0.as_ref().is_some_and(|s| s.contains(name))
    }

    fn with(&self, name: &Rc<str>) -> Hide {
        let mut s = self.0.as_deref().cloned().unwrap_or_default();
        s.insert(name.clone());
        Hide(Some(Rc::new(s)))
    }

    fn union(&self, other: &Hide) -> Hide {
        match (&self.0, &other.0) {
            (None, _) => other.clone(),
            (_, None) => self.clone(),
            (Some(a), Some(b)) => Hide(Some(Rc::new(a.union(b).cloned().collect()))),
        }
    }

    fn intersect(&self, other: &Hide) -> Hide {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => {
                let s: BTreeSet<Rc<str>> = a.intersection(b).cloned().collect();
                Hide((!s.is_empty()).then(|| Rc::new(s)))
            }
            _ => Hide(None),
        }
    }
}

#[derive(Clone, Debug)]
struct Tok {
    kind: Kind,
    text: Rc<str>,
    /// Whitespace (or a comment, or a line start) comes before it.
    space: bool,
    hide: Hide,
    /// Where it is (a source token) or the macro use it came from (a token of a body).
    at: Loc,
    /// A token of the source, still where it was: copied verbatim to its own line.
    src: bool,
}

impl Tok {
    fn synth(kind: Kind, text: &str, at: Loc, space: bool) -> Tok {
        Tok {
            kind,
            text: Rc::from(text),
            space,
            hide: Hide::default(),
            at,
            src: false,
        }
    }

    fn is_ws(&self) -> bool {
        matches!(self.kind, Kind::Space | Kind::Comment)
    }

    fn is_punct(&self, p: &str) -> bool {
        self.kind == Kind::Punct && &*self.text == p
    }

    fn is_ident(&self, name: &str) -> bool {
        self.kind == Kind::Ident && &*self.text == name
    }
}

/// One token lexed: its kind, where it ends, and whether it is an unterminated comment or
/// literal.
struct Lexed {
    kind: Kind,
    end: usize,
    open: bool,
}

const PUNCT3: [&str; 5] = ["...", "<<=", ">>=", "->*", "<=>"];
const PUNCT2: [&str; 22] = [
    "##", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=", "/=", "%=", "+=",
    "-=", "&=", "^=", "|=", "::", ".*",
];
const PUNCT1: &[u8] = b"!#%&()*+,-./:;<=>?[]^{|}~";

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..]
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|p| p + from)
}

/// The end of a literal quoted by `q` whose opening quote is at `start`.
fn quoted(b: &[u8], start: usize, q: u8) -> (usize, bool) {
    let mut j = start + 1;
    while j < b.len() {
        if b[j] == b'\\' {
            j += 2;
            continue;
        }
        if b[j] == q {
            return (j + 1, false);
        }
        j += 1;
    }
    (b.len(), true)
}

/// A raw string literal `R"delim(...)delim"` whose `"` is at `quote`; `None` when the
/// delimiter is not one.
fn raw_string(b: &[u8], quote: usize) -> Option<(usize, bool)> {
    let paren = (quote + 1..b.len().min(quote + 18)).find(|&k| b[k] == b'(')?;
    let delim = &b[quote + 1..paren];
    if delim
        .iter()
        .any(|&c| is_space(c) || matches!(c, b')' | b'\\' | b'"'))
    {
        return None;
    }
    let mut close = vec![b')'];
    close.extend_from_slice(delim);
    close.push(b'"');
    Some(match find(b, paren + 1, &close) {
        Some(p) => (p + close.len(), false),
        None => (b.len(), true),
    })
}

fn lex_one(b: &[u8], i: usize) -> Lexed {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let c = b[i];
    let done = |kind, end| Lexed {
        kind,
        end,
        open: false,
    };
    if is_space(c) {
        let mut j = i;
        while j < b.len() && is_space(b[j]) {
            j += 1;
        }
        return done(Kind::Space, j);
    }
    if c == b'/' && at(i + 1) == b'/' {
        return done(Kind::Comment, b.len());
    }
    if c == b'/' && at(i + 1) == b'*' {
        return match find(b, i + 2, b"*/") {
            Some(p) => done(Kind::Comment, p + 2),
            None => Lexed {
                kind: Kind::Comment,
                end: b.len(),
                open: true,
            },
        };
    }
    if c == b'"' || c == b'\'' {
        let (end, open) = quoted(b, i, c);
        let kind = if c == b'"' { Kind::Str } else { Kind::Char };
        return Lexed { kind, end, open };
    }
    if c.is_ascii_digit() || (c == b'.' && at(i + 1).is_ascii_digit()) {
        let mut j = i + 1;
        loop {
            let d = at(j);
            let sign = matches!(d, b'+' | b'-') && matches!(b[j - 1], b'e' | b'E' | b'p' | b'P');
            let separator = d == b'\'' && is_word(at(j + 1));
            if sign || separator || is_word(d) || d == b'.' {
                j += 1;
            } else {
                break;
            }
        }
        return done(Kind::Number, j);
    }
    if c.is_ascii_alphabetic() || c == b'_' {
        let mut j = i;
        while j < b.len() && is_word(b[j]) {
            j += 1;
        }
        let word = &b[i..j];
        let next = at(j);
        if next == b'"' && matches!(word, b"R" | b"LR" | b"uR" | b"UR" | b"u8R") {
            if let Some((end, open)) = raw_string(b, j) {
                return Lexed {
                    kind: Kind::Str,
                    end,
                    open,
                };
            }
        }
        if (next == b'"' || next == b'\'') && matches!(word, b"L" | b"u" | b"U" | b"u8") {
            let (end, open) = quoted(b, j, next);
            let kind = if next == b'"' { Kind::Str } else { Kind::Char };
            return Lexed { kind, end, open };
        }
        return done(Kind::Ident, j);
    }
    for p in PUNCT3.iter().chain(PUNCT2.iter()) {
        if b[i..].starts_with(p.as_bytes()) {
            return done(Kind::Punct, i + p.len());
        }
    }
    if PUNCT1.contains(&c) {
        return done(Kind::Punct, i + 1);
    }
    let width = match c {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    };
    done(Kind::Other, (i + width).min(b.len()))
}

/// The tokens of a logical line, which starts inside a block comment when `in_comment`; and
/// whether it ends inside one.
fn lex(text: &str, line: usize, in_comment: bool) -> (Vec<Tok>, bool) {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let tok = |kind, start: usize, end: usize, space| Tok {
        kind,
        text: Rc::from(&text[start..end]),
        space,
        hide: Hide::default(),
        at: Loc {
            line,
            off: start,
            len: end - start,
        },
        src: true,
    };
    let mut i = 0;
    if in_comment {
        match find(b, 0, b"*/") {
            Some(p) => {
                toks.push(tok(Kind::Comment, 0, p + 2, true));
                i = p + 2;
            }
            None => {
                if !b.is_empty() {
                    toks.push(tok(Kind::Comment, 0, b.len(), true));
                }
                return (toks, true);
            }
        }
    }
    let mut space = true;
    let mut open_comment = false;
    while i < b.len() {
        let l = lex_one(b, i);
        toks.push(tok(l.kind, i, l.end, space));
        space = matches!(l.kind, Kind::Space | Kind::Comment);
        open_comment = l.kind == Kind::Comment && l.open;
        i = l.end;
    }
    (toks, open_comment)
}

/// The kind of `text` when it is exactly one token (not whitespace, not a comment).
fn single_token(text: &str) -> Option<Kind> {
    let b = text.as_bytes();
    if b.is_empty() {
        return None;
    }
    let l = lex_one(b, 0);
    (l.end == b.len() && !l.open && !matches!(l.kind, Kind::Space | Kind::Comment))
        .then_some(l.kind)
}

/// Whether `b` written right after `a` would lex differently (so a space must separate them).
fn would_merge(a: &Tok, b: &Tok) -> bool {
    if a.is_ws() || b.kind == Kind::Space {
        return false;
    }
    let joined = format!("{}{}", a.text, b.text);
    lex_one(joined.as_bytes(), 0).end != a.text.len()
}

// ---------------------------------------------------------------------------------------------
// Output

/// The output text, one string per logical line.
struct Out {
    lines: Vec<String>,
    touched: Vec<bool>,
    cur: usize,
    /// The last token written on the current line, and for a source token where it ended.
    last: Option<(Tok, Option<usize>)>,
}

impl Out {
    fn new(n: usize) -> Out {
        Out {
            lines: vec![String::new(); n],
            touched: vec![false; n],
            cur: 0,
            last: None,
        }
    }

    /// Moves to the line of a source token; a line whose start was consumed by a macro use on
    /// an earlier line is indented to the token's column.
    fn goto(&mut self, at: Loc) {
        if at.line != self.cur {
            self.cur = at.line;
            self.last = None;
        }
        if !self.touched[self.cur] {
            self.touched[self.cur] = true;
            self.lines[self.cur].extend(std::iter::repeat_n(' ', at.off));
        }
    }

    fn emit(&mut self, t: &Tok) {
        if t.src {
            self.goto(t.at);
            if let Some((last, end)) = &self.last {
                if *end != Some(t.at.off) && would_merge(last, t) {
                    self.lines[self.cur].push(' ');
                }
            }
            self.lines[self.cur].push_str(&t.text);
            self.last = Some((t.clone(), Some(t.at.off + t.at.len)));
        } else {
            self.touched[self.cur] = true;
            let line = &mut self.lines[self.cur];
            let after_space = line.is_empty() || line.ends_with([' ', '\t']);
            if (t.space && !after_space)
                || self
                    .last
                    .as_ref()
                    .is_some_and(|(last, _)| would_merge(last, t))
            {
                line.push(' ');
            }
            line.push_str(&t.text);
            self.last = Some((t.clone(), None));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Macros

#[derive(Clone, Debug)]
enum ItemKind {
    Tok(Tok),
    Param(usize),
    Stringize(usize),
    Paste,
    VaOpt(Vec<Item>),
}

#[derive(Clone, Debug)]
struct Item {
    kind: ItemKind,
    space: bool,
}

#[derive(Debug)]
struct Macro {
    function: bool,
    /// The parameters; a variadic macro's last one is `__VA_ARGS__` (or its GNU name).
    params: Vec<Rc<str>>,
    variadic: bool,
    body: Vec<Item>,
    /// The line of its definition (1-based), 0 when predefined.
    line: u32,
    /// Its definition written out, to tell a redefinition from a repetition.
    spelling: String,
}

/// Names that cannot be defined or undefined.
const RESERVED: [&str; 6] = [
    "defined",
    "__LINE__",
    "__FILE__",
    "__VA_ARGS__",
    "__VA_OPT__",
    "_Pragma",
];

/// A conditional (`#if` ... `#endif`) being read.
struct Cond {
    /// Whether the text around it is active.
    parent_active: bool,
    /// Whether the current branch is.
    active: bool,
    /// Whether a branch was taken already.
    taken: bool,
    /// Where its `#else` is, once read.
    else_at: Option<Loc>,
    at: Loc,
    name: String,
}

type ExprResult<T> = Result<T, (Loc, String)>;

struct Pp<'a> {
    lines: &'a [LogicalLine],
    macros: HashMap<Rc<str>, Rc<Macro>>,
    warnings: Vec<(Span, String)>,
    produced: usize,
    /// The tokens the arguments of the macro uses being expanded hold
    /// ([`MAX_ARGUMENT_TOKENS`]).
    arg_tokens: usize,
    /// The logical line of the directive that ends the text being expanded (`None`: the end
    /// of the file).
    group_end: Option<usize>,
    /// Where headers are read from (`None`: `#include` is dropped, as before `-I`).
    inc: Option<Rc<IncludeState>>,
    /// The folder of the file being read (quoted includes are looked for there first).
    dir: Option<PathBuf>,
    /// The header being read (`None`: the checked file).
    file: Option<PathBuf>,
    /// How deeply headers include headers here.
    depth: usize,
    /// The text of each header read, joined into one line, by the logical line of its
    /// `#include`.
    included: Vec<(usize, String)>,
}

impl Pp<'_> {
    fn span(&self, loc: Loc) -> Span {
        let Some(l) = self.lines.get(loc.line) else {
            return Span::default();
        };
        let seg = l
            .segs
            .iter()
            .rev()
            .find(|s| s.log_off <= loc.off)
            .unwrap_or(&l.segs[0]);
        let rel = loc.off - seg.log_off;
        Span {
            offset: seg.src_off + rel,
            len: loc.len,
            line: seg.phys as u32 + 1,
            column: rel as u32 + 1,
        }
    }

    /// The error at `loc` (a predefined macro that cannot be parsed has the default span).
    fn err(&self, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(message).at(self.span(loc))
    }

    /// `#include "name"` / `<name>` with an include path: the header read, preprocessed with
    /// this file's macros and put on the directive's line (`include.rs`).
    fn include(&mut self, rest: &[Tok], loc: Loc) -> Result<(), Diagnostic> {
        let Some(inc) = self.inc.clone() else {
            return Ok(());
        };
        let (name, angled) = match rest.first() {
            Some(t) if t.text.starts_with('"') => (t.text.trim_matches('"').to_string(), false),
            Some(t) if t.is_punct("<") => {
                let inner: String = rest[1..]
                    .iter()
                    .take_while(|t| !t.is_punct(">"))
                    .map(|t| t.text.as_ref())
                    .collect();
                (inner, true)
            }
            _ => {
                self.warn(
                    loc,
                    "a computed `#include` (a macro naming the header) is not read",
                );
                return Ok(());
            }
        };
        let Some(path) = inc.resolve(&name, angled, self.dir.as_deref()) else {
            if angled {
                if !crate::include::is_system_header(&name) {
                    self.warn(loc, format!("`#include <{name}>` is not read: it is neither a system or CUDA header the front-end knows nor found in the -I folders"));
                }
                return Ok(());
            }
            let mut looked: Vec<String> = self
                .dir
                .iter()
                .chain(&inc.path.dirs)
                .map(|d| d.display().to_string())
                .collect();
            if looked.is_empty() {
                looked.push("no folder: give one with -I".into());
            }
            return Err(self.err(
                loc,
                format!(
                    "`#include \"{name}\"`: header not found (looked in: {}; -I DIR adds a folder)",
                    looked.join(", ")
                ),
            ));
        };
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if inc.once.borrow().contains(&key) {
            return Ok(());
        }
        if self.depth >= crate::include::MAX_INCLUDE_DEPTH {
            return Err(self.err(
                loc,
                format!(
                    "headers nested more than {} deep (a header that includes itself?)",
                    crate::include::MAX_INCLUDE_DEPTH
                ),
            ));
        }
        let shown = path.display().to_string();
        let text = crate::include::read_header(&path)
            .map_err(|why| self.err(loc, format!("`{name}` ({shown}) cannot be read: {why}")))?;
        inc.headers.borrow_mut().push(Header {
            name: name.clone(),
            path: path.clone(),
            text: text.clone(),
        });
        let (lines, _) = splice(&text);
        let mut sub = Pp {
            lines: &lines,
            macros: std::mem::take(&mut self.macros),
            warnings: Vec::new(),
            produced: self.produced,
            arg_tokens: 0,
            group_end: None,
            inc: Some(inc.clone()),
            dir: path.parent().map(Path::to_path_buf),
            file: Some(key),
            depth: self.depth + 1,
            included: Vec::new(),
        };
        let mut out = Out::new(lines.len());
        let ran = sub.run(&mut out);
        self.macros = std::mem::take(&mut sub.macros);
        self.produced = sub.produced;
        let at = |s: Span| format!("{shown}:{}:{}", s.line, s.column);
        for (span, w) in std::mem::take(&mut sub.warnings) {
            self.warn(loc, format!("{}: {w}", at(span)));
        }
        if let Err(e) = ran {
            return Err(self.err(
                loc,
                format!(
                    "in the header {}: {}",
                    at(e.span.unwrap_or_default()),
                    e.message
                ),
            ));
        }
        for (k, t) in std::mem::take(&mut sub.included) {
            out.lines[k] = t;
        }
        self.included
            .push((loc.line, crate::include::join_lines(&out.lines)));
        Ok(())
    }

    fn warn(&mut self, loc: Loc, message: impl Into<String>) {
        let span = self.span(loc);
        self.warnings.push((span, message.into()));
    }

    fn predefine(&mut self, name: &str, body: &str) -> Result<(), Diagnostic> {
        let text = format!("{name} {body}").replace(['\n', '\r'], " ");
        let (toks, _) = lex(&text, PREDEFINED_LINE, false);
        let toks: Vec<Tok> = toks.into_iter().filter(|t| !t.is_ws()).collect();
        let fail = |e: Diagnostic| {
            let message = format!("predefined macro `{name}`: {}", e.message);
            e.reworded(message)
        };
        let (key, m) = self
            .parse_macro(
                &toks,
                Loc {
                    line: PREDEFINED_LINE,
                    off: 0,
                    len: 0,
                },
            )
            .map_err(fail)?;
        self.macros.insert(key, Rc::new(m));
        Ok(())
    }

    fn is_defined(&self, name: &str) -> bool {
        self.macros.contains_key(name) || name == "__LINE__" || name == "__FILE__"
    }

    fn run(&mut self, out: &mut Out) -> Result<(), Diagnostic> {
        let mut conds: Vec<Cond> = Vec::new();
        let mut group: VecDeque<Tok> = VecDeque::new();
        let mut in_comment = false;
        let mut i = 0;
        while i < self.lines.len() {
            let starts_in_comment = in_comment;
            let (toks, ends_in_comment) = lex(&self.lines[i].text, i, in_comment);
            let hash = if starts_in_comment {
                None
            } else {
                toks.iter()
                    .position(|t| !t.is_ws())
                    .filter(|&p| toks[p].is_punct("#"))
            };
            match hash {
                Some(h) => {
                    self.group_end = Some(i);
                    self.flush(&mut group, out)?;
                    let mut dtoks: Vec<Tok> = toks[h + 1..]
                        .iter()
                        .filter(|t| !t.is_ws())
                        .cloned()
                        .collect();
                    // A block comment that goes on past the line belongs to the directive.
                    let mut open = ends_in_comment;
                    let mut j = i;
                    while open && j + 1 < self.lines.len() {
                        j += 1;
                        let (more, still) = lex(&self.lines[j].text, j, true);
                        dtoks.extend(more.into_iter().filter(|t| !t.is_ws()));
                        open = still;
                    }
                    in_comment = open;
                    self.directive(&toks[h], &dtoks, &mut conds)?;
                    i = j + 1;
                }
                None => {
                    in_comment = ends_in_comment;
                    if conds.last().is_none_or(|c| c.active) {
                        group.extend(toks);
                    }
                    i += 1;
                }
            }
        }
        self.group_end = None;
        self.flush(&mut group, out)?;
        if let Some(c) = conds.last() {
            return Err(self.err(
                c.at,
                format!(
                    "unterminated #{}: no #endif before the end of the file",
                    c.name
                ),
            ));
        }
        Ok(())
    }
}

mod directive;
mod expand;
mod if_expr;
#[cfg(test)]
mod tests;
