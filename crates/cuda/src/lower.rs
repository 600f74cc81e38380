//! Lowering the syntax tree: top-level declarations, the harness run at compile time, and one
//! [`Lw`] per IR thread (a kernel thread of a launch, or a segment of host code) that lowers
//! statements and expressions to instructions.
//!
//! The code shape follows the C litmus dialect's lowering (`crates/litmus/src/c/lower.rs`):
//! constants fold, conditions become `Eq` / `Ne` branches, a loop with an empty body is one block
//! ending in one backward branch (so that the explorer sees an await loop), temporaries are
//! `$t0`, `$t1`, ..., and each instruction carries the span and text of its source. Types too:
//! every register has a C type and always holds a value canonical in it ([`Val`] is an operand
//! with its type); binary operations compute in C's common type (`Binary { ty }`), comparisons
//! give `int`, an assignment to another type converts (`v | 0` computed in the target type),
//! and a branch compares operands of different types through a typed `Eq` first.
//!
//! This file holds the types, the entry point [`lower`] and [`Lw`]'s state; the methods live
//! by section: `context` (the file-wide [`Ctx`]: types, structs, globals, constants), `emit`
//! (names, registers, labels, conversions), `memory`, `stmt`, `expr` and `call` (intrinsics,
//! inlining, cooperative groups), beside the feature files (`float`, `warp`, `opencl`,
//! `harness`, `host_thread`, `by_value`, `depth`, `rows`).

use std::collections::HashMap;

use scopecheck_ir::{
    Arithmetic, BinOp, Diagnostic, FloatOp, IntType, LocId, Location, MemorySpace, Observable,
    Operand, Placement, Program, RegId, Scope, Span, Thread, ThreadId, Value,
};
use tree_sitter::Node;

use crate::{span_of, CudaOptions};
use scopecheck_litmus::build::CodeBuilder;
use scopecheck_litmus::vocab::{op_types, promote};

type R<T> = Result<T, Diagnostic>;

fn err<T>(n: Node, msg: impl Into<String>) -> R<T> {
    Err(Diagnostic::error(msg).at(span_of(n)))
}

/// How accesses through a name or pointer behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Plain,
    Volatile,
    /// An atomic object (`cuda::atomic<T, S>`, `cuda::atomic_ref`, `std::atomic`) with its
    /// default scope.
    Atomic(Scope),
}

/// A pointer into an array of locations: an element known at compile time, plus perhaps a
/// number of locations held in a register (an index computed at run time, which the explorer
/// bounds-checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ptr {
    arr: usize,
    /// The first location pointed at (a struct element spans one location per field).
    idx: i64,
    /// A register holding a further offset, in locations, known only at run time.
    index: Option<RegId>,
    access: Access,
    /// The struct type pointed at (`ctx.structs`), `None` for a scalar.
    strukt: Option<usize>,
    /// The type of the value pointed at, as the pointer's type declares it (the access type;
    /// it has the width of the location).
    ty: IntType,
}

impl Ptr {
    /// The start of array `arr`, whose elements have type `ty`.
    fn start_of(arr: usize, ty: Ty) -> Ptr {
        Ptr {
            arr,
            idx: 0,
            index: None,
            access: ty.access,
            strukt: ty.strukt,
            ty: ty.int,
        }
    }
}

/// A value with its C type: a register holds a value canonical in its type, a constant is
/// canonical in `ty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    op: Operand,
    ty: IntType,
}

impl Val {
    fn imm(v: Value, ty: IntType) -> Self {
        Val {
            op: Operand::Imm(ty.wrap(v)),
            ty,
        }
    }
}

/// A `struct` of scalars: one location per field.
struct StructDef {
    name: String,
    fields: Vec<(String, Ty)>,
    size: i64,
}

/// The declared type of a variable or parameter, as far as lowering cares.
#[derive(Clone, Copy, Debug)]
struct Ty {
    access: Access,
    pointer: bool,
    /// The size in bytes of the value (the pointee, for a pointer).
    size: i64,
    /// The type of the value (the pointee, for a pointer): an integer, `float` or `double`.
    int: IntType,
    dim3: bool,
    stream: bool,
    /// `cudaEvent_t`.
    event: bool,
    /// `cuda::atomic_ref<T, S>` (binds to an object).
    atomic_ref: bool,
    /// `const` / `constexpr` scalar (its value is folded on the host).
    constant: bool,
    shared: bool,
    /// A struct type (`ctx.structs`).
    strukt: Option<usize>,
    /// OpenCL `cl_kernel`.
    cl_kernel: bool,
}

impl Ty {
    /// A plain `int`, before the declaration's words refine it.
    fn int() -> Self {
        Ty {
            access: Access::Plain,
            pointer: false,
            size: 4,
            int: IntType::S32,
            dim3: false,
            event: false,
            stream: false,
            atomic_ref: false,
            constant: false,
            shared: false,
            strukt: None,
            cl_kernel: false,
        }
    }
}

