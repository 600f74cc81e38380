//! Kernel-only files: a `.cu` or `.cl` file without a harness (no `main()`, no
//! `scopecheck_main()`) is a set of kernels, each checked on its own at a launch of its own.
//!
//! [`plan_kernels`] lists the kernels to check and the launch of each ([`KernelChoice`]): the
//! launch the command line asks for (`--grid`/`--block`, `--num-groups`/`--local-size`), else
//! the one the file's leading comment gives as verification suites write it
//! (`//--blockDim=64 --gridDim=4`, `//--local_size=64 --num_groups=4`), else
//! [`DEFAULT_GRID`] x [`DEFAULT_BLOCK`]. A launch with more threads than `--max-threads` is
//! shrunk (blocks first, down to two, then threads per block) and the choice says so; the
//! caller plans again with fewer threads where too many of them share a written location
//! (`--max-shared-threads`, `KernelChoice::shared`).
//!
//! Checking one kernel then appends a harness written in the subset the front-end reads
//! ([`harness_text`]) to the preprocessed file: each pointer parameter gets a fresh buffer of
//! global memory, each scalar its `--arg` value or the default, and the kernel is launched once.
//! Both views read that harness as they would a user's: the language-level front-end lowers
//! the kernel, the PTX view gives its threads NVRTC's code. Spans in the appended lines answer
//! for the kernel's name.
//!
//! Buffer contents: zero unless `--init` says otherwise, never "any value". The explorer's
//! memory starts from one definite value per location; an arbitrary value per element would
//! multiply the executions by the values' domain, while the question kernel files are checked
//! for (races, barrier divergence, hangs) rarely depends on the data. A kernel whose control
//! flow depends on its input is checked at the value `--init` gives (a number, or `index`:
//! element i holds i), and the report names the contents it was checked with.

use scopecheck_ir::{Diagnostic, Span};
use tree_sitter::Node;

use crate::span_of;

/// The default launch's blocks: two, so that races between blocks and the per-block copies of
/// shared memory are seen.
pub const DEFAULT_GRID: [u32; 3] = [2, 1, 1];
/// The default launch's threads per block: two, so that races inside a block are seen, and no
/// more: the executions of racy kernels grow exponentially with the threads (a plain `+=` by
/// every thread: 4 threads 64 executions, 6 threads 518,400).
pub const DEFAULT_BLOCK: [u32; 3] = [2, 1, 1];

/// What a buffer holds when the kernel starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferInit {
    /// Every element zero (the default).
    #[default]
    Zero,
    /// Every element this value.
    Value(i64),
    /// Element `i` holds `i`.
    Index,
}

impl std::fmt::Display for BufferInit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferInit::Zero => write!(f, "zero"),
            BufferInit::Value(v) => write!(f, "{v}"),
            BufferInit::Index => write!(f, "index"),
        }
    }
}

/// The command line's choices about kernel-only files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// `--kernel`: the kernels to check (a template with its arguments, `reduce<float,256>`);
    /// empty: every kernel of the file.
    pub kernels: Vec<String>,
    /// `--grid` / `--num-groups`.
    pub grid: Option<[u32; 3]>,
    /// `--block` / `--local-size`.
    pub block: Option<[u32; 3]>,
    /// `--arg name=value`: scalar parameters.
    pub args: Vec<(String, String)>,
    /// `--buffer N`: elements per buffer.
    pub buffer: Option<usize>,
    /// `--init`.
    pub init: BufferInit,
}

/// Where a launch's sizes came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchSource {
    CommandLine,
    FileComment,
    Default,
}

impl LaunchSource {
    pub fn describe(self) -> &'static str {
        match self {
            LaunchSource::CommandLine => "the command line",
            LaunchSource::FileComment => "the file's launch comment",
            LaunchSource::Default => "the default",
        }
    }
}

