//! The CUDA source front-end: a `.cu` file with `__device__` globals, `__global__` kernels,
//! `__device__` helpers and a harness `void scopecheck_main()` (or, without one, `int main()`)
//! written in ordinary CUDA host code, lowered to a scopecheck [`Program`].
//!
//! The file is parsed with the `tree-sitter-cuda` grammar (a real C++/CUDA parser: no text
//! matching); a syntax error is reported at its ERROR node. Lowering then *runs the harness at
//! compile time*: allocations become locations, `k<<<B, T>>>(args)` makes one IR thread per
//! (block, thread) of the launch with `blockIdx`, `threadIdx`, `blockDim` and `gridDim` folded
//! in as constants, kernels and `__device__` helpers are inlined into each thread, and the
//! stream rules of CUDA become [`Thread::after`](scopecheck_ir::Thread::after) edges:
//!
//! - a launch on a stream starts after every earlier launch on that stream finished; the
//!   default stream (`0`, or no stream) is the *legacy* default stream: a launch on it waits for
//!   every earlier launch, and a launch on a created stream waits for earlier default-stream
//!   launches;
//! - host code runs as host threads (`Placement::Host`): a new host thread starts at each launch
//!   that follows host code (the launch waits for it) and at each `cudaDeviceSynchronize()` /
//!   `cudaStreamSynchronize(s)` (the new host thread waits for the synchronized kernels);
//! - every `assert(e)`, in host code or in a kernel, accumulates `e != 0` into a register of its
//!   thread that starts at 1; the program's condition is `forall` of those registers being
//!   non-zero, so the result is `Ok` exactly when every assertion holds in every execution.
//!
//! The CUDA and libcu++ synchronization calls lower exactly as in the C litmus dialect
//! (`docs/litmus-c.md`, table "Lowering"). Values are integers of the C type their declaration
//! gives (LP64: `int` and `unsigned` 32-bit, `long`, `long long` and `size_t` 64-bit, `short`
//! 16, `char` 8 and signed, `bool` taken as `int`; OpenCL `uint`, `ulong`, `atomic_uint`, ...):
//! each location, access and register has its type, arithmetic follows C's usual arithmetic
//! conversions and assignments convert, as in the C litmus dialect. `float` and `double` are
//! IEEE-754 values held as their bits (`scopecheck_ir::float`): constants are the nearest
//! float or double, arithmetic rounds to nearest even as the GPU does, conversions follow C
//! (a float to an integer truncates; out of range is undefined behaviour, a fault), and
//! `atomicAdd`/`atomicExch` on them are float atomics. An array index that folds to a constant names
//! its element (out of range, an error); one computed at run time indexes the array, and the
//! explorer checks its bounds (out of bounds is a fault at the line). Shared memory
//! (`__shared__`) has one copy per block, named `s@b0`, `s@b1`, ... after the CTA number; each
//! launch gets its own range of CTA numbers. See `docs/cuda.md` for the accepted subset.

mod compilation;
mod compile_options;
mod device_source;
#[cfg(test)]
mod hostile_tests;
mod include;
mod kernels;
mod lower;
mod nesting;
mod preprocess;
mod ptx_view;
#[cfg(test)]
mod tests;
mod unoptimized;

pub use compilation::Compilation;
pub use compile_options::{cplusplus, parse_arch, CompileOptions, CUDA_VERSION};
pub use device_source::device_source;
pub use include::{Header, IncludePath};
pub use kernels::{
    parse_dims, BufferInit, KernelChoice, LaunchOptions, LaunchSource, Planned, DEFAULT_BLOCK,
    DEFAULT_GRID,
};
pub use nesting::MAX_NESTING;
pub use preprocess::{
    preprocess, preprocess_with, Preprocessed, MAX_ARGUMENT_TOKENS, MAX_MACRO_NESTING,
};
pub use ptx_view::{ptx_file_view, ptx_view, PtxView, PtxViewError};
use scopecheck_ir::{Diagnostic, Program, Span};
pub use unoptimized::Unoptimized;