/// The integer type and size in bytes a scalar type names, written without spaces
/// (`unsignedlonglong`), as CUDA's and OpenCL's data model (LP64) has them: `long` is 64-bit,
/// `char` is signed, `bool` is taken as `int` (one byte in memory); `float` and `double` are
/// IEEE-754 binary32 and binary64 (held as their bits: `scopecheck_ir::float`).
fn scalar_type(w: &str) -> Option<(IntType, i64)> {
    Some(match w {
        "char" | "signedchar" | "int8_t" | "cl_char" => (IntType::S8, 1),
        "unsignedchar" | "uchar" | "uint8_t" | "cl_uchar" => (IntType::U8, 1),
        "bool" | "_Bool" => (IntType::S32, 1),
        "short" | "shortint" | "signedshort" | "signedshortint" | "int16_t" | "cl_short" => {
            (IntType::S16, 2)
        }
        "unsignedshort" | "unsignedshortint" | "ushort" | "uint16_t" | "cl_ushort" => {
            (IntType::U16, 2)
        }
        "int" | "signed" | "signedint" | "int32_t" | "cl_int" | "cudaError_t" => (IntType::S32, 4),
        "float" | "cl_float" => (IntType::F32, 4),
        "double" | "cl_double" => (IntType::F64, 8),
        "unsigned" | "unsignedint" | "uint" | "uint32_t" | "cl_uint" | "cl_bool" => {
            (IntType::U32, 4)
        }
        "long" | "longint" | "signedlong" | "signedlongint" | "longlong" | "longlongint"
        | "signedlonglong" | "signedlonglongint" | "int64_t" | "intptr_t" | "ptrdiff_t"
        | "cl_long" => (IntType::S64, 8),
        "unsignedlong"
        | "unsignedlongint"
        | "unsignedlonglong"
        | "unsignedlonglongint"
        | "ulong"
        | "uint64_t"
        | "uintptr_t"
        | "size_t"
        | "cl_ulong" => (IntType::U64, 8),
        "void" => (IntType::U8, 1),
        _ => return None,
    })
}

/// How a declared pointer type sees memory: access, struct type, value type.
type PtrTy = (Access, Option<usize>, IntType);

impl Ty {
    fn ptr_ty(&self) -> PtrTy {
        (self.access, self.strukt, self.int)
    }
}

#[derive(Clone, Copy, Debug)]
enum Binding {
    /// A register of the host segment or thread `seg` was created in, and its type.
    Reg(RegId, u32, IntType),
    /// A constant, canonical in its type.
    Const(Value, IntType),
    Ptr(Ptr),
    /// A pointer declared but not yet allocated: access, element size, struct, element type.
    PtrUnset(Access, i64, Option<usize>, IntType),
    /// An atomic object or a global scalar: the name denotes the object itself.
    Obj(Ptr),
    Dim3([Value; 3]),
    Stream(Option<u32>),
    /// A `cudaEvent_t`: `None` before cudaEventCreate; then its index in `Ctx::events`.
    Event(Option<usize>),
    /// A `__shared__` variable declared inside a kernel (its key in `Ctx::shared_decls`).
    Shared(usize),
    /// An OpenCL `__local` pointer argument: the start of this block's copy of a shared
    /// declaration.
    SharedPtr(usize),
    /// An OpenCL `cl_kernel` (its index in `Ctx::cl_kernels`).
    ClKernel(usize),
    /// A host local array (`int h[4];`): its start, in `HostPageable` locations.
    HostArr(Ptr),
    /// A cooperative group (`cg::thread_block b = cg::this_thread_block();`).
    Group(Group),
    /// The argument array of a cooperative launch (`void *args[] = {&a, &b};`): its index in
    /// `Ctx::arg_lists`.
    ArgList(usize),
    /// A `std::thread` of the harness: its index in `Launches::host_threads`.
    HostThread(usize),
    /// A struct held by value (a local or a by-value parameter) of type `Ctx::structs[i]`:
    /// each field `f` is a variable of its own, named `name.f` (`by_value`).
    ValStruct(usize),
}

/// The cooperative groups a kernel can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// `this_thread_block()`: the threads of the CTA.
    Block,
    /// `this_grid()`: every thread of the launch, which must be cooperative.
    Grid,
    /// `tiled_partition<N>(block)`: the thread's tile of `N` consecutive threads of the block
    /// (`N` a power of two up to 32, so a tile lies in one warp).
    Tile(u32),
}

/// An array of locations (a scalar is an array of one).
struct Array {
    name: String,
    elems: Vec<LocId>,
    space: MemorySpace,
    /// Allocated by the harness (printed with the final states).
    harness: bool,
    /// A two-dimensional array's row length in elements (`W` of `int t[H][W]`), laid out
    /// row-major: `t[i][j]` is element `i * W + j`.
    row: Option<usize>,
}

/// A `__shared__` declaration: one array per CTA, made when first touched.
struct SharedDecl<'t> {
    name: String,
    len: usize,
    /// The row length of a two-dimensional array (`Array::row`).
    row: Option<usize>,
    ty: Ty,
    node: Node<'t>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FnKind {
    Global,
    Device,
    Host,
}