/// One kernel of a kernel-only file to check, and the launch it is checked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelChoice {
    /// The kernel as launched: its name, with template arguments for a template.
    pub name: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The launch asked for, when the one checked is smaller (`--max-threads`, or
    /// `--max-shared-threads`: see `shared`).
    pub asked: Option<([u32; 3], [u32; 3])>,
    /// When the launch was shrunk for `--max-shared-threads`: how many threads of the larger
    /// launch measured shared a written location with another thread.
    pub shared: Option<usize>,
    pub source: LaunchSource,
    /// Elements of each buffer.
    pub buffer: usize,
    pub init: BufferInit,
    /// The value each scalar parameter gets (`--arg` or the default), in order.
    pub scalars: Vec<(String, String)>,
}

impl KernelChoice {
    /// `--grid 2 --block 4` (OpenCL: `--num-groups 2 --local-size 4`).
    pub fn launch_text(&self, opencl: bool) -> String {
        launch_text(self.grid, self.block, opencl)
    }

    /// What the report says of the launch: the sizes, the buffers, where they came from, and
    /// the launch asked for when it was shrunk.
    pub fn describe(&self, opencl: bool) -> String {
        let mut s = format!(
            "checked alone at {} (from {}), buffers of {} elements ({})",
            self.launch_text(opencl),
            self.source.describe(),
            self.buffer,
            match self.init {
                BufferInit::Zero => "zero-filled".to_string(),
                BufferInit::Value(v) => format!("every element {v}"),
                BufferInit::Index => "element i holds i".to_string(),
            }
        );
        if !self.scalars.is_empty() {
            let args: Vec<String> = self
                .scalars
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            s.push_str(&format!(", {}", args.join(" ")));
        }
        match (self.asked, self.shared) {
            (Some((g, b)), Some(shared)) => s.push_str(&format!(
                "; a SMALLER launch than the {} asked ({} threads): {shared} threads of a launch that size share a written location with another thread, more than --max-shared-threads allows (raise it to check the launch asked)",
                launch_text(g, b, opencl),
                threads(g, b)
            )),
            (Some((g, b)), None) => s.push_str(&format!(
                "; a SMALLER launch than the {} asked ({} threads), which is more than --max-threads allows (raise it to check the launch asked)",
                launch_text(g, b, opencl),
                threads(g, b)
            )),
            _ => {}
        }
        s
    }
}

fn dims_text(d: [u32; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x},{y}"),
        [x, y, z] => format!("{x},{y},{z}"),
    }
}

fn launch_text(grid: [u32; 3], block: [u32; 3], opencl: bool) -> String {
    if opencl {
        format!(
            "--num-groups {} --local-size {}",
            dims_text(grid),
            dims_text(block)
        )
    } else {
        format!("--grid {} --block {}", dims_text(grid), dims_text(block))
    }
}

fn threads(grid: [u32; 3], block: [u32; 3]) -> u64 {
    grid.iter().chain(&block).map(|&d| d as u64).product()
}