/// The number of device threads all launches together may make unless
/// [`CudaOptions::max_threads`] says otherwise: one block of CUDA's largest size. What bounds
/// the work is [`DEFAULT_MAX_SHARED_THREADS`]: threads that share no written location with
/// another cost their own steps only (docs/kernels.md, "Thread limits").
pub const DEFAULT_MAX_THREADS: usize = 1024;

/// The number of threads that may share a written location with another thread unless
/// [`CudaOptions::max_shared_threads`] says otherwise: the executions of such threads grow
/// exponentially with their number (a plain `+=` on one word by every thread: 64 executions at
/// 4 threads, 518,400 at 6).
pub const DEFAULT_MAX_SHARED_THREADS: usize = 8;

/// How deeply `__device__` function calls may nest when inlined (recursion is refused).
pub const MAX_INLINE_DEPTH: usize = 16;

/// The most elements one allocation or array may have (each element is a location).
pub const MAX_ARRAY_ELEMENTS: usize = 64;

/// The most elements a declared array (`__shared__ float t[32][33]`, `__device__ int g[N]`, a
/// host array) may have: its size is the user's, and a tile as kernels declare it (32 x 33)
/// is 1,056 locations, of which a small launch touches a few; those never touched cost the
/// explorer nothing but their place in the program. Allocations and buffers, whose sizes the
/// tool chooses, keep [`MAX_ARRAY_ELEMENTS`].
pub const MAX_DECLARED_ELEMENTS: usize = 4096;

/// The most arrays, allocations and variables in memory one file may make (each a range
/// of locations); checked before each is allocated.
pub const MAX_ALLOCATIONS: usize = 4096;

/// The most memory locations one file may make (each element, and each field of a struct
/// element, is one).
pub const MAX_LOCATIONS: usize = 65_536;

/// Options of the front-end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaOptions {
    /// The most device threads all launches of the harness may make together.
    pub max_threads: usize,
    /// The most threads that may share a written location with another thread: a kernel's
    /// launch past it is checked smaller, a harness past it is refused (the caller applies
    /// it once the program is built: `scopecheck_explore::sharing`).
    pub max_shared_threads: usize,
    /// Whether kernels are lowered from the source (the language-level view) or left to the
    /// PTX view, which gives their threads NVRTC's code: then only the harness is read, and
    /// device code the language-level front-end cannot lower (templates, classes, ...) is
    /// passed over.
    pub kernels: KernelSource,
    /// For a `.ptx` input: the `.cu` file whose harness launches its kernels ([`ptx_file_view`]).
    pub harness: Option<std::path::PathBuf>,
    /// How kernel-only files are launched (`--kernel`, `--grid`, `--arg`, ...).
    pub launch: LaunchOptions,
    /// The kernel of a kernel-only file being checked ([`plan_kernels`]): a harness launching
    /// it is added to the file.
    pub kernel: Option<KernelChoice>,
    /// `-I`, `-D`, `-U`, `-include`, `-std`, `--arch`, for both views.
    pub compile: CompileOptions,
}

/// Where kernel threads get their code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelSource {
    /// Lowered from the CUDA source (scoped C11 semantics of each operation).
    #[default]
    Source,
    /// Left empty for the PTX view to fill ([`ptx_view`]).
    Ptx,
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions {
            max_threads: DEFAULT_MAX_THREADS,
            max_shared_threads: DEFAULT_MAX_SHARED_THREADS,
            kernels: KernelSource::Source,
            harness: None,
            launch: LaunchOptions::default(),
            kernel: None,
            compile: CompileOptions::default(),
        }
    }
}

/// Parses and lowers a CUDA file with the default options.
pub fn parse_cuda(source: &str) -> Result<(Program, Vec<Diagnostic>), Diagnostic> {
    parse_cuda_with(source, &CudaOptions::default())
}