struct Func<'t> {
    kind: FnKind,
    node: Node<'t>,
}

/// Per-thread values of a launch, folded in as constants.
#[derive(Clone, Copy, Default)]
struct Dims {
    thread: [Value; 3],
    block: [Value; 3],
    block_dim: [Value; 3],
    grid_dim: [Value; 3],
}

impl Dims {
    /// `threadIdx`, `blockIdx`, `blockDim` or `gridDim` (named `on`), member `k` (x, y, z).
    fn member(&self, on: &str, k: usize) -> Option<Value> {
        Some(match on {
            "threadIdx" => self.thread[k],
            "blockIdx" => self.block[k],
            "blockDim" => self.block_dim[k],
            "gridDim" => self.grid_dim[k],
            _ => return None,
        })
    }
}

struct Ctx<'s, 't> {
    /// The levels of the syntax tree the bodies being lowered sit under, inlined calls and
    /// launches counted from their call sites ([`depth`]).
    nest_base: usize,
    /// The height of each function body entered so far, by its first byte.
    body_heights: HashMap<usize, usize>,
    /// The names of `locations`, to make each new one unique without a scan.
    location_names: std::collections::HashSet<String>,
    /// For each name taken more than once, the least suffix `#k` not yet tried: names are
    /// never released, so every `#j` below it is taken, and the next location of that name
    /// starts there instead of probing `#2, #3, ...` again (400 allocations to one pointer
    /// probed 80,000 names per element).
    next_suffix: HashMap<String, usize>,
    /// An OpenCL C source (`.cl`).
    opencl: bool,
    /// Its qualifiers, blanked out before parsing.
    cl_quals: Vec<crate::ClQualifier>,
    /// `cl_kernel` objects of the harness: the kernel and the arguments set so far.
    cl_kernels: Vec<opencl::ClKernel<'t>>,
    src: &'s str,
    options: &'s CudaOptions,
    locations: Vec<Location>,
    arrays: Vec<Array>,
    /// `__device__` globals by name: (array, type).
    globals: HashMap<String, (usize, Ty)>,
    shared_decls: Vec<SharedDecl<'t>>,
    shared_by_name: HashMap<String, usize>,
    /// (shared declaration, CTA) -> array.
    shared_copies: HashMap<(usize, u32), usize>,
    funcs: HashMap<String, Func<'t>>,
    structs: Vec<StructDef>,
    struct_by_name: HashMap<String, usize>,
    /// Reading only the harness (the PTX view): globals whose declaration could not be read,
    /// with why; an error only if the harness names them.
    opaque_globals: Vec<(String, Diagnostic)>,
    threads: Vec<Thread>,
    asserts: Vec<(Observable, Span)>,
    warnings: Vec<Diagnostic>,
    device_threads: usize,
    /// Every kernel launch, for the PTX view (`crate::KernelLaunch`).
    launches: Vec<crate::KernelLaunch>,
    /// Namespace-scope compile-time constants (`constexpr int N = 4;`), seen by all code.
    constants: Vec<(String, Binding)>,
    next_cta: u32,
    next_stream: u32,
    /// Per created event, the launches its last cudaEventRecord covers (none before any
    /// record: waiting for it returns at once).
    events: Vec<Vec<ThreadId>>,
    /// Bytes of dynamic shared memory the launch being lowered gives each block.
    launch_smem: Value,
    /// Streams created with `cudaStreamNonBlocking`: not ordered with the legacy default one.
    non_blocking: Vec<u32>,
    /// The elements of each cooperative launch's argument array (`Binding::ArgList`).
    arg_lists: Vec<Vec<Node<'t>>>,
    /// The launch being lowered: whether it is cooperative, and its threads in all.
    launch_cooperative: bool,
    launch_threads: i64,
    /// The hidden counter of the launch's `this_grid().sync()`, made at its first use.
    grid_sync: Option<LocId>,
}

pub(crate) fn lower<'s, 't>(
    src: &'s str,
    root: Node<'t>,
    options: &'s CudaOptions,
    opencl: Option<Vec<crate::ClQualifier>>,
) -> Result<(Program, Vec<Diagnostic>, Vec<crate::KernelLaunch>), Diagnostic> {
    // Lowering recurses over the tree: its depth is bounded before anything is lowered.
    crate::nesting::check_tree(root)?;
    let mut cx = Ctx::new(src, options, opencl);
    // Reading only the harness (the PTX view gives the kernels their code), device code
    // beyond this front-end is passed over: a template kernel is known by its name.
    let harness_only = options.kernels == crate::KernelSource::Ptx;
    // `scopecheck_main`, then `int main()`, which is the harness when there is none.
    let mut mains = [None, None];
    for item in top_level_items(root) {
        cx.top_level(item, harness_only, &mut mains)?;
    }
    let Some(main) = mains[0].or(mains[1]) else {
        return err(
            root,
            "no harness: add `int main() { ... }` (or `void scopecheck_main() { ... }`) that launches the kernels (`k<<<1, 1>>>(...)`), synchronizes and checks the results (`assert(e)`, `if (bad) return 1;`)",
        );
    };
    let body = main
        .child_by_field_name("body")
        .ok_or_else(|| Diagnostic::error("the harness has no body").at(span_of(main)))?;
    let mut host = Lw::new(&mut cx, None, Dims::default(), 0);
    // The last statement of the harness may be its normal end: `return 0;`.
    let mut c = body.walk();
    host.final_return = body
        .named_children(&mut c)
        .filter(|k| k.kind() != "comment")
        .last()
        .filter(|k| k.kind() == "return_statement")
        .map(|k| k.id());
    host.memory_locals = host_thread::addressed_by_threads(&host, body);
    host.host_main(body)?;
    host.check_threads_ended()?;
    host.flush_host();
    drop(host);
    cx.finish()
}