/// A `--grid`, `--block` or launch-comment size: `64`, `2,2`, `[64,2]`, `(2,2,1)`.
pub fn parse_dims(s: &str) -> Result<[u32; 3], String> {
    let t = s
        .trim()
        .trim_start_matches(['[', '(', '{'])
        .trim_end_matches([']', ')', '}']);
    let parts: Vec<&str> = t.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}` is not a size: expected N, X,Y or X,Y,Z"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = match p.parse::<u32>() {
            Ok(v) if v >= 1 => v,
            _ => {
                return Err(format!(
                    "`{s}` is not a size: each dimension a whole number of at least 1"
                ))
            }
        };
    }
    Ok(d)
}

/// A pointer parameter's buffer, or a scalar's value.
#[derive(Clone, Debug)]
enum ParamKind {
    /// A pointer: the element type as the harness declares it; `local` for an OpenCL
    /// `__local` pointer (local memory of the work-group, no buffer).
    Pointer { elem: String, local: bool },
    /// A scalar, of this type.
    Scalar { ty: String },
    /// A parameter the harness cannot give a value (why).
    Unsupported(String),
}

#[derive(Clone, Debug)]
struct Param {
    name: String,
    kind: ParamKind,
}

/// A kernel as the file defines it.
#[derive(Clone, Debug)]
struct Kernel {
    name: String,
    /// Template parameters (`None` for a plain kernel): each name, and whether it is a type.
    template: Option<Vec<(String, bool)>>,
    params: Vec<Param>,
    span: Span,
    /// Why it cannot be checked at all (a kernel in a namespace).
    problem: Option<String>,
}

/// The kernels of a file without a harness: `None` when the file has one (`main` or
/// `scopecheck_main`), or when it cannot be read (the check reports why).
struct KernelFile {
    kernels: Vec<Kernel>,
    /// The launch the file's leading comment gives.
    comment: (Option<[u32; 3]>, Option<[u32; 3]>),
}

/// A kernel to check, or one that cannot be and why (a template without its arguments, a
/// name not in the file), to be reported as a failure of that kernel.
pub type Planned = Result<KernelChoice, (String, String)>;

/// The kernels of `source` to check and their launches, or `None` when the file has a harness
/// (or cannot be read at all: checking it reports why). `text` is the preprocessed source,
/// `masked` it with the OpenCL qualifiers blanked (the same for CUDA).
pub(crate) fn plan(
    text: &str,
    masked: &str,
    raw: &str,
    opencl: bool,
    options: &crate::CudaOptions,
) -> Result<Option<Vec<Planned>>, Diagnostic> {
    let Some(file) = read_kernels(text, masked, raw, opencl) else {
        return Ok(None);
    };
    let launch = &options.launch;
    for (name, _) in &launch.args {
        let known = file.kernels.iter().any(|k| {
            k.params
                .iter()
                .any(|p| p.name == *name && matches!(p.kind, ParamKind::Scalar { .. }))
        });
        if !known {
            return Err(Diagnostic::error(format!("--arg {name}=...: no kernel of this file has a scalar parameter `{name}` (pointer parameters get buffers)")).at(Span { line: 1, column: 1, offset: 0, len: 0 }));
        }
    }
    let (grid, block, source) = match (launch.grid, launch.block) {
        (None, None) if file.comment != (None, None) => (
            file.comment.0.unwrap_or(DEFAULT_GRID),
            file.comment.1.unwrap_or(DEFAULT_BLOCK),
            LaunchSource::FileComment,
        ),
        (None, None) => (DEFAULT_GRID, DEFAULT_BLOCK, LaunchSource::Default),
        (g, b) => (
            g.or(file.comment.0).unwrap_or(DEFAULT_GRID),
            b.or(file.comment.1).unwrap_or(DEFAULT_BLOCK),
            LaunchSource::CommandLine,
        ),
    };
    let (checked_grid, checked_block) = shrink(grid, block, options.max_threads);
    let asked = (checked_grid != grid || checked_block != block).then_some((grid, block));
    let total = threads(checked_grid, checked_block) as usize;
    let buffer = launch
        .buffer
        .unwrap_or_else(|| total.clamp(1, crate::MAX_ARRAY_ELEMENTS));
    let choose = |k: &Kernel, name: String| -> Planned {
        if let Some(p) = &k.problem {
            return Err((name, p.clone()));
        }
        if opencl && (checked_grid[1..] != [1, 1] || checked_block[1..] != [1, 1]) {
            return Err((name, "not supported yet: an OpenCL launch in more than one dimension (--num-groups and --local-size take one number)".into()));
        }
        if buffer > crate::MAX_ARRAY_ELEMENTS {
            return Err((name, format!("--buffer {buffer}: at most {} elements per buffer (each element is a location)", crate::MAX_ARRAY_ELEMENTS)));
        }
        let mut scalars = Vec::new();
        for p in &k.params {
            match &p.kind {
                ParamKind::Unsupported(why) => {
                    return Err((name, format!("parameter `{}`: {why}", p.name)))
                }
                ParamKind::Scalar { .. } => {
                    let given = launch.args.iter().rev().find(|(n, _)| *n == p.name);
                    let v = given.map_or_else(|| buffer.to_string(), |(_, v)| v.clone());
                    scalars.push((p.name.clone(), v));
                }
                ParamKind::Pointer { .. } => {}
            }
        }
        Ok(KernelChoice {
            name,
            grid: checked_grid,
            block: checked_block,
            asked,
            shared: None,
            source,
            buffer,
            init: launch.init,
            scalars,
        })
    };
    let names = || {
        file.kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    if launch.kernels.is_empty() {
        for k in &file.kernels {
            if let Some(tp) = &k.template {
                let example: Vec<&str> = tp
                    .iter()
                    .map(|(_, ty)| if *ty { "int" } else { "64" })
                    .collect();
                out.push(Err((k.name.clone(), format!("a template kernel: name its template arguments to check it, e.g. --kernel '{}<{}>'", k.name, example.join(", ")))));
            } else {
                out.push(choose(k, k.name.clone()));
            }
        }
        if out.is_empty() {
            out.push(Err((String::new(), "no harness and no kernel: a file without `int main()` is checked kernel by kernel, and this one defines no `__global__` kernel".into())));
        }
        return Ok(Some(out));
    }
    for asked in &launch.kernels {
        let (base, targs) = split_template(asked);
        let Some(k) = file.kernels.iter().find(|k| k.name == base) else {
            out.push(Err((
                asked.clone(),
                format!(
                    "--kernel {asked}: this file has no kernel `{base}` (its kernels: {})",
                    names()
                ),
            )));
            continue;
        };
        match (&k.template, targs) {
            (Some(tp), Some(ta)) if tp.len() != ta.len() => out.push(Err((asked.clone(), format!("--kernel {asked}: `{base}` takes {} template arguments, not {}", tp.len(), ta.len())))),
            (Some(_), None) => out.push(Err((asked.clone(), format!("--kernel {asked}: `{base}` is a template kernel: give its template arguments, e.g. --kernel '{base}<int>'")))),
            (None, Some(_)) => out.push(Err((asked.clone(), format!("--kernel {asked}: `{base}` is not a template")))),
            _ => out.push(choose(k, asked.clone())),
        }
    }
    Ok(Some(out))
}

/// The launch actually checked: `grid` x `block` made to fit `max` threads, blocks first
/// (down to two, which still shows races between blocks), then the largest dimension of the
/// block halved, then the last two blocks to one.
fn shrink(mut grid: [u32; 3], mut block: [u32; 3], max: usize) -> ([u32; 3], [u32; 3]) {
    let halve = |d: &mut [u32; 3]| {
        let k = (0..3).max_by_key(|&k| (d[k], 3 - k)).unwrap_or(0);
        d[k] = d[k].div_ceil(2);
    };
    while threads(grid, block) > max as u64 {
        let blocks: u32 = grid.iter().product();
        let per_block: u32 = block.iter().product();
        if blocks > 2 {
            halve(&mut grid);
        } else if per_block > 1 {
            halve(&mut block);
        } else if blocks > 1 {
            halve(&mut grid);
        } else {
            break;
        }
    }
    (grid, block)
}

/// The kernel a top-level template declaration defines, when it defines one.
pub(crate) fn templated_kernel_name(t: Node, src: &str) -> Option<String> {
    let mut c = t.walk();
    let f = t
        .named_children(&mut c)
        .find(|k| k.kind() == "function_definition")?;
    let decl = innermost_function(f.child_by_field_name("declarator")?)?;
    let name = decl.child_by_field_name("declarator")?;
    let head = src.get(f.start_byte()..name.start_byte())?;
    words(head)
        .any(|w| w == "__global__")
        .then(|| src[name.byte_range()].to_string())
}

/// A kernel's name without its template arguments.
pub(crate) fn base_name(s: &str) -> &str {
    split_template(s).0
}

/// `reduce<float, 256>` as `reduce` and its arguments (split at top-level commas).
fn split_template(s: &str) -> (&str, Option<Vec<String>>) {
    let Some(open) = s.find('<') else {
        return (s.trim(), None);
    };
    let base = s[..open].trim();
    let inner = s[open + 1..].trim_end();
    let inner = inner.strip_suffix('>').unwrap_or(inner);
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                args.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        args.push(cur.trim().to_string());
    }
    (base, Some(args))
}

/// The launch a file's leading `//` comments give, as verification suites write it:
/// `--blockDim=64 --gridDim=4` (`[64,2]` for more dimensions), OpenCL `--local_size=64
/// --num_groups=4` or `--global_size=256`.
fn launch_comment(raw: &str) -> (Option<[u32; 3]>, Option<[u32; 3]>) {
    let (mut grid, mut block, mut global) = (None, None, None);
    for line in raw.lines() {
        let Some(c) = line.trim_start().strip_prefix("//") else {
            if line.trim().is_empty() {
                continue;
            }
            break;
        };
        for word in c.split_whitespace() {
            let Some((key, value)) = word.trim_start_matches('-').split_once('=') else {
                continue;
            };
            let Ok(d) = parse_dims(value) else { continue };
            match key {
                "blockDim" | "local_size" => block = Some(d),
                "gridDim" | "num_groups" => grid = Some(d),
                "global_size" => global = Some(d),
                _ => {}
            }
        }
    }
    if let (None, Some(g), Some(b)) = (grid, global, block) {
        grid = Some([0, 1, 2].map(|k| (g[k] / b[k]).max(1)));
    }
    (grid, block)
}