/// Macros predefined for device code as NVCC compiles it for sm_90.
const CUDA_PREDEFINED: &[(&str, &str)] = &[
    ("__CUDACC__", "1"),
    ("__NVCC__", "1"),
    ("__CUDA_ARCH__", "900"),
    ("__cplusplus", "201703L"),
    // Alignment changes no value the models see (the PTX view takes NVRTC's own layout).
    ("__align__(n)", ""),
];

/// The integer limits of `<climits>` (C++), `<limits.h>` (C) and OpenCL C's built-in ones, as
/// on the 64-bit targets both compile for (`long` is 64-bit).
const INTEGER_LIMITS: &[(&str, &str)] = &[
    ("CHAR_BIT", "8"),
    ("SCHAR_MIN", "(-128)"),
    ("SCHAR_MAX", "127"),
    ("UCHAR_MAX", "255"),
    ("SHRT_MIN", "(-32768)"),
    ("SHRT_MAX", "32767"),
    ("USHRT_MAX", "65535"),
    ("INT_MIN", "(-2147483647 - 1)"),
    ("INT_MAX", "2147483647"),
    ("UINT_MAX", "4294967295U"),
    ("LONG_MIN", "(-9223372036854775807L - 1)"),
    ("LONG_MAX", "9223372036854775807L"),
    ("LLONG_MIN", "(-9223372036854775807LL - 1)"),
    ("LLONG_MAX", "9223372036854775807LL"),
];

/// Macros predefined for OpenCL C 2.0.
const OPENCL_PREDEFINED: &[(&str, &str)] = &[
    ("__OPENCL_VERSION__", "200"),
    ("__OPENCL_C_VERSION__", "200"),
    ("CL_VERSION_2_0", "200"),
];

/// One kernel launch of a harness, as the PTX view needs it: the kernel, its grid and block,
/// its arguments, and the IR threads the launch made (block-major, `x` fastest), whose code
/// the PTX view replaces with the kernel's PTX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLaunch {
    /// The kernel's name as the source writes it (unmangled).
    pub kernel: String,
    /// The kernel as the launch names it, template arguments included (`sum<4>`): the name
    /// expression NVRTC instantiates and reports the mangled name of.
    pub expression: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory per block (the third `<<<...>>>` argument).
    pub shared_bytes: u32,
    pub args: Vec<LaunchArg>,
    pub threads: Vec<scopecheck_ir::ThreadId>,
    /// The launch statement.
    pub span: Span,
}

/// A kernel argument: a value, or a pointer to a location (the element it points at).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchArg {
    Value(scopecheck_ir::Value),
    Pointer(scopecheck_ir::LocId),
    /// A struct passed by value: each field at its byte offset in C's layout.
    Struct(Vec<(i64, LaunchArg)>),
    /// An argument the PTX view cannot pass (a pointer to shared memory).
    Other,
}

/// Lowers a CUDA file as [`parse_cuda_with`] does, and also returns its kernel launches.
pub fn parse_cuda_launches(
    source: &str,
    options: &CudaOptions,
) -> Result<(Program, Vec<Diagnostic>, Vec<KernelLaunch>), Diagnostic> {
    preprocessed(source, false, options, |text| {
        with_kernel_harness(source, text, false, options, |t| {
            parse_cuda_text(t, options)
        })
    })
}

/// The kernels of a file without a harness to check, each with its launch, or why one cannot
/// be checked; `None` when the file has a harness (or cannot be parsed: checking it says why).
/// See `kernels.rs`.
pub fn plan_kernels(
    source: &str,
    opencl: bool,
    options: &CudaOptions,
) -> Result<Option<Vec<Planned>>, Diagnostic> {
    let pre = match run_preprocessor(source, opencl, options) {
        Ok((p, _)) => p,
        Err(_) => return Ok(None),
    };
    let masked = masked_text(&pre.text, opencl);
    kernels::plan(&pre.text, &masked, source, opencl, options)
}