/// The top-level items of `root`, with those of `extern "C" { ... }` blocks in their place.
fn top_level_items(root: Node) -> Vec<Node> {
    // `extern "C" { ... }` and `extern "C" __global__ void k()`: C linkage changes only the
    // kernel's name in the PTX (not mangled), which the PTX view looks up through NVRTC.
    let mut c = root.walk();
    let mut items = Vec::new();
    for item in root.named_children(&mut c) {
        match item.child_by_field_name("body") {
            Some(b) if item.kind() == "linkage_specification" && b.kind() == "declaration_list" => {
                let mut c = b.walk();
                items.extend(b.named_children(&mut c));
            }
            Some(b) if item.kind() == "linkage_specification" => items.push(b),
            _ => items.push(item),
        }
    }
    items
}

impl<'s, 't> Ctx<'s, 't> {
    /// The context of a file with nothing declared yet.
    fn new(
        src: &'s str,
        options: &'s CudaOptions,
        opencl: Option<Vec<crate::ClQualifier>>,
    ) -> Ctx<'s, 't> {
        Ctx {
            nest_base: 0,
            body_heights: HashMap::new(),
            location_names: std::collections::HashSet::new(),
            next_suffix: HashMap::new(),
            opencl: opencl.is_some(),
            cl_quals: opencl.unwrap_or_default(),
            cl_kernels: Vec::new(),
            src,
            options,
            locations: Vec::new(),
            arrays: Vec::new(),
            globals: HashMap::new(),
            shared_decls: Vec::new(),
            shared_by_name: HashMap::new(),
            shared_copies: HashMap::new(),
            funcs: HashMap::new(),
            structs: Vec::new(),
            struct_by_name: HashMap::new(),
            opaque_globals: Vec::new(),
            threads: Vec::new(),
            asserts: Vec::new(),
            warnings: Vec::new(),
            device_threads: 0,
            constants: Vec::new(),
            launches: Vec::new(),
            next_cta: 0,
            next_stream: 1,
            events: Vec::new(),
            launch_smem: 0,
            non_blocking: Vec::new(),
            arg_lists: Vec::new(),
            launch_cooperative: false,
            launch_threads: 0,
            grid_sync: None,
        }
    }