/// The kernels of a file that has no harness.
fn read_kernels(text: &str, masked: &str, raw: &str, opencl: bool) -> Option<KernelFile> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .ok()?;
    let tree = parser.parse(masked, None)?;
    let root = tree.root_node();
    if root.has_error() || crate::nesting::check_tree(root).is_err() {
        return None;
    }
    let mut kernels = Vec::new();
    let mut has_main = false;
    scope(
        root,
        text,
        masked,
        opencl,
        None,
        &mut kernels,
        &mut has_main,
    );
    if has_main {
        return None;
    }
    Some(KernelFile {
        kernels,
        comment: launch_comment(raw),
    })
}

/// The kernels of one scope (the file, `extern "C" { ... }`, a namespace: `ns`).
fn scope(
    n: Node,
    text: &str,
    masked: &str,
    opencl: bool,
    ns: Option<&str>,
    out: &mut Vec<Kernel>,
    has_main: &mut bool,
) {
    let mut c = n.walk();
    for item in n.named_children(&mut c) {
        match item.kind() {
            "function_definition" => {
                if let Some(k) = kernel(item, None, text, masked, opencl, ns, has_main) {
                    out.push(k);
                }
            }
            "template_declaration" => {
                let mut c = item.walk();
                let f = item
                    .named_children(&mut c)
                    .find(|k| k.kind() == "function_definition");
                if let Some(f) = f {
                    let tp = template_params(item, masked);
                    if let Some(k) = kernel(f, Some(tp), text, masked, opencl, ns, has_main) {
                        out.push(k);
                    }
                }
            }
            "linkage_specification" => {
                if let Some(body) = item.child_by_field_name("body") {
                    if body.kind() == "function_definition" {
                        if let Some(k) = kernel(body, None, text, masked, opencl, ns, has_main) {
                            out.push(k);
                        }
                    } else {
                        scope(body, text, masked, opencl, ns, out, has_main);
                    }
                }
            }
            "namespace_definition" => {
                let name = item
                    .child_by_field_name("name")
                    .map_or("(anonymous)", |n| &masked[n.byte_range()]);
                if let Some(body) = item.child_by_field_name("body") {
                    scope(body, text, masked, opencl, Some(name), out, has_main);
                }
            }
            "declaration_list" => scope(item, text, masked, opencl, ns, out, has_main),
            _ => {}
        }
    }
}