/// `text` with its OpenCL qualifiers blanked (unchanged for CUDA).
fn masked_text(text: &str, opencl: bool) -> String {
    if !opencl {
        return text.to_string();
    }
    let mut masked = text.as_bytes().to_vec();
    for q in opencl_qualifiers(text) {
        masked[q.start..q.end].fill(b' ');
    }
    String::from_utf8(masked).unwrap_or_else(|_| text.to_string())
}

/// Runs `then` on the preprocessed `text`, with the harness of the kernel `options.kernel`
/// names appended when there is one: the harness's positions answer for the kernel's name.
fn with_kernel_harness(
    raw: &str,
    text: &str,
    opencl: bool,
    options: &CudaOptions,
    then: impl FnOnce(&str) -> Result<(Program, Vec<Diagnostic>, Vec<KernelLaunch>), Diagnostic>,
) -> Result<(Program, Vec<Diagnostic>, Vec<KernelLaunch>), Diagnostic> {
    let Some(choice) = &options.kernel else {
        return then(text);
    };
    let masked = masked_text(text, opencl);
    let (harness, at) = kernels::harness_text(text, &masked, raw, opencl, choice)?;
    let lines = text.split('\n').count() as u32;
    let fix = |s: Span| if s.line > lines { at } else { s };
    let full = format!("{text}{harness}");
    let (mut program, mut warnings, extra) = then(&full).map_err(|e| {
        if e.line() > lines {
            Diagnostic::error(format!(
                "in the launch of kernel `{}` ({}): {}",
                choice.name,
                choice.launch_text(opencl),
                e.message
            ))
            .at(at)
        } else {
            e
        }
    })?;
    kernels::respan(&mut program, fix);
    let mut extra = extra;
    for l in &mut extra {
        l.span = fix(l.span);
    }
    for w in &mut warnings {
        w.span = w.span.map(fix);
    }
    if choice.asked.is_some() {
        warnings.insert(
            0,
            Diagnostic::warning(format!(
                "kernel `{}` {}",
                choice.name,
                choice.describe(opencl)
            ))
            .at(at),
        );
    }
    Ok((program, warnings, extra))
}

/// Runs the preprocessor, then `then` on its output, and maps every span back to the file as
/// written.
fn preprocessed<T>(
    source: &str,
    opencl: bool,
    options: &CudaOptions,
    then: impl FnOnce(&str) -> Result<(Program, Vec<Diagnostic>, T), Diagnostic>,
) -> Result<(Program, Vec<Diagnostic>, T), Diagnostic> {
    let (pre, _) = run_preprocessor(source, opencl, options)?;
    let map = LineMap::new(source, &pre.text);
    let (mut program, mut warnings, extra) = then(&pre.text).map_err(|e| {
        let span = e.span.map(|s| map.span(s));
        e.at_span(span)
    })?;
    map.program(&mut program);
    for w in &mut warnings {
        w.span = w.span.map(|s| map.span(s));
    }
    let mut all: Vec<Diagnostic> = pre
        .warnings
        .into_iter()
        .map(|(span, message)| Diagnostic::warning(message).at(span))
        .collect();
    all.append(&mut warnings);
    Ok((program, all, extra))
}