    /// Declares top-level `item` (a type, a global, a function); the harness functions go to
    /// `mains` (`scopecheck_main`, `main`). `harness_only`: the PTX view gives the kernels
    /// their code, so device code beyond this front-end is passed over.
    fn top_level(
        &mut self,
        item: Node<'t>,
        harness_only: bool,
        mains: &mut [Option<Node<'t>>; 2],
    ) -> R<()> {
        // Checking one kernel of a kernel-only file, the other kernels' templates are not
        // needed (the PTX view instantiates the one checked when it is a template).
        if item.kind() == "template_declaration" && !harness_only {
            if let Some(k) = &self.options.kernel {
                if crate::kernels::templated_kernel_name(item, self.src)
                    .is_some_and(|n| n != crate::kernels::base_name(&k.name))
                {
                    return Ok(());
                }
            }
        }
        let item = match item.kind() {
            "template_declaration" if harness_only => {
                let mut c = item.walk();
                let inner = item
                    .named_children(&mut c)
                    .find(|n| n.kind() == "function_definition");
                match inner {
                    Some(f) if qualifiers(f).contains(&"__global__") => f,
                    _ => return Ok(()),
                }
            }
            _ => item,
        };
        match item.kind() {
        "comment" | "preproc_include" => {}
        // `namespace cg = cooperative_groups;`, `using namespace cooperative_groups;`:
        // names are matched by their last part.
        "namespace_alias_definition" | "using_declaration" => {}
        "struct_specifier" | "type_definition" if harness_only => {
            // A type the harness does not use may be beyond this front-end.
            let _ = if item.kind() == "struct_specifier" {
                self.struct_def(item, None)
            } else {
                self.typedef(item)
            };
        }
        "struct_specifier" => self.struct_def(item, None)?,
        "type_definition" => self.typedef(item)?,
        // A kernel declared, not defined (`__global__ void k(int *p);`): the harness of a
        // `.ptx` input launches it.
        "declaration"
            if harness_only
                && qualifiers(item).contains(&"__global__")
                && item
                    .child_by_field_name("declarator")
                    .is_some_and(|d| d.kind() == "function_declarator") =>
        {
            let Some(name) = item
                .child_by_field_name("declarator")
                .and_then(|d| d.child_by_field_name("declarator"))
            else {
                return Ok(());
            };
            let name = self.text(name).to_string();
            self.funcs.entry(name).or_insert(Func {
                kind: FnKind::Global,
                node: item,
            });
        }
        "declaration" if harness_only => {
            // A global only the kernels use may be of a type beyond this front-end (a
            // union): NVRTC's PTX defines it; the harness may not name it.
            if let Err(e) = self.global_decl(item) {
                let mut c = item.walk();
                for d in item.children_by_field_name("declarator", &mut c) {
                    if let Ok((n, _, _)) = self.declarator_shape(d) {
                        self.opaque_globals.push((self.text(n).to_string(), e.clone()));
                    }
                }
            }
        }
        "declaration" => self.global_decl(item)?,
        "function_definition" => {
            let quals = qualifiers(item);
            let decl = item
                .child_by_field_name("declarator")
                .filter(|d| d.kind() == "function_declarator");
            let Some(name_node) = decl.and_then(|d| d.child_by_field_name("declarator")) else {
                if harness_only {
                    return Ok(());
                }
                return err(item, "not supported: this kind of function definition");
            };
            let name = self.text(name_node).to_string();
            let kind = if quals.contains(&"__global__") || self.cl_has(item, "kernel") {
                FnKind::Global
            } else if quals.contains(&"__device__") {
                FnKind::Device
            } else {
                FnKind::Host
            };
            if name == "scopecheck_main" {
                mains[0] = Some(item);
                return Ok(());
            }
            if name == "main" {
                mains[1] = Some(item);
                return Ok(());
            }
            if self.funcs.contains_key(&name) {
                if harness_only && kind != FnKind::Global {
                    return Ok(());
                }
                return err(name_node, format!("not supported: a second definition of `{name}` (overloads)"));
            }
            self.funcs.insert(name, Func { kind, node: item });
        }
        _ if harness_only => {}
        k => {
            return err(
                item,
                format!("not supported: `{}` at the top level ({k}); expected `__device__` / `__shared__` globals, `__global__` kernels, `__device__` functions and `void scopecheck_main()`", first_line(self.text(item))),
            )
        }
    }
        Ok(())
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The CUDA qualifiers of a declaration or definition (`__device__`, `__global__`,
/// `__shared__`, `volatile`, `const`, ...), which the grammar gives as anonymous children or
/// `type_qualifier` nodes.
fn qualifiers<'a>(n: Node<'a>) -> Vec<&'static str> {
    const WORDS: &[&str] = &[
        "__device__",
        "__global__",
        "__host__",
        "__shared__",
        "__managed__",
        "__constant__",
        "volatile",
        "const",
        "constexpr",
        "static",
        "__forceinline__",
        "inline",
    ];
    let mut out = Vec::new();
    let mut c = n.walk();
    for ch in n.children(&mut c) {
        let mut look = |k: &str| {
            if let Some(w) = WORDS.iter().find(|w| **w == k) {
                out.push(*w);
            }
        };
        look(ch.kind());
        if matches!(
            ch.kind(),
            "type_qualifier" | "storage_class_specifier" | "attribute_specifier" | "virtual"
        ) {
            let mut c2 = ch.walk();
            for g in ch.children(&mut c2) {
                look(g.kind());
            }
        }
    }
    out
}

/// Reads a number literal: integers in any C base with suffixes, typed as C types them (the
/// first of `int`, `long`, ... that holds the value; hexadecimal and octal constants may be
/// unsigned); floating constants as the `float` (`f` suffix) or `double` nearest to the
/// decimal text (Rust's parsing rounds correctly, as C compilers do), held as their bits.
/// `None` for what it cannot read (a `long double` `l` suffix, hexadecimal floats).
fn number(text: &str) -> Option<(Value, IntType, bool)> {
    let t = text.replace('\'', "");
    let lower = t.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    let is_float = !is_hex && (lower.contains('.') || lower.contains('e') || lower.ends_with('f'));
    if let (true, Some(rest)) = (is_float, lower.strip_prefix('-')) {
        let (v, ty, _) = number(rest)?;
        return Some((v ^ (1 << (ty.bits - 1)), ty, false));
    }
    if is_float {
        let body = lower.strip_prefix('+').unwrap_or(&lower);
        if body.ends_with('l') {
            return None;
        }
        return Some(match body.strip_suffix('f') {
            Some(b) => (
                i64::from(b.parse::<f32>().ok()?.to_bits()),
                IntType::F32,
                false,
            ),
            None => (
                body.parse::<f64>().ok()?.to_bits() as Value,
                IntType::F64,
                false,
            ),
        });
    }
    // The grammar may take a sign into the literal (`-1`): that is `-` applied to `1`.
    if let Some(rest) = lower.strip_prefix('-') {
        let (v, ty, _) = number(rest)?;
        let (v, ty) = fold_unary("-", v, ty)?.ok()?;
        return Some((v, ty, false));
    }
    let lower = lower.strip_prefix('+').unwrap_or(&lower);
    let body = lower.trim_end_matches(['u', 'l']);
    let suffix = &lower[body.len()..];
    let (v, decimal) = if let Some(h) = body.strip_prefix("0x") {
        (u64::from_str_radix(h, 16).ok()?, false)
    } else if let Some(b) = body.strip_prefix("0b") {
        (u64::from_str_radix(b, 2).ok()?, false)
    } else if body.len() > 1 && body.starts_with('0') {
        (u64::from_str_radix(&body[1..], 8).ok()?, false)
    } else {
        (body.parse().ok()?, true)
    };
    let unsigned = suffix.contains('u');
    let long = suffix.contains('l');
    // C11 6.4.4.1: the candidate types in order (LP64: `long` is `long long`'s width).
    let candidates: &[IntType] = match (unsigned, long, decimal) {
        (false, false, true) => &[IntType::S32, IntType::S64],
        (false, false, false) => &[IntType::S32, IntType::U32, IntType::S64, IntType::U64],
        (true, false, _) => &[IntType::U32, IntType::U64],
        (false, true, true) => &[IntType::S64],
        (false, true, false) => &[IntType::S64, IntType::U64],
        (true, true, _) => &[IntType::U64],
    };
    // A decimal constant too large for `long long` is `unsigned long long` (as GCC and NVCC
    // take it, with a warning).
    let ty = candidates
        .iter()
        .copied()
        .find(|t| t.holds(i128::from(v)))
        .unwrap_or(IntType::U64);
    Some((v as Value, ty, false))
}

/// The IR operation of a C binary operator, and whether its operands swap (`a > b` is
/// `b < a`).
fn bin_op(op: &str) -> Option<(BinOp, bool)> {
    Some(match op {
        "+" => (BinOp::Add, false),
        "-" => (BinOp::Sub, false),
        "*" => (BinOp::Mul, false),
        "/" => (BinOp::Div, false),
        "%" => (BinOp::Rem, false),
        "<<" => (BinOp::Shl, false),
        ">>" => (BinOp::Shr, false),
        "&" => (BinOp::And, false),
        "|" => (BinOp::Or, false),
        "^" => (BinOp::Xor, false),
        "==" => (BinOp::Eq, false),
        "!=" => (BinOp::Ne, false),
        "<" => (BinOp::Lt, false),
        "<=" => (BinOp::Le, false),
        ">" => (BinOp::Lt, true),
        ">=" => (BinOp::Le, true),
        _ => return None,
    })
}

type Folded = Result<(Value, IntType), &'static str>;

/// `op a` on a constant of type `ta`, in C's types; `None` for an operator it is not.
fn fold_unary(op: &str, a: Value, ta: IntType) -> Option<Folded> {
    let t = promote(ta);
    if t.float {
        let mode = scopecheck_ir::FloatMode::default();
        let f = |o| BinOp::Float(o, mode).eval(t, Arithmetic::C, a, 0);
        return Some(match op {
            "-" => f(FloatOp::Neg).map(|v| (v, t)),
            "+" => Ok((a, t)),
            // `!a` is `a == 0`: true for -0.0 too, false for NaN.
            "!" => BinOp::Eq
                .eval(t, Arithmetic::C, a, 0)
                .map(|v| (v, IntType::S32)),
            _ => Err("an integer operation on a floating value"),
        });
    }
    Some(match op {
        "-" => BinOp::Sub.eval(t, Arithmetic::C, 0, a).map(|v| (v, t)),
        "+" => Ok((t.wrap(a), t)),
        "!" => Ok((Value::from(a == 0), IntType::S32)),
        "~" => BinOp::Xor.eval(t, Arithmetic::C, a, -1).map(|v| (v, t)),
        _ => return None,
    })
}

/// `a op b` on constants, in C's types; `None` for an operator it is not.
fn fold_binary(op: &str, a: Value, ta: IntType, b: Value, tb: IntType) -> Option<Folded> {
    if matches!(op, "&&" | "||") {
        let v = if op == "&&" {
            a != 0 && b != 0
        } else {
            a != 0 || b != 0
        };
        return Some(Ok((Value::from(v), IntType::S32)));
    }
    let (bop, swap) = bin_op(op)?;
    let ((x, tx), (y, ty)) = if swap {
        ((b, tb), (a, ta))
    } else {
        ((a, ta), (b, tb))
    };
    let (compute, result) = op_types(bop, tx, ty);
    if compute.float {
        // The usual arithmetic conversions first: an integer operand becomes a float.
        let conv = |v, from| cvt_c(from, compute).eval(compute, Arithmetic::C, v, 0);
        let (x, y) = match (conv(x, tx), conv(y, ty)) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(why), _) | (_, Err(why)) => return Some(Err(why)),
        };
        return Some(bop.eval(compute, Arithmetic::C, x, y).map(|v| (v, result)));
    }
    Some(bop.eval(compute, Arithmetic::C, x, y).map(|v| (v, result)))
}