/// The words of `s` (identifiers and keywords).
fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// A kernel, when `f` defines one; notes a host `main`.
fn kernel(
    f: Node,
    template: Option<Vec<(String, bool)>>,
    text: &str,
    masked: &str,
    opencl: bool,
    ns: Option<&str>,
    has_main: &mut bool,
) -> Option<Kernel> {
    let decl = f.child_by_field_name("declarator")?;
    let decl = innermost_function(decl)?;
    let name_node = decl.child_by_field_name("declarator")?;
    let name = masked[name_node.byte_range()].to_string();
    // The words before the name (in the unmasked text: OpenCL's `__kernel` is blanked in
    // the masked one).
    // From the end of what precedes the definition: OpenCL's `__kernel` was blanked before
    // parsing, so the definition's node starts after it.
    let from = f.prev_sibling().map_or_else(
        || f.parent().map_or(0, |p| p.start_byte()),
        |p| p.end_byte(),
    );
    let head = &text[from.min(f.start_byte())..name_node.start_byte()];
    let is_kernel =
        words(head).any(|w| w == "__global__" || (opencl && (w == "__kernel" || w == "kernel")));
    if ns.is_none() && (name == "main" || name == "scopecheck_main") && !is_kernel {
        *has_main = true;
        return None;
    }
    if !is_kernel {
        return None;
    }
    let mut params = Vec::new();
    if let Some(list) = decl.child_by_field_name("parameters") {
        let mut c = list.walk();
        for p in list.named_children(&mut c) {
            if p.kind() == "parameter_declaration" {
                params.push(param(p, text, masked));
            } else if p.kind() != "comment" {
                params.push(Param {
                    name: masked[p.byte_range()].to_string(),
                    kind: ParamKind::Unsupported("not supported: this kind of parameter".into()),
                });
            }
        }
    }
    let problem = ns.map(|ns| {
        format!("not supported yet: a kernel in a namespace (`{ns}::{name}`); the harness names kernels at the top level")
    });
    Some(Kernel {
        name,
        template,
        params,
        span: span_of(name_node),
        problem,
    })
}