/// Preprocesses `source` as the front-end reads it: the language's macros, nvcc's on Linux,
/// the command line's `-D` / `-U`, headers from the include path (`-include` ones first, on
/// the first line); also returns the headers read.
pub fn run_preprocessor(
    source: &str,
    opencl: bool,
    options: &CudaOptions,
) -> Result<(Preprocessed, Vec<Header>), Diagnostic> {
    let base = if opencl {
        OPENCL_PREDEFINED
    } else {
        CUDA_PREDEFINED
    };
    let macros = options.compile.macros(opencl, base);
    let all: Vec<(&str, &str)> = macros
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .chain(INTEGER_LIMITS.iter().copied())
        .collect();
    // `-include FILE`: as if the file began with `#include "FILE"`, on its first line.
    let n = options.compile.pre_includes.len();
    let mut source = std::borrow::Cow::Borrowed(source);
    if n > 0 {
        let pre: String = options
            .compile
            .pre_includes
            .iter()
            .map(|p| format!("#include \"{}\"\n", p.display()))
            .collect();
        source = std::borrow::Cow::Owned(format!("{pre}{source}"));
    }
    let prefix = source.len() - source.lines().skip(n).collect::<Vec<_>>().join("\n").len();
    let shift = |span: &mut Span| {
        span.line = span.line.saturating_sub(n as u32).max(1);
        span.offset = span.offset.saturating_sub(prefix);
    };
    let (mut pre, headers) =
        preprocess_with(&source, &all, &options.compile.include).map_err(|mut e| {
            if let (Some(span), true) = (&mut e.span, n > 0) {
                shift(span);
            }
            e
        })?;
    if n > 0 {
        // The pre-included headers' lines go to the file's first line.
        let mut lines: Vec<&str> = pre.text.split('\n').collect();
        let rest = lines.split_off((n + 1).min(lines.len()));
        let first = lines.join(" ");
        pre.text = std::iter::once(first.as_str())
            .chain(rest)
            .collect::<Vec<_>>()
            .join("\n");
        for (span, _) in &mut pre.warnings {
            shift(span);
        }
    }
    Ok((pre, headers))
}

/// Spans in the preprocessor's output, mapped back to the file as written. The preprocessor
/// keeps every line where it was, and a line without a macro use byte for byte; on a line
/// where a macro expanded, a span keeps its line and is clamped to it.
struct LineMap<'a> {
    /// (offset, text) of each line of the file as written.
    written: Vec<(usize, &'a str)>,
    /// Each line of the preprocessed text.
    expanded: Vec<&'a str>,
}

impl<'a> LineMap<'a> {
    fn new(written: &'a str, expanded: &'a str) -> Self {
        let mut lines = Vec::new();
        let mut at = 0;
        for l in written.split('\n') {
            lines.push((at, l));
            at += l.len() + 1;
        }
        LineMap {
            written: lines,
            expanded: expanded.split('\n').collect(),
        }
    }

    fn span(&self, s: Span) -> Span {
        let Some(&(start, text)) = self.written.get((s.line as usize).wrapping_sub(1)) else {
            return s;
        };
        if self.expanded.get(s.line as usize - 1) == Some(&text) {
            return Span {
                offset: start + s.column as usize - 1,
                ..s
            };
        }
        let col = (s.column as usize - 1).min(text.len());
        Span {
            offset: start + col,
            len: s.len.min(text.len() - col),
            line: s.line,
            column: col as u32 + 1,
        }
    }

    fn program(&self, p: &mut Program) {
        for l in &mut p.locations {
            l.span = l.span.map(|s| self.span(s));
        }
        for t in &mut p.threads {
            t.span = t.span.map(|s| self.span(s));
            for i in &mut t.code {
                i.span = self.span(i.span);
            }
        }
        p.condition.span = p.condition.span.map(|s| self.span(s));
    }
}

/// Parses and lowers a CUDA file: preprocessed first (`#define`, `#if`, `#include` of
/// headers the front-end knows), as NVCC's device pass sees it.
pub fn parse_cuda_with(
    source: &str,
    options: &CudaOptions,
) -> Result<(Program, Vec<Diagnostic>), Diagnostic> {
    parse_cuda_launches(source, options).map(|(p, w, _)| (p, w))
}

fn parse_cuda_text(
    source: &str,
    options: &CudaOptions,
) -> Result<(Program, Vec<Diagnostic>, Vec<KernelLaunch>), Diagnostic> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .map_err(|e| Diagnostic::error(format!("internal: grammar: {e}")).at(Span::default()))?;
    let tree = parser.parse(source, None).ok_or_else(|| {
        Diagnostic::error("internal: the parser gave no tree").at(Span::default())
    })?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(syntax_error(root, source));
    }
    lower::lower(source, root, options, None)
}