/// C's conversion from `from` to `to` as a [`BinOp::Cvt`]: to nearest, but a float to an
/// integer truncates (C11 6.3.1.4).
fn cvt_c(from: IntType, to: IntType) -> BinOp {
    let round = if from.float && !to.float {
        scopecheck_ir::Rounding::Zero
    } else {
        scopecheck_ir::Rounding::Nearest
    };
    BinOp::Cvt {
        from,
        mode: scopecheck_ir::FloatMode {
            round,
            ..Default::default()
        },
        integral: false,
    }
}

fn field<'t>(n: Node<'t>, name: &str) -> R<Node<'t>> {
    n.child_by_field_name(name)
        .ok_or_else(|| Diagnostic::error(format!("internal: no `{name}` here")).at(span_of(n)))
}

fn only_child(n: Node) -> R<Node> {
    let mut c = n.walk();
    let k = n.named_children(&mut c).find(|k| k.kind() != "comment");
    k.ok_or_else(|| Diagnostic::error("empty parentheses").at(span_of(n)))
}

/// A launch's stream: the legacy default stream is `None`.
type Stream = Option<u32>;

/// What the harness has launched so far.
#[derive(Default)]
struct Launches {
    /// Each launch: its stream and threads.
    done: Vec<(Stream, Vec<ThreadId>)>,
    /// What later launches on a stream wait for besides the stream's order
    /// (`cudaStreamWaitEvent`).
    stream_waits: Vec<(Stream, Vec<ThreadId>)>,
    /// Finished host segments.
    host_done: Vec<ThreadId>,
    /// The harness's `std::thread`s.
    host_threads: Vec<host_thread::HostThread>,
    /// What the current host segment starts after.
    host_after: Vec<ThreadId>,
    segments: u32,
}