/// The `function_declarator` inside a declarator (through pointers, references, parentheses).
fn innermost_function(mut d: Node) -> Option<Node> {
    loop {
        if d.kind() == "function_declarator" {
            return Some(d);
        }
        d = d.child_by_field_name("declarator")?;
    }
}

/// The names of a template's parameters, each with whether it is a type.
fn template_params(t: Node, src: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let Some(list) = t.child_by_field_name("parameters") else {
        return out;
    };
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        let is_type = p.kind().contains("type_parameter");
        let text = &src[p.byte_range()];
        let before_default = text.split('=').next().unwrap_or(text);
        let name = words(before_default).last().unwrap_or("").to_string();
        out.push((name, is_type));
    }
    out
}

/// A kernel parameter: its name and how the harness gives it a value.
fn param(p: Node, text: &str, masked: &str) -> Param {
    let mut pointers = 0;
    let mut array = false;
    let mut reference = false;
    let mut d = p.child_by_field_name("declarator");
    let mut name = String::new();
    while let Some(n) = d {
        match n.kind() {
            "pointer_declarator" => pointers += 1,
            "array_declarator" => array = true,
            "reference_declarator" => reference = true,
            "identifier" => {
                name = masked[n.byte_range()].to_string();
                break;
            }
            _ => {}
        }
        d = n
            .child_by_field_name("declarator")
            .or_else(|| n.named_child((n.named_child_count() as u32).saturating_sub(1)));
        if d.is_some_and(|x| x.id() == n.id()) {
            break;
        }
    }
    let ty = p
        .child_by_field_name("type")
        .map_or(String::new(), |t| masked[t.byte_range()].trim().to_string());
    // From the end of what precedes the parameter (`(` or `,`): OpenCL's `__local` was
    // blanked before parsing, so the node starts after it.
    let from = p.prev_sibling().map_or(p.start_byte(), |q| q.end_byte());
    let whole = &text[from.min(p.start_byte())..p.end_byte()];
    let kind = if name.is_empty() {
        ParamKind::Unsupported("a parameter without a name".into())
    } else if reference {
        ParamKind::Unsupported("not supported: a reference parameter".into())
    } else if pointers + array as usize > 1 {
        ParamKind::Unsupported(
            "not supported yet: a pointer to pointers (each buffer is one array of elements)"
                .into(),
        )
    } else if pointers + array as usize == 1 {
        if ty == "void" {
            ParamKind::Unsupported(
                "not supported yet: a `void *` buffer (its element type is unknown)".into(),
            )
        } else {
            let local = words(whole).any(|w| w == "__local" || w == "local");
            ParamKind::Pointer { elem: ty, local }
        }
    } else {
        ParamKind::Scalar { ty }
    };
    Param { name, kind }
}

