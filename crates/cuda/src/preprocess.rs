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

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::rc::Rc;

use scopecheck_ir::Span;

use crate::include::{Header, IncludePath, IncludeState};
use std::path::{Path, PathBuf};

/// The preprocessed text (as many lines as the source) and the warnings met on the way
/// (`#warning`, a macro redefined differently, extra tokens after a directive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preprocessed {
    pub text: String,
    pub warnings: Vec<(Span, String)>,
}

/// A source the preprocessor refuses: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}", line = span.line, column = span.column)]
pub struct PreprocessError {
    pub message: String,
    /// Where in the source; `span.line` and `span.column` are 1-based (a predefined macro that
    /// cannot be parsed has the default span).
    pub span: Span,
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
pub fn preprocess(
    source: &str,
    predefined: &[(&str, &str)],
) -> Result<Preprocessed, PreprocessError> {
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
) -> Result<(Preprocessed, Vec<Header>), PreprocessError> {
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
) -> Result<Preprocessed, PreprocessError> {
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

    fn err(&self, loc: Loc, message: impl Into<String>) -> PreprocessError {
        PreprocessError {
            message: message.into(),
            span: self.span(loc),
        }
    }

    /// `#include "name"` / `<name>` with an include path: the header read, preprocessed with
    /// this file's macros and put on the directive's line (`include.rs`).
    fn include(&mut self, rest: &[Tok], loc: Loc) -> Result<(), PreprocessError> {
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
            return Err(self.err(loc, format!("in the header {}: {}", at(e.span), e.message)));
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

    fn predefine(&mut self, name: &str, body: &str) -> Result<(), PreprocessError> {
        let text = format!("{name} {body}").replace(['\n', '\r'], " ");
        let (toks, _) = lex(&text, PREDEFINED_LINE, false);
        let toks: Vec<Tok> = toks.into_iter().filter(|t| !t.is_ws()).collect();
        let fail = |e: PreprocessError| PreprocessError {
            message: format!("predefined macro `{name}`: {}", e.message),
            span: e.span,
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

    fn run(&mut self, out: &mut Out) -> Result<(), PreprocessError> {
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

    // -----------------------------------------------------------------------------------------
    // Directives

    fn directive(
        &mut self,
        hash: &Tok,
        toks: &[Tok],
        conds: &mut Vec<Cond>,
    ) -> Result<(), PreprocessError> {
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

    fn extra_tokens(&mut self, directive: &str, rest: &[Tok]) {
        if let Some(t) = rest.first() {
            self.warn(
                t.at,
                format!("extra tokens at end of #{directive} directive"),
            );
        }
    }

    /// Refuses a name that is no identifier, or one of the built-in names.
    fn check_name(&self, t: &Tok, what: &str) -> Result<(), PreprocessError> {
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

    fn define(&mut self, toks: &[Tok], loc: Loc) -> Result<(), PreprocessError> {
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
    fn parse_macro(&self, toks: &[Tok], loc: Loc) -> Result<(Rc<str>, Macro), PreprocessError> {
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
    fn parse_items(
        &self,
        body: &[Tok],
        params: &[Rc<str>],
        function: bool,
        variadic: bool,
        in_va_opt: bool,
    ) -> Result<Vec<Item>, PreprocessError> {
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

    fn condition(&mut self, name: &str, rest: &[Tok], loc: Loc) -> Result<bool, PreprocessError> {
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
    fn replace_defined(&self, toks: &[Tok]) -> Result<Vec<Tok>, PreprocessError> {
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

    // -----------------------------------------------------------------------------------------
    // Expansion

    /// Expands the text lines gathered since the last directive and writes them out.
    fn flush(&mut self, group: &mut VecDeque<Tok>, out: &mut Out) -> Result<(), PreprocessError> {
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
    fn pragma_operator(&self, t: &Tok, q: &mut VecDeque<Tok>) -> Result<(), PreprocessError> {
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
    fn expand_list(&mut self, toks: Vec<Tok>, depth: usize) -> Result<Vec<Tok>, PreprocessError> {
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
    fn try_expand(
        &mut self,
        t: &Tok,
        q: &mut VecDeque<Tok>,
        depth: usize,
    ) -> Result<Option<Vec<Tok>>, PreprocessError> {
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
    fn collect_args(
        &self,
        t: &Tok,
        m: &Macro,
        q: &mut VecDeque<Tok>,
        depth: usize,
    ) -> Result<(Vec<Vec<Tok>>, Tok), PreprocessError> {
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

    fn check_count(&self, t: &Tok, m: &Macro, args: &[Vec<Tok>]) -> Result<(), PreprocessError> {
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
    fn subst(
        &mut self,
        m: &Macro,
        inv: &Tok,
        args: &[Vec<Tok>],
        hs: &Hide,
        depth: usize,
    ) -> Result<Vec<Tok>, PreprocessError> {
        let mut expanded: Vec<Option<Vec<Tok>>> = vec![None; m.params.len()];
        let mut raw = Vec::new();
        self.subst_items(&m.body, m, inv, args, &mut expanded, &mut raw, depth)?;
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

    #[allow(clippy::too_many_arguments)]
    fn subst_items(
        &mut self,
        items: &[Item],
        m: &Macro,
        inv: &Tok,
        args: &[Vec<Tok>],
        expanded: &mut [Option<Vec<Tok>>],
        out: &mut Vec<Tok>,
        depth: usize,
    ) -> Result<(), PreprocessError> {
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
                        if expanded[*p].is_none() {
                            expanded[*p] = Some(self.expand_list(arg(*p).to_vec(), depth + 1)?);
                        }
                        let e = expanded[*p].as_deref().unwrap_or_default();
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
                        self.subst_items(inner, m, inv, args, expanded, out, depth)?;
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
    fn glue(&self, l: Tok, r: Tok, inv: &Tok) -> Result<Tok, PreprocessError> {
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
fn spell(toks: &[Tok]) -> String {
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

// ---------------------------------------------------------------------------------------------
// `#if` expressions

/// An integer of `#if`: `intmax_t` or `uintmax_t`.
#[derive(Clone, Copy, Debug)]
struct Val {
    v: u64,
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

struct Expr<'t> {
    toks: &'t [Tok],
    pos: usize,
    /// Where the expression ends, for "ends too early".
    end: Loc,
    /// How many unary operators and parentheses are open.
    depth: usize,
}

impl Expr<'_> {
    fn parse(&mut self) -> ExprResult<Val> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pp(src: &str) -> String {
        match preprocess(src, &[]) {
            Ok(p) => p.text,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn pp_with(src: &str, predefined: &[(&str, &str)]) -> String {
        match preprocess(src, predefined) {
            Ok(p) => p.text,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    /// The error, as `line:column: message`.
    fn pp_err(src: &str) -> String {
        match preprocess(src, &[]) {
            Ok(p) => panic!("expected an error, got {:?}", p.text),
            Err(e) => e.to_string(),
        }
    }

    fn lines(s: &str) -> usize {
        s.split('\n').count()
    }

    #[test]
    fn object_like_macros() {
        let src = "#define N 4\n#define M (N + 1)\nint a[N]; int b = M;\nint N2 = 0;\n";
        let out = pp(src);
        assert_eq!(out, "\n\nint a[4]; int b = (4 + 1);\nint N2 = 0;\n");
        assert_eq!(lines(out.as_str()), lines(src));
    }

    #[test]
    fn text_without_macros_is_unchanged() {
        let src = "  int  x\t= 1;   // a comment\n\tfloat y = 2.5e+3f; /* c */ char c = 'a';\r\n";
        assert_eq!(pp(src), src);
    }

    #[test]
    fn function_like_macros() {
        let src =
            "#define ADD(a, b) ((a) + (b))\n#define SQ(x) ((x) * (x))\nint z = ADD(1, SQ(2));\n";
        assert_eq!(pp(src), "\n\nint z = ((1) + (((2) * (2))));\n");
    }

    #[test]
    fn function_like_name_without_parenthesis_is_left_alone() {
        let src = "#define F(x) [x]\nint F; int (*p)(int) = F;\nF (1) F(2)\n";
        assert_eq!(pp(src), "\nint F; int (*p)(int) = F;\n[1] [2]\n");
    }

    #[test]
    fn nested_parentheses_and_commas_in_arguments() {
        let src = "#define FIRST(a, b) a\n#define SECOND(a, b) b\nFIRST((1, 2), 3) SECOND(f(x, y), g(z))\n";
        assert_eq!(pp(src), "\n\n(1, 2) g(z)\n");
    }

    #[test]
    fn empty_arguments_and_no_parameters() {
        let src = "#define F() 1\n#define G(x) <x>\n#define H(a, b) a|b\nF() G() H(,) H(1,)\n";
        assert_eq!(pp(src), "\n\n\n1 <> | 1|\n");
    }

    #[test]
    fn self_reference_is_not_expanded_again() {
        let src = "#define foo foo\n#define bar (4 + bar)\n#define x (4 + y)\n#define y (2 * x)\nfoo bar x y\n";
        assert_eq!(
            pp(src),
            "\n\n\n\nfoo (4 + bar) (4 + (2 * x)) (2 * (4 + y))\n"
        );
    }

    #[test]
    fn nested_and_indirect_expansion() {
        // The function-like `f` named by `g` takes its arguments from the text after `g`;
        // `f(f(1))` expands the inner use as an argument, which is no recursion.
        let src = "#define f(x) (x + 1)\n#define g f\n#define h(y) g(y)\ng(2) h(3) f(f(1))\n";
        assert_eq!(pp(src), "\n\n\n(2 + 1) (3 + 1) ((1 + 1) + 1)\n");
    }

    #[test]
    fn stringize() {
        let src = "#define S(x) #x\n#define XS(x) S(x)\n#define N 4\nS(a  +\t b) S(\"q\\n\") S( ) S(N) XS(N)\n";
        assert_eq!(
            pp(src),
            "\n\n\n\"a + b\" \"\\\"q\\\\n\\\"\" \"\" \"N\" \"4\"\n"
        );
    }

    #[test]
    fn token_paste() {
        let src = "#define CAT(a, b) a ## b\n#define XCAT(a, b) CAT(a, b)\n#define N 4\n#define var_4 ok\n\
                   CAT(x, y) CAT(x, ) CAT(, y) CAT(1, 2) CAT(var_, N) XCAT(var_, N) CAT(<, <)\n";
        assert_eq!(pp(src), "\n\n\n\nxy x y 12 var_N ok <<\n");
    }

    #[test]
    fn paste_result_is_rescanned_and_chains() {
        let src = "#define ONE 1\n#define C3(a, b, c) a ## b ## c\n#define MK(n) O ## n\nC3(a, b, c) MK(NE)\n";
        assert_eq!(pp(src), "\n\n\nabc 1\n");
    }

    #[test]
    fn variadic_macros() {
        let src = "#define LOG(fmt, ...) printf(fmt, __VA_ARGS__)\n\
                   #define ELOG(fmt, ...) printf(fmt , ## __VA_ARGS__)\n\
                   #define OPT(x, ...) f(x __VA_OPT__(,) __VA_ARGS__)\n\
                   #define NAMED(args...) g(args)\n\
                   #define ALL(...) #__VA_ARGS__\n\
                   LOG(\"%d %d\", 1, (2, 3)); ELOG(\"x\"); ELOG(\"y\", 7); OPT(1) OPT(1, 2, 3) NAMED(a, b) ALL(p, q)\n";
        assert_eq!(
            pp(src),
            "\n\n\n\n\nprintf(\"%d %d\", 1, (2, 3)); printf(\"x\"); printf(\"y\" , 7); f(1) f(1 , 2, 3) g(a, b) \"p, q\"\n"
        );
    }

    #[test]
    fn continuation_lines_keep_the_line_count() {
        let src = "#define MAX(a, b) \\\n  ((a) > (b) ? \\\n   (a) : (b))\nint m = MAX(1, 2);\nint s = 1 + \\\n 2;\n";
        let out = pp(src);
        assert_eq!(
            out,
            "\n\n\nint m = ((1) > (2) ? (1) : (2));\nint s = 1 +  2;\n\n"
        );
        assert_eq!(lines(&out), lines(src));
    }

    #[test]
    fn multi_line_macro_call_keeps_the_line_count() {
        let src = "#define ADD(a, b) (a + b)\nint x = ADD(1,\n            2\n           ); int y;\nint z;\n";
        let out = pp(src);
        assert_eq!(out, "\nint x = (1 + 2)\n\n            ; int y;\nint z;\n");
        assert_eq!(lines(&out), lines(src));
    }

    #[test]
    fn if_elif_else_with_arithmetic() {
        let src = "#define V 3\n#if V * 2 == 6 && (V << 2) > 10 && -1 < 0 && ~0 == -1\nyes1\n#else\nno1\n#endif\n\
                   #if V % 2 == 0\nno2\n#elif V == 3 ? 0 : 1\nno3\n#elif (V | 4) == 7 && 0x10 == 16 && 010 == 8 && 1u - 2 > 0\nyes2\n#else\nno4\n#endif\n";
        assert_eq!(pp(src), "\n\nyes1\n\n\n\n\n\n\n\n\nyes2\n\n\n\n");
    }

    #[test]
    fn defined_and_ifdef() {
        let src = "#define A\n#if defined(A) && defined A && !defined(B)\n1\n#endif\n\
                   #ifdef B\n2\n#endif\n#ifndef B\n3\n#endif\n#if UNKNOWN == 0 && !UNKNOWN\n4\n#endif\n\
                   #undef A\n#ifdef A\n5\n#endif\n";
        assert_eq!(pp(src), "\n\n1\n\n\n\n\n\n3\n\n\n4\n\n\n\n\n\n");
    }

    #[test]
    fn nested_conditionals_and_inactive_directives() {
        let src = "#if 0\n#if 1\na\n#else\nb\n#endif\n#error not here\n#bogus\n#elif 1\nc\n#if 0\nd\n#elif 1\ne\n#endif\n#else\nf\n#endif\n";
        assert_eq!(pp(src), "\n\n\n\n\n\n\n\n\nc\n\n\n\ne\n\n\n\n\n");
    }

    #[test]
    fn short_circuit_skips_division_by_zero() {
        let src =
            "#if 0 && (1 / 0)\na\n#elif 1 || (2 % 0)\nb\n#endif\n#if 1 ? 2 : 1 / 0\nc\n#endif\n";
        assert_eq!(pp(src), "\n\n\nb\n\n\nc\n\n");
    }

    #[test]
    fn character_constants_and_suffixes_in_if() {
        let src = "#if 'A' == 65 && '\\n' == 10 && '\\x41' == 'A' && 10UL == 10 && 0xffffffffffffffff > 0\nok\n#endif\n";
        assert_eq!(pp(src), "\nok\n\n");
    }

    #[test]
    fn include_and_pragma_are_dropped() {
        let src = "#include <cuda/atomic>\n#include \"local.h\"\n#pragma once\n  #  pragma unroll 4\nint x;\n_Pragma(\"unroll\") int y;\n";
        assert_eq!(pp(src), "\n\n\n\nint x;\n int y;\n");
        // The user's own header is not read, and the output says so at its line.
        let out = preprocess(src, &[]).expect("preprocesses");
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].0.line, 2);
        assert!(
            out.warnings[0].1.contains("is not read"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn no_expansion_in_strings_and_comments() {
        let src = "#define X 1\nchar *s = \"X\"; char c = 'X'; // X\nint a = X; /* X\nstill X\n */ int b = X;\n";
        assert_eq!(
            pp(src),
            "\nchar *s = \"X\"; char c = 'X'; // X\nint a = 1; /* X\nstill X\n */ int b = 1;\n"
        );
    }

    #[test]
    fn directives_inside_comments_are_text() {
        let src = "/*\n#define X 2\n*/\nX\n#define Y 1 /* a comment\n that goes on */\nY\n";
        assert_eq!(pp(src), "/*\n#define X 2\n*/\nX\n\n\n1\n");
    }

    #[test]
    fn predefined_and_builtin_macros() {
        let src = "#if __CUDA_ARCH__ >= 700 && defined(__CUDACC__)\nint arch = __CUDA_ARCH__;\n#endif\nint l = __LINE__; const char *f = __FILE__;\nM(2)\n";
        let out = pp_with(
            src,
            &[
                ("__CUDACC__", "1"),
                ("__CUDA_ARCH__", "900"),
                ("M(x)", "x * x"),
            ],
        );
        assert_eq!(
            out,
            "\nint arch = 900;\n\nint l = 4; const char *f = \"input\";\n2 * 2\n"
        );
    }

    #[test]
    fn line_macro_in_a_macro_body_gives_the_line_of_the_use() {
        let src = "#define HERE __LINE__\n\n\nint a = HERE;\n";
        assert_eq!(pp(src), "\n\n\nint a = 4;\n");
    }

    #[test]
    fn expansions_do_not_paste_tokens() {
        let src = "#define MINUS -\n#define E\nint a = -MINUS 1; int b = x/E/y; int c = MINUS-1;\n";
        assert_eq!(pp(src), "\n\nint a = - - 1; int b = x/ /y; int c = - -1;\n");
    }

    #[test]
    fn redefinition_warns_and_warning_directive() {
        let src = "#define A 1\n#define A 1\n#define A 2\n#warning careful here\nA\n";
        let p = preprocess(src, &[]).expect("preprocesses");
        assert_eq!(p.text, "\n\n\n\n2\n");
        let w: Vec<(u32, u32, &str)> = p
            .warnings
            .iter()
            .map(|(s, m)| (s.line, s.column, m.as_str()))
            .collect();
        assert_eq!(
            w,
            vec![
                (3, 9, "macro `A` redefined (it was defined at line 1)"),
                (4, 1, "#warning careful here"),
            ]
        );
    }

    #[test]
    fn error_directive() {
        assert_eq!(
            pp_err("#if 1\n#error stop \"now\"\n#endif\n"),
            "2:1: #error stop \"now\""
        );
    }

    #[test]
    fn line_and_unknown_directives_are_errors() {
        assert_eq!(pp_err("int x;\n#line 10\n"), "2:1: #line is not supported");
        assert_eq!(
            pp_err("\n# 3 \"file.cu\"\n"),
            "2:1: line markers (`# 3`) are not supported"
        );
        assert_eq!(
            pp_err("\n\n  #frobnicate x\n"),
            "3:3: unknown directive #frobnicate"
        );
        assert_eq!(pp_err("#ident \"v1\"\n"), "1:1: unknown directive #ident");
    }

    #[test]
    fn unbalanced_conditionals_are_errors() {
        assert_eq!(pp_err("a\n#endif\n"), "2:1: #endif without #if");
        assert_eq!(pp_err("#else\n"), "1:1: #else without #if");
        assert_eq!(pp_err("\n#elif 1\n"), "2:1: #elif without #if");
        assert_eq!(
            pp_err("#if 1\n#else\n#else\n#endif\n"),
            "3:1: #else after #else (line 2)"
        );
        assert_eq!(
            pp_err("#ifdef A\n#else\n#elif 1\n#endif\n"),
            "3:1: #elif after #else (line 2)"
        );
        assert_eq!(
            pp_err("x\n#if 1\n#ifndef Q\n#endif\ny\n"),
            "2:1: unterminated #if: no #endif before the end of the file"
        );
    }

    #[test]
    fn bad_if_expressions_are_errors() {
        assert_eq!(
            pp_err("\n#if 1 / 0\n#endif\n"),
            "2:7: division by zero in #if"
        );
        assert_eq!(
            pp_err("#if 3 % (2 - 2)\n#endif\n"),
            "1:7: division by zero in #if"
        );
        assert_eq!(pp_err("#if\n#endif\n"), "1:1: #if with no expression");
        assert_eq!(
            pp_err("#if (1\n#endif\n"),
            "1:6: expected `)` at the end of the #if expression"
        );
        assert_eq!(
            pp_err("#if 1 2\n#endif\n"),
            "1:7: unexpected `2` in #if expression (missing operator?)"
        );
        assert_eq!(
            pp_err("#if 1.5\n#endif\n"),
            "1:5: floating-point constant `1.5` in #if"
        );
        assert_eq!(
            pp_err("#if __has_include(<x.h>)\n#endif\n"),
            "1:5: `__has_include` is not supported (headers are not read)"
        );
        assert_eq!(
            pp_err("#if defined\n#endif\n"),
            "1:5: operator `defined` requires an identifier"
        );
        assert_eq!(pp_err("#ifdef\n#endif\n"), "1:1: #ifdef needs a macro name");
    }

    #[test]
    fn wrong_argument_counts_are_errors() {
        let defs = "#define F(a, b) a b\n#define G() g\n#define V(a, b, ...) a\n";
        assert_eq!(
            pp_err(&format!("{defs}int x;\n  y = F(1);\n")),
            "5:7: macro `F` takes 2 arguments, but 1 was given"
        );
        assert_eq!(
            pp_err(&format!("{defs}F(1, 2, 3)\n")),
            "4:1: macro `F` takes 2 arguments, but 3 were given"
        );
        assert_eq!(
            pp_err(&format!("{defs}z G(1)\n")),
            "4:3: macro `G` takes no arguments, but 1 was given"
        );
        assert_eq!(
            pp_err(&format!("{defs}V(1)\n")),
            "4:1: macro `V` takes at least 2 arguments, but 1 was given"
        );
    }

    #[test]
    fn unterminated_macro_calls_are_errors() {
        assert_eq!(
            pp_err("#define F(x) x\nint a = F(1,\n"),
            "2:9: unterminated argument list invoking macro `F`: the file ends before its `)`"
        );
        assert_eq!(
            pp_err("#define F(x) x\nF(1\n#ifdef A\n)\n#endif\n"),
            "2:1: unterminated argument list invoking macro `F`: the directive at line 3 comes \
             before its `)` (directives inside macro arguments are not supported)"
        );
    }

    #[test]
    fn bad_definitions_are_errors() {
        assert_eq!(pp_err("#define\n"), "1:1: #define needs a macro name");
        assert_eq!(
            pp_err("#define 3 x\n"),
            "1:9: macro names must be identifiers, found `3`"
        );
        assert_eq!(
            pp_err("#define defined 1\n"),
            "1:9: `defined` cannot be defined"
        );
        assert_eq!(
            pp_err("#define F(a, a) a\n"),
            "1:14: duplicate macro parameter `a`"
        );
        assert_eq!(
            pp_err("#define F(a b\n"),
            "1:13: expected `,` or `)` in the parameter list of macro `F`, found `b`"
        );
        assert_eq!(
            pp_err("#define F(a,\n"),
            "1:9: missing `)` in the parameter list of macro `F`"
        );
        assert_eq!(
            pp_err("#define S(x) #y\n"),
            "1:14: `#` is not followed by a macro parameter"
        );
        assert_eq!(
            pp_err("#define P(x) ## x\n"),
            "1:14: `##` cannot appear at either end of a macro body"
        );
        assert_eq!(
            pp_err("#define Q __VA_ARGS__\n"),
            "1:11: `__VA_ARGS__` can only appear in the body of a variadic macro declared with `...`"
        );
    }

    #[test]
    fn invalid_paste_is_an_error() {
        assert_eq!(
            pp_err("#define CAT(a, b) a ## b\nx\n  CAT(+, /)\n"),
            "3:3: pasting `+` and `/` does not give a valid preprocessing token"
        );
    }

    #[test]
    fn error_positions_on_continued_lines() {
        assert_eq!(
            pp_err("#if 1 + \\\n   (2 / 0)\n#endif\n"),
            "2:7: division by zero in #if"
        );
    }

    #[test]
    fn bad_predefined_macro_is_an_error() {
        let e = preprocess("x\n", &[("F(a,", "")]).expect_err("refused");
        assert_eq!(
            e.message,
            "predefined macro `F(a,`: missing `)` in the parameter list of macro `F`"
        );
        assert_eq!(e.span, Span::default());
    }

    #[test]
    fn realistic_cuda_snippet() {
        let src = "\
#include <cuda/atomic>
#define N 4
#define IDX(b, t) ((b) * blockDim.x + (t))
#ifndef __CUDA_ARCH__
#error device code only
#endif
__device__ int data[N];
__global__ void k(int *flag) {
    int i = IDX(blockIdx.x,
                threadIdx.x);
    #pragma unroll
    for (int j = 0; j < N; ++j) {
        data[j] = i; // N stays in this comment
    }
    atomicExch(flag, 1);
}
";
        let out = pp_with(src, &[("__CUDACC__", "1"), ("__CUDA_ARCH__", "900")]);
        let got: Vec<&str> = out.split('\n').collect();
        let want = vec![
            "",
            "",
            "",
            "",
            "",
            "",
            "__device__ int data[4];",
            "__global__ void k(int *flag) {",
            "    int i = ((blockIdx.x) * blockDim.x + (threadIdx.x))",
            "                            ;",
            "",
            "    for (int j = 0; j < 4; ++j) {",
            "        data[j] = i; // N stays in this comment",
            "    }",
            "    atomicExch(flag, 1);",
            "}",
            "",
        ];
        assert_eq!(got, want);
        assert_eq!(
            pp_err(src),
            "5:1: #error device code only",
            "without __CUDA_ARCH__ the #error fires"
        );
    }

    #[test]
    fn crlf_line_endings_are_kept() {
        let src = "#define A 1\r\nint x = A;\r\nint y;\r\n";
        assert_eq!(pp(src), "\r\nint x = 1;\r\nint y;\r\n");
    }

    #[test]
    fn raw_strings_and_prefixed_literals_are_not_expanded() {
        let src = "#define X 1\nauto a = R\"(X)\"; auto b = u8\"X\"; auto c = L'X'; auto d = X;\n";
        assert_eq!(
            pp(src),
            "\nauto a = R\"(X)\"; auto b = u8\"X\"; auto c = L'X'; auto d = 1;\n"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let src = format!("#if {}1{}\n#endif\n", "(".repeat(5000), ")".repeat(5000));
        assert_eq!(pp_err(&src), "1:205: #if expression nested too deeply");
        let src = format!(
            "#define F(x) x\n{}1{}\n",
            "F(".repeat(5000),
            ")".repeat(5000)
        );
        assert!(pp_err(&src).contains("macro uses nested too deeply"));
    }

    #[test]
    fn argument_naming_the_macro_stays_unexpanded() {
        let src = "#define f(x) x\n#define g(x) x(2)\nf(f)(1) g(f)\n";
        assert_eq!(pp(src), "\n\nf(1) 2\n");
    }

    #[test]
    fn reserved_names_cannot_be_redefined() {
        assert_eq!(
            pp_err("#undef __LINE__\n"),
            "1:8: `__LINE__` cannot be undefined"
        );
        assert_eq!(
            pp_err("#define __FILE__ x\n"),
            "1:9: `__FILE__` cannot be defined"
        );
    }

    /// The examples of the C standard (C11 6.10.3.5, examples 3, 4 and 7).
    #[test]
    fn c_standard_examples() {
        let src = "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n\
                   #define z z[0]\n#define h g(~\n#define m(a) a(w)\n#define w 0,1\n#define t(a) a\n\
                   #define p() int\n#define q(x) x\n#define r(x,y) x ## y\n#define str(x) # x\n\
                   f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);\ng(x+(3,4)-w) | h 5) & m\n(f)^m(m);\n\
                   p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };\n\
                   char c[2][6] = { str(hello), str() };\n";
        let out = pp(src);
        let got: Vec<&str> = out.split('\n').skip(14).collect();
        assert_eq!(
            got,
            vec![
                "f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1);",
                "f(2 * (2+(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1))",
                "   ^m(0,1);",
                "int i[] = { 1, 23, 4, 5,  };",
                "char c[2][6] = { \"hello\", \"\" };",
                "",
            ]
        );
        let src =
            "#define hash_hash # ## #\n#define mkstr(a) # a\n#define in_between(a) mkstr(a)\n\
                   #define join(c, d) in_between(c hash_hash d)\nchar p[] = join(x, y);\n";
        assert_eq!(pp(src), "\n\n\n\nchar p[] = \"x ## y\";\n");
        let src = "#define debug(...) fprintf(stderr, __VA_ARGS__)\n\
                   #define showlist(...) puts(#__VA_ARGS__)\n\
                   #define report(test, ...) ((test)?puts(#test): printf(__VA_ARGS__))\n\
                   debug(\"Flag\");\ndebug(\"X = %d\\n\", x);\nshowlist(The first, second, and third items.);\n\
                   report(x>y, \"x is %d but y is %d\", x, y);\n";
        assert_eq!(
            pp(src),
            "\n\n\nfprintf(stderr, \"Flag\");\nfprintf(stderr, \"X = %d\\n\", x);\n\
             puts(\"The first, second, and third items.\");\n\
             ((x>y)?puts(\"x>y\"): printf(\"x is %d but y is %d\", x, y));\n"
        );
    }

    #[test]
    fn adjacent_expansions_are_kept_apart() {
        let src = "#define K k<<<1, 2>>>\nK(p);\n#define A(x) x\nA(a)A(b) A(+)A(+) A(-)>\n";
        assert_eq!(pp(src), "\nk<<<1, 2>>>(p);\n\na b + + - >\n");
    }
}