/// One thread being lowered: a kernel thread of a launch (`dims` given) or host code.
struct Lw<'c, 's, 't> {
    cx: &'c mut Ctx<'s, 't>,
    /// The CTA of a device thread; `None` on the host.
    cta: Option<u32>,
    dims: Dims,
    seg: u32,
    /// The registers, code, names and labels (shared with the litmus C dialect).
    build: CodeBuilder<Binding>,
    init_regs: Vec<(RegId, Value)>,
    loops: Vec<(usize, usize)>,
    /// Inlined calls: (end label, result register).
    frames: Vec<(usize, Option<RegId>)>,
    asserts: Vec<(RegId, Span)>,
    /// Host only: statements nested in control flow (launches must be at the top).
    nesting: u32,
    launches: Launches,
    /// The harness's last statement when it is a `return` (its normal end).
    final_return: Option<usize>,
    /// The kernel as the launch being made names it (`sum<4>`).
    launch_expression: String,
    /// The `this_grid().sync()` generation target of a device thread: the counter value the
    /// last grid sync waits for.
    grid_gen: Option<RegId>,
    /// The function of a `std::thread`: host code with no stream order of its own, where
    /// launches and synchronizations are refused.
    spawned: bool,
    /// Host scalar locals whose address the harness gives a `std::thread`: memory (one
    /// `HostPageable` location each) instead of a register, which only one host segment sees.
    memory_locals: Vec<String>,
}

impl<'c, 's, 't> Lw<'c, 's, 't> {
    fn new(cx: &'c mut Ctx<'s, 't>, cta: Option<u32>, dims: Dims, seg: u32) -> Self {
        let constants = cx.constants.clone();
        Lw {
            cx,
            cta,
            dims,
            seg,
            build: CodeBuilder::new(constants),
            init_regs: Vec::new(),
            loops: Vec::new(),
            frames: Vec::new(),
            asserts: Vec::new(),
            nesting: 0,
            launches: Launches::default(),
            final_return: None,
            launch_expression: String::new(),
            grid_gen: None,
            spawned: false,
            memory_locals: Vec::new(),
        }
    }

    /// A thread to lower with the parameters `frame` bound (a launch's kernel thread, a
    /// `std::thread`'s function), seeing the namespace-scope constants too.
    fn with_frame(
        cx: &'c mut Ctx<'s, 't>,
        cta: Option<u32>,
        dims: Dims,
        seg: u32,
        frame: impl IntoIterator<Item = (String, Binding)>,
    ) -> Self {
        let mut k = Lw::new(cx, cta, dims, seg);
        let mut scope = k.cx.constants.clone();
        scope.extend(frame);
        k.build.scopes = vec![scope];
        k
    }

    /// Ends lowering this thread: its code becomes thread `name` of the program (its asserts
    /// part of the condition); returns its id.
    fn push_thread(
        &mut self,
        name: String,
        placement: Placement,
        span: Span,
        after: Vec<ThreadId>,
    ) -> ThreadId {
        self.build.resolve();
        let id = ThreadId(self.cx.threads.len() as u32);
        for (r, span) in std::mem::take(&mut self.asserts) {
            self.cx.asserts.push((Observable::Reg(id, r), span));
        }
        let thread = Thread {
            name,
            placement,
            span: Some(span),
            registers: std::mem::take(&mut self.build.registers),
            init_regs: std::mem::take(&mut self.init_regs),
            code: std::mem::take(&mut self.build.code),
            after,
        };
        self.cx.threads.push(thread);
        id
    }