/// Parses and lowers an OpenCL C file (`.cl`): `__kernel` functions with `__global` /
/// `__local` parameters and a harness `void scopecheck_main()` written with the OpenCL host
/// calls. The grammar does not know the OpenCL address-space and kernel qualifiers, so they are
/// blanked out (replaced by as many spaces: every position stays exact) before parsing and
/// remembered by position; see [`opencl_qualifiers`].
pub fn parse_opencl_with(
    source: &str,
    options: &CudaOptions,
) -> Result<(Program, Vec<Diagnostic>), Diagnostic> {
    preprocessed(source, true, options, |text| {
        with_kernel_harness(source, text, true, options, |t| {
            parse_opencl_text(t, options)
        })
    })
    .map(|(p, w, _)| (p, w))
}

fn parse_opencl_text(
    source: &str,
    options: &CudaOptions,
) -> Result<(Program, Vec<Diagnostic>, Vec<KernelLaunch>), Diagnostic> {
    let quals = opencl_qualifiers(source);
    let mut masked = source.as_bytes().to_vec();
    for q in &quals {
        masked[q.start..q.end].fill(b' ');
    }
    let masked = String::from_utf8(masked)
        .map_err(|_| Diagnostic::error("internal: masking broke UTF-8").at(Span::default()))?;
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .map_err(|e| Diagnostic::error(format!("internal: grammar: {e}")).at(Span::default()))?;
    let tree = parser.parse(&masked, None).ok_or_else(|| {
        Diagnostic::error("internal: the parser gave no tree").at(Span::default())
    })?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(syntax_error(root, source));
    }
    lower::lower(source, root, options, Some(quals))
}

/// An OpenCL qualifier in the source: its byte range and its word without underscores
/// (`kernel`, `global`, `local`, `constant`, `private`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClQualifier {
    pub start: usize,
    pub end: usize,
    pub word: &'static str,
}

/// The OpenCL qualifiers of a source, found by a small C tokenizer (comments, string and
/// character literals are skipped): `__kernel`, `__global`, `__local`, `__constant`,
/// `__private` (and `__read_only` / `__write_only`, kept as `private`) always; the short
/// spellings `kernel`, `global`, `local`, `constant` only when a word follows them (`global
/// int* p`), so that a host variable named `global` or `local` stays a variable.
pub fn opencl_qualifiers(src: &str) -> Vec<ClQualifier> {
    let b = src.as_bytes();
    let word_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && word_char(b[i]) {
                i += 1;
            }
            let w = &src[start..i];
            let long = match w {
                "__kernel" => Some("kernel"),
                "__global" => Some("global"),
                "__local" => Some("local"),
                "__constant" => Some("constant"),
                "__private" | "__read_only" | "__write_only" => Some("private"),
                _ => None,
            };
            let short = match w {
                "kernel" => Some("kernel"),
                "global" => Some("global"),
                "local" => Some("local"),
                "constant" => Some("constant"),
                _ => None,
            }
            .filter(|_| {
                let mut j = i;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                j < b.len() && (b[j].is_ascii_alphabetic() || b[j] == b'_')
            });
            if let Some(word) = long.or(short) {
                out.push(ClQualifier {
                    start,
                    end: i,
                    word,
                });
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (word_char(b[i]) || b[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The span of a syntax-tree node.
pub(crate) fn span_of(n: tree_sitter::Node) -> Span {
    let p = n.start_position();
    Span {
        offset: n.start_byte(),
        len: n.end_byte() - n.start_byte(),
        line: p.row as u32 + 1,
        column: p.column as u32 + 1,
    }
}

/// The first ERROR or MISSING node, as an error.
fn syntax_error(root: tree_sitter::Node, src: &str) -> Diagnostic {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_missing() {
            return Diagnostic::error(format!("syntax error: missing `{}`", n.kind()))
                .at(span_of(n));
        }
        if n.is_error() {
            let text: String = src[n.byte_range()].chars().take(40).collect();
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            return Diagnostic::error(format!("syntax error at `{text}`")).at(span_of(n));
        }
        let mut c = n.walk();
        let kids: Vec<_> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev().filter(|k| k.has_error()));
    }
    Diagnostic::error("syntax error").at(span_of(root))
}