/// The harness that launches `choice` once, in the subset the front-end reads, to append to
/// the preprocessed file; and the span of the kernel's name, which the harness's positions
/// answer for.
pub(crate) fn harness_text(
    text: &str,
    masked: &str,
    raw: &str,
    opencl: bool,
    choice: &KernelChoice,
) -> Result<(String, Span), Diagnostic> {
    let at_start = Span {
        line: 1,
        column: 1,
        offset: 0,
        len: 0,
    };
    let file = read_kernels(text, masked, raw, opencl).ok_or_else(|| {
        Diagnostic::error("internal: a kernel was chosen in a file that has a harness").at(at_start)
    })?;
    let (base, targs) = split_template(&choice.name);
    let k = file
        .kernels
        .iter()
        .find(|k| k.name == base)
        .ok_or_else(|| {
            Diagnostic::error(format!("no kernel `{base}` in this file")).at(at_start)
        })?;
    // Type template parameters are their arguments in the buffers' element types.
    let subst = |ty: &str| -> String {
        let (Some(tp), Some(ta)) = (&k.template, &targs) else {
            return ty.to_string();
        };
        let mut out = ty.to_string();
        for ((name, is_type), arg) in tp.iter().zip(ta) {
            if *is_type && words(ty).any(|w| w == name) {
                out = replace_word(&out, name, arg);
            }
        }
        out
    };
    let per_block: u32 = choice.block.iter().product();
    let n = choice.buffer;
    let mut h = String::from("\nvoid scopecheck_main() {\n");
    let mut args = Vec::new();
    if opencl {
        h.push_str("cl_command_queue scopecheck_queue = clCreateCommandQueue(0, 0, 0, NULL);\n");
        h.push_str(&format!(
            "cl_kernel scopecheck_kernel = clCreateKernel(0, \"{base}\", NULL);\n"
        ));
    }
    let mut scalars = choice.scalars.iter();
    for (i, p) in k.params.iter().enumerate() {
        match &p.kind {
            ParamKind::Pointer { elem, local } => {
                let elem = subst(elem);
                if opencl && *local {
                    h.push_str(&format!(
                        "clSetKernelArg(scopecheck_kernel, {i}, {per_block} * sizeof({elem}), NULL);\n"
                    ));
                } else if opencl {
                    h.push_str(&format!("cl_mem {} = clCreateBuffer(0, CL_MEM_READ_WRITE, {n} * sizeof({elem}), NULL, NULL);\n", p.name));
                    if choice.init != BufferInit::Zero {
                        for e in 0..n {
                            let v = init_value(choice.init, e);
                            h.push_str(&format!("{elem} scopecheck_v{i}_{e} = {v};\nclEnqueueWriteBuffer(scopecheck_queue, {}, CL_TRUE, {e} * sizeof({elem}), sizeof({elem}), &scopecheck_v{i}_{e}, 0, NULL, NULL);\n", p.name));
                        }
                    }
                    h.push_str(&format!(
                        "clSetKernelArg(scopecheck_kernel, {i}, sizeof(cl_mem), &{});\n",
                        p.name
                    ));
                } else if choice.init == BufferInit::Zero {
                    h.push_str(&format!(
                        "{elem} *{0};\ncudaMalloc(&{0}, {n} * sizeof({elem}));\n",
                        p.name
                    ));
                    args.push(p.name.clone());
                } else {
                    // An initialised `__device__` array: its contents cost no event.
                    let values: Vec<String> = (0..n).map(|e| init_value(choice.init, e)).collect();
                    let global = format!(
                        "__device__ {elem} scopecheck_{}[{n}] = {{{}}};\n",
                        p.name,
                        values.join(", ")
                    );
                    h.insert_str(0, &global);
                    args.push(format!("scopecheck_{}", p.name));
                }
            }
            ParamKind::Scalar { ty } => {
                let v = scalars.next().map_or("0", |(_, v)| v.as_str());
                if opencl {
                    // The parameter's own type, so that the argument's size is the kernel's.
                    let ty = subst(ty);
                    h.push_str(&format!(
                        "{ty} scopecheck_a{i} = {v};\nclSetKernelArg(scopecheck_kernel, {i}, sizeof({ty}), &scopecheck_a{i});\n"
                    ));
                } else {
                    args.push(v.to_string());
                }
            }
            ParamKind::Unsupported(why) => {
                return Err(Diagnostic::error(format!("parameter `{}`: {why}", p.name)).at(k.span))
            }
        }
    }
    let [gx, gy, gz] = choice.grid;
    let [bx, by, bz] = choice.block;
    if opencl {
        h.push_str(&format!(
            "size_t scopecheck_global = {}, scopecheck_local = {bx};\nclEnqueueNDRangeKernel(scopecheck_queue, scopecheck_kernel, 1, NULL, &scopecheck_global, &scopecheck_local, 0, NULL, NULL);\nclFinish(scopecheck_queue);\n",
            gx * bx
        ));
    } else {
        // Dynamic shared memory (`extern __shared__`): four bytes per thread of the block,
        // rounded up to whole 8-byte elements.
        let smem = if raw_mentions_dynamic_shared(text) {
            format!(", {}", (per_block.max(2) * 4).div_ceil(8) * 8)
        } else {
            String::new()
        };
        h.push_str(&format!(
            "{}<<<dim3({gx}, {gy}, {gz}), dim3({bx}, {by}, {bz}){smem}>>>({});\n",
            choice.name,
            args.join(", ")
        ));
    }
    h.push_str("}\n");
    Ok((h, k.span))
}

/// Whether the file declares dynamic shared memory (`extern __shared__`).
fn raw_mentions_dynamic_shared(text: &str) -> bool {
    text.lines().any(|l| {
        let w: Vec<&str> = words(l).collect();
        w.contains(&"extern") && w.contains(&"__shared__")
    })
}

fn init_value(init: BufferInit, e: usize) -> String {
    match init {
        BufferInit::Zero => "0".into(),
        BufferInit::Value(v) => v.to_string(),
        BufferInit::Index => e.to_string(),
    }
}

/// `s` with every whole word `w` replaced by `by`.
fn replace_word(s: &str, w: &str, by: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for c in s.chars().chain(std::iter::once('\0')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push_str(if word == w { by } else { &word });
            word.clear();
        }
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

/// Every span of `p` passed through `f`.
pub(crate) fn respan(p: &mut scopecheck_ir::Program, f: impl Fn(Span) -> Span) {
    for l in &mut p.locations {
        l.span = l.span.map(&f);
    }
    for t in &mut p.threads {
        t.span = t.span.map(&f);
        for i in &mut t.code {
            i.span = f(i.span);
        }
    }
    p.condition.span = p.condition.span.map(&f);
}