    fn host(&self) -> bool {
        self.cta.is_none()
    }

    fn text(&self, n: Node<'t>) -> &'s str {
        self.cx.text(n)
    }
}

/// Whether the statements enclosing declaration `d` assign, increment or take the address of
/// a variable named `name` (any variable of that name: shadowing makes this conservative).
fn assigned_after(d: Node, name: &str, src: &str, by_address: bool) -> bool {
    let Some(scope) = d.parent() else {
        return true;
    };
    let is_name = |n: Option<Node>| {
        n.is_some_and(|n| {
            let mut n = n;
            while n.kind() == "parenthesized_expression" {
                match n.named_child(0) {
                    Some(c) => n = c,
                    None => return false,
                }
            }
            n.kind() == "identifier" && &src[n.byte_range()] == name
        })
    };
    let mut stack = vec![scope];
    while let Some(n) = stack.pop() {
        let hit = match n.kind() {
            "assignment_expression" => is_name(n.child_by_field_name("left")),
            "update_expression" => is_name(n.child_by_field_name("argument")),
            // `x.compare_exchange_strong(e, d)` writes `e` (passed by reference).
            "call_expression" => {
                n.child_by_field_name("function")
                    .filter(|f| f.kind() == "field_expression")
                    .and_then(|f| f.child_by_field_name("field"))
                    .is_some_and(|f| src[f.byte_range()].starts_with("compare_exchange"))
                    && is_name(
                        n.child_by_field_name("arguments")
                            .and_then(|a| a.named_child(0)),
                    )
            }
            "pointer_expression" => {
                by_address
                    && n.child_by_field_name("operator")
                        .is_some_and(|o| &src[o.byte_range()] == "&")
                    && is_name(n.child_by_field_name("argument"))
            }
            _ => false,
        };
        if hit {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// Whether a declarator declares an array.
fn has_array(mut d: Node) -> bool {
    loop {
        if d.kind() == "array_declarator" {
            return true;
        }
        match d.child_by_field_name("declarator") {
            Some(n) => d = n,
            None => return false,
        }
    }
}

/// Whether a host local array may have this element type: plain scalars.
fn host_array_type(ty: &Ty) -> bool {
    !(ty.pointer
        || ty.dim3
        || ty.stream
        || ty.atomic_ref
        || ty.cl_kernel
        || ty.shared
        || ty.strukt.is_some()
        || ty.access != Access::Plain)
}

fn condition(s: Node) -> R<Node> {
    field(s, "condition")
}

fn is_empty_stmt(s: Node) -> bool {
    match s.kind() {
        "compound_statement" => {
            let mut c = s.walk();
            let r = s.named_children(&mut c).all(|k| k.kind() == "comment");
            r
        }
        "expression_statement" => s.named_child_count() == 0,
        _ => false,
    }
}

mod by_value;
mod call;
mod context;
mod depth;
mod emit;
mod expr;
mod float;
mod harness;
mod host_thread;
mod launch;
mod memory;
mod opencl;
mod rows;
mod stmt;
mod warp;

use context::ArrayShape;

/// Whether `body` assigns, increments or takes the address of the name `var`.
fn writes_name(body: Node, var: &str, src: &str) -> bool {
    let text = |n: Node| n.utf8_text(src.as_bytes()).unwrap_or("");
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        let target = match n.kind() {
            "assignment_expression" => n.child_by_field_name("left"),
            "update_expression" => n.child_by_field_name("argument"),
            "pointer_expression" if n.child(0).is_some_and(|o| text(o) == "&") => {
                n.child_by_field_name("argument")
            }
            _ => None,
        };
        if target.is_some_and(|t| text(t) == var) {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    false
}

/// A cooperative-groups name without its namespace (`cg::this_grid` and
/// `cooperative_groups::this_grid` are `this_grid`); other names as they are.
/// `N` of `tiled_partition<N>` / `thread_block_tile<N>`: a power of two up to 32.
fn tile_size(name: &str) -> Option<u32> {
    let open = name.find('<')?;
    let close = name.rfind('>')?;
    let n: u32 = name.get(open + 1..close)?.trim().parse().ok()?;
    (n.is_power_of_two() && n <= 32).then_some(n)
}

fn cg_base(name: &str) -> &str {
    let n = name.strip_prefix("::").unwrap_or(name);
    n.strip_prefix("cooperative_groups::")
        .or_else(|| n.strip_prefix("cg::"))
        .unwrap_or(n)
}

/// Whether `decl` of the declaration `text` is `extern __shared__ T a[]`: an array whose size
/// the launch gives.
fn is_dynamic_array(text: &str, decl: Node) -> bool {
    text.trim_start().starts_with("extern")
        && decl.kind() == "array_declarator"
        && decl.child_by_field_name("size").is_none()
        && decl
            .child_by_field_name("declarator")
            .is_some_and(|n| n.kind() == "identifier")
}
