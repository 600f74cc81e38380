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

use std::collections::HashMap;

use scopecheck_ir::{
    Address, Arch, Arithmetic, BarrierKind, BinOp, BranchCond, CmpOp, Condition, FenceOrder,
    FenceSpaces, Instr, InstrKind, IntType, LocId, Location, MemorySpace, Observable, Operand,
    Order, Placement, Program, Prop, Quantifier, RegId, RmwKind, RmwOp, Scope, Span, Term, Thread,
    ThreadId, Value,
};
use scopecheck_ir::{FloatMode, FloatOp};
use tree_sitter::Node;

use crate::{span_of, CudaError, CudaOptions, Warning, MAX_ARRAY_ELEMENTS, MAX_INLINE_DEPTH};
use scopecheck_litmus::vocab::{
    common_type, compares_raw, cuda_atomic, op_types, order_name, promote, thread_scope, CUDA_RMW,
    HINT_LOADS, HINT_STORES, RMW_MEMBERS,
};

type R<T> = Result<T, CudaError>;

fn err<T>(n: Node, msg: impl Into<String>) -> R<T> {
    Err(CudaError::new(span_of(n), msg))
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
}

/// A `__shared__` declaration: one array per CTA, made when first touched.
struct SharedDecl<'t> {
    name: String,
    len: usize,
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
    opaque_globals: Vec<(String, CudaError)>,
    threads: Vec<Thread>,
    asserts: Vec<(Observable, Span)>,
    warnings: Vec<Warning>,
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
) -> Result<(Program, Vec<Warning>, Vec<crate::KernelLaunch>), CudaError> {
    // Lowering recurses over the tree: its depth is bounded before anything is lowered.
    crate::nesting::check_tree(root)?;
    let mut cx = Ctx {
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
    };
    let mut main = None;
    // `int main()` is the harness when there is no `scopecheck_main`.
    let mut c_main = None;
    let mut c = root.walk();
    // Reading only the harness (the PTX view gives the kernels their code), device code
    // beyond this front-end is passed over: a template kernel is known by its name.
    let harness_only = options.kernels == crate::KernelSource::Ptx;
    // `extern "C" { ... }` and `extern "C" __global__ void k()`: C linkage changes only the
    // kernel's name in the PTX (not mangled), which the PTX view looks up through NVRTC.
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
    for item in items {
        // Checking one kernel of a kernel-only file, the other kernels' templates are not
        // needed (the PTX view instantiates the one checked when it is a template).
        if item.kind() == "template_declaration" && !harness_only {
            if let Some(k) = &options.kernel {
                if crate::kernels::templated_kernel_name(item, src)
                    .is_some_and(|n| n != crate::kernels::base_name(&k.name))
                {
                    continue;
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
                    _ => continue,
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
                    cx.struct_def(item, None)
                } else {
                    cx.typedef(item)
                };
            }
            "struct_specifier" => cx.struct_def(item, None)?,
            "type_definition" => cx.typedef(item)?,
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
                    continue;
                };
                let name = cx.text(name).to_string();
                cx.funcs.entry(name).or_insert(Func {
                    kind: FnKind::Global,
                    node: item,
                });
            }
            "declaration" if harness_only => {
                // A global only the kernels use may be of a type beyond this front-end (a
                // union): NVRTC's PTX defines it; the harness may not name it.
                if let Err(e) = cx.global_decl(item) {
                    let mut c = item.walk();
                    for d in item.children_by_field_name("declarator", &mut c) {
                        if let Ok((n, _, _)) = cx.declarator_shape(d) {
                            cx.opaque_globals.push((cx.text(n).to_string(), e.clone()));
                        }
                    }
                }
            }
            "declaration" => cx.global_decl(item)?,
            "function_definition" => {
                let quals = qualifiers(item);
                let decl = item
                    .child_by_field_name("declarator")
                    .filter(|d| d.kind() == "function_declarator");
                let Some(name_node) = decl.and_then(|d| d.child_by_field_name("declarator")) else {
                    if harness_only {
                        continue;
                    }
                    return err(item, "not supported: this kind of function definition");
                };
                let name = cx.text(name_node).to_string();
                let kind = if quals.contains(&"__global__") || cx.cl_has(item, "kernel") {
                    FnKind::Global
                } else if quals.contains(&"__device__") {
                    FnKind::Device
                } else {
                    FnKind::Host
                };
                if name == "scopecheck_main" {
                    main = Some(item);
                    continue;
                }
                if name == "main" {
                    c_main = Some(item);
                    continue;
                }
                if cx.funcs.contains_key(&name) {
                    if harness_only && kind != FnKind::Global {
                        continue;
                    }
                    return err(name_node, format!("not supported: a second definition of `{name}` (overloads)"));
                }
                cx.funcs.insert(name, Func { kind, node: item });
            }
            _ if harness_only => {}
            k => {
                return err(
                    item,
                    format!("not supported: `{}` at the top level ({k}); expected `__device__` / `__shared__` globals, `__global__` kernels, `__device__` functions and `void scopecheck_main()`", first_line(cx.text(item))),
                )
            }
        }
    }
    let Some(main) = main.or(c_main) else {
        return err(
            root,
            "no harness: add `int main() { ... }` (or `void scopecheck_main() { ... }`) that launches the kernels (`k<<<1, 1>>>(...)`), synchronizes and checks the results (`assert(e)`, `if (bad) return 1;`)",
        );
    };
    let body = main
        .child_by_field_name("body")
        .ok_or_else(|| CudaError::new(span_of(main), "the harness has no body"))?;
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

impl<'s, 't> Ctx<'s, 't> {
    fn text(&self, n: Node<'t>) -> &'s str {
        &self.src[n.byte_range()]
    }

    fn warn(&mut self, n: Node, message: impl Into<String>) {
        self.warnings.push(Warning {
            span: span_of(n),
            message: message.into(),
        });
    }

    /// A new array of `len` elements of type `ty` (or of the struct `strukt`: one location
    /// per field, each of its field's type); the initial values are converted to the types.
    #[allow(clippy::too_many_arguments)]
    fn new_array(
        &mut self,
        name: &str,
        len: usize,
        strukt: Option<usize>,
        ty: IntType,
        space: MemorySpace,
        init: &[Value],
        span: Option<Span>,
        harness: bool,
    ) -> R<usize> {
        // A struct element is one location per field: `s.a`, `s[1].flag`.
        let fields: Vec<(String, IntType)> = match strukt {
            Some(sid) => self.structs[sid]
                .fields
                .iter()
                .map(|(f, t)| (format!(".{f}"), t.int))
                .collect(),
            None => vec![(String::new(), ty)],
        };
        let nf = fields.len();
        // Checked before anything is allocated.
        let at = span.unwrap_or_default();
        if self.arrays.len() >= crate::MAX_ALLOCATIONS {
            return Err(CudaError::new(
                at,
                format!(
                    "too many allocations: more than {} arrays, allocations and variables in memory",
                    crate::MAX_ALLOCATIONS
                ),
            ));
        }
        let len = len.saturating_mul(nf);
        if self.locations.len().saturating_add(len) > crate::MAX_LOCATIONS {
            return Err(CudaError::new(
                at,
                format!(
                    "too many memory locations: with `{name}`'s {len} the program would have more than {} (each element, and each field of a struct element, is one)",
                    crate::MAX_LOCATIONS
                ),
            ));
        }
        let mut elems = Vec::with_capacity(len);
        for i in 0..len {
            let (el, (f, fty)) = (i / nf, &fields[i % nf]);
            let base = if len == nf {
                format!("{name}{f}")
            } else {
                format!("{name}[{el}]{f}")
            };
            let mut n = base.clone();
            if self.location_names.contains(&n) {
                let k = self.next_suffix.entry(base.clone()).or_insert(2);
                loop {
                    n = format!("{base}#{k}");
                    *k += 1;
                    if !self.location_names.contains(&n) {
                        break;
                    }
                }
            }
            self.location_names.insert(n.clone());
            self.locations.push(Location {
                name: n,
                space,
                init: fty.wrap(init.get(i).copied().unwrap_or(0)),
                ty: *fty,
                span,
            });
            elems.push(LocId((self.locations.len() - 1) as u32));
        }
        self.arrays.push(Array {
            name: name.to_string(),
            elems,
            space,
            harness,
        });
        Ok(self.arrays.len() - 1)
    }

    /// The type of a declaration or parameter node (its `type` field and qualifiers), with the
    /// pointer / array shape of `declarator`.
    fn ty(&self, decl: Node<'t>, declarator: Option<Node>) -> R<Ty> {
        let quals = qualifiers(decl);
        let tnode = decl
            .child_by_field_name("type")
            .ok_or_else(|| CudaError::new(span_of(decl), "a declaration without a type"))?;
        let mut ty = Ty {
            access: if quals.contains(&"volatile") {
                Access::Volatile
            } else {
                Access::Plain
            },
            constant: quals.contains(&"const") || quals.contains(&"constexpr"),
            shared: quals.contains(&"__shared__") || self.cl_has(decl, "local"),
            ..Ty::int()
        };
        self.base_type(tnode, &mut ty)?;
        let mut d = declarator;
        while let Some(n) = d {
            match n.kind() {
                "pointer_declarator" | "abstract_pointer_declarator" => {
                    if ty.pointer {
                        return err(n, "not supported: pointers to pointers");
                    }
                    ty.pointer = true;
                    // `int *volatile p` qualifies the pointer, `volatile int *p` the pointee.
                    d = n.child_by_field_name("declarator");
                }
                "init_declarator" | "array_declarator" | "parenthesized_declarator" => {
                    d = n.child_by_field_name("declarator");
                }
                "reference_declarator" => {
                    return err(n, "not supported: references (pass a pointer)");
                }
                _ => d = None,
            }
        }
        Ok(ty)
    }

    fn base_type(&self, t: Node<'t>, ty: &mut Ty) -> R<()> {
        let text: String = self.text(t).split_whitespace().collect();
        match t.kind() {
            "primitive_type" | "sized_type_specifier" => {
                if text == "longdouble" {
                    return err(t, "not supported: `long double` (float and double are)");
                }
                // Other spellings (`signed short int` and the like): taken as `int`, as before
                // types had widths.
                let (int, size) = scalar_type(&text).unwrap_or((IntType::S32, 4));
                ty.int = int;
                ty.size = size;
                Ok(())
            }
            "struct_specifier" => {
                if t.child_by_field_name("body").is_some() {
                    return err(t, "not supported: a struct defined inside a declaration; define it on its own (`struct S { int a; int flag; };`)");
                }
                let name = t
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or("");
                let Some(&sid) = self.struct_by_name.get(name) else {
                    return err(t, format!("unknown struct `{name}`"));
                };
                ty.strukt = Some(sid);
                ty.size = self.structs[sid].size;
                Ok(())
            }
            "type_identifier" if self.struct_by_name.contains_key(&text) => {
                let sid = self.struct_by_name[&text];
                ty.strukt = Some(sid);
                ty.size = self.structs[sid].size;
                Ok(())
            }
            "type_identifier" => {
                if let Some((int, size)) = scalar_type(&text) {
                    ty.int = int;
                    ty.size = size;
                    return Ok(());
                }
                // OpenCL C atomics: device scope by default.
                let atomic = match text.as_str() {
                    "atomic_int" => Some((IntType::S32, 4)),
                    "atomic_float" => Some((IntType::F32, 4)),
                    "atomic_double" => Some((IntType::F64, 8)),
                    "atomic_uint" => Some((IntType::U32, 4)),
                    "atomic_long" | "atomic_intptr_t" | "atomic_ptrdiff_t" => {
                        Some((IntType::S64, 8))
                    }
                    "atomic_ulong" | "atomic_size_t" | "atomic_uintptr_t" => {
                        Some((IntType::U64, 8))
                    }
                    _ => None,
                };
                if let Some((int, size)) = atomic {
                    ty.access = Access::Atomic(Scope::Gpu);
                    ty.int = int;
                    ty.size = size;
                    return Ok(());
                }
                match text.as_str() {
                    "dim3" => ty.dim3 = true,
                    "cudaStream_t" => ty.stream = true,
                    "cudaEvent_t" => ty.event = true,
                    // OpenCL host types.
                    "cl_mem" => ty.pointer = true,
                    "cl_kernel" => ty.cl_kernel = true,
                    "cl_command_queue" => ty.stream = true,
                    "cl_context" | "cl_program" | "cl_device_id" | "cl_platform_id"
                    | "cl_event" => {}
                    _ => return err(t, format!("not supported: the type `{text}`")),
                }
                Ok(())
            }
            "qualified_identifier" | "template_type" => self.atomic_type(t, &text, ty),
            _ => err(t, format!("not supported: the type `{text}`")),
        }
    }

    /// `cuda::atomic<T[, S]>`, `cuda::atomic_ref<T[, S]>`, `cuda::std::atomic<T>`,
    /// `std::atomic<T>`, `std::atomic_ref<T>`.
    fn atomic_type(&self, t: Node<'t>, text: &str, ty: &mut Ty) -> R<()> {
        let open = text.find('<').unwrap_or(text.len());
        let head = &text[..open];
        let (is_ref, default) = match head {
            "cuda::atomic" | "cuda::std::atomic" | "std::atomic" => (false, Scope::Sys),
            "cuda::atomic_ref" | "cuda::std::atomic_ref" | "std::atomic_ref" => (true, Scope::Sys),
            _ => return err(t, format!("not supported: the type `{text}`")),
        };
        // The template arguments, from the tree.
        let mut args = Vec::new();
        let mut stack = vec![t];
        while let Some(n) = stack.pop() {
            if n.kind() == "template_argument_list" {
                let mut c = n.walk();
                args = n
                    .named_children(&mut c)
                    .map(|a| self.text(a).split_whitespace().collect::<String>())
                    .collect();
                break;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        let scope = match args.get(1) {
            Some(s) => thread_scope(s)
                .ok_or_else(|| CudaError::new(span_of(t), format!("unknown thread scope `{s}`; expected cuda::thread_scope_thread / block / cluster / device / system")))?,
            None => default,
        };
        if head.starts_with("std::") && args.len() > 1 {
            return err(t, "std::atomic takes no scope");
        }
        ty.access = Access::Atomic(scope);
        ty.atomic_ref = is_ref;
        let (int, size) = args
            .first()
            .and_then(|a| scalar_type(a))
            .unwrap_or((IntType::S32, 4));
        ty.int = int;
        ty.size = size;
        Ok(())
    }

    /// Whether the OpenCL qualifier `word` qualifies declaration `n`: blanked words right
    /// before it, or inside it before its type.
    fn cl_has(&self, n: Node, word: &str) -> bool {
        if !self.opencl {
            return false;
        }
        let type_start = n
            .child_by_field_name("type")
            .map_or(n.start_byte(), |t| t.start_byte());
        if self
            .cl_quals
            .iter()
            .any(|q| q.word == word && q.start >= n.start_byte() && q.end <= type_start)
        {
            return true;
        }
        let b = self.src.as_bytes();
        let mut pos = n.start_byte();
        loop {
            while pos > 0 && b[pos - 1].is_ascii_whitespace() {
                pos -= 1;
            }
            match self.cl_quals.iter().find(|q| q.end == pos) {
                Some(q) if q.word == word => return true,
                Some(q) => pos = q.start,
                None => return false,
            }
        }
    }

    /// `struct S { int a; volatile int flag; };` (or the body of `typedef struct { ... } S;`):
    /// scalar fields, one location each.
    fn struct_def(&mut self, s: Node<'t>, alias: Option<&str>) -> R<()> {
        let name = match (s.child_by_field_name("name"), alias) {
            (_, Some(a)) => a.to_string(),
            (Some(n), None) => self.text(n).to_string(),
            (None, None) => {
                return err(
                    s,
                    "not supported: an anonymous struct without a typedef name",
                )
            }
        };
        let Some(body) = s.child_by_field_name("body") else {
            return err(
                s,
                format!("not supported: a declaration of `struct {name}` without its fields"),
            );
        };
        if self.struct_by_name.contains_key(&name) {
            return err(s, format!("`struct {name}` is defined twice"));
        }
        let mut fields: Vec<(String, Ty)> = Vec::new();
        let mut c = body.walk();
        for fd in body.named_children(&mut c) {
            if fd.kind() == "comment" {
                continue;
            }
            // Reading only the harness, a method is the PTX view's business.
            if self.options.kernels == crate::KernelSource::Ptx
                && matches!(fd.kind(), "function_definition" | "template_declaration")
            {
                continue;
            }
            if fd.kind() != "field_declaration" {
                return err(
                    fd,
                    format!(
                        "not supported: `{}` in a struct (fields are scalars)",
                        first_line(self.text(fd))
                    ),
                );
            }
            let mut c2 = fd.walk();
            let decls: Vec<Node> = fd.children_by_field_name("declarator", &mut c2).collect();
            for d in decls {
                let ty = self.ty(fd, Some(d))?;
                // A pointer field makes the struct one held by value only (`by_value`).
                if ty.dim3 || ty.stream || ty.atomic_ref || ty.strukt.is_some() {
                    return err(d, "not supported: a field of this type (fields are scalars or pointers: int, unsigned, long, float, bool, volatile or atomic, or a pointer to one)");
                }
                let (fname, len, init) = self.declarator_shape(d)?;
                if len > 1 || d.kind() == "array_declarator" {
                    return err(d, "not supported: an array field (fields are scalars)");
                }
                if init.is_some() {
                    return err(d, "not supported: a default member initialiser");
                }
                let fname = self.text(fname).to_string();
                if fields.iter().any(|(f, _)| *f == fname) {
                    return err(d, format!("the field `{fname}` is declared twice"));
                }
                fields.push((fname, ty));
            }
        }
        if fields.is_empty() {
            return err(s, "not supported: a struct without fields");
        }
        let size = fields.iter().map(|(_, t)| t.size).sum();
        self.structs.push(StructDef {
            name: name.clone(),
            fields,
            size,
        });
        self.struct_by_name.insert(name, self.structs.len() - 1);
        Ok(())
    }

    /// `typedef struct [S] { ... } T;`
    fn typedef(&mut self, d: Node<'t>) -> R<()> {
        let t = field(d, "type")?;
        let alias = d
            .child_by_field_name("declarator")
            .filter(|a| a.kind() == "type_identifier");
        match (t.kind(), alias) {
            ("struct_specifier", Some(a)) if t.child_by_field_name("body").is_some() => {
                let alias = self.text(a).to_string();
                self.struct_def(t, Some(&alias))?;
                // `struct S` names it too.
                if let Some(n) = t.child_by_field_name("name") {
                    let sid = self.structs.len() - 1;
                    self.struct_by_name.insert(self.text(n).to_string(), sid);
                }
                Ok(())
            }
            _ => err(
                d,
                "not supported: this typedef (only `typedef struct { ... } Name;`)",
            ),
        }
    }

    /// A top-level declaration: `__device__` / `__managed__` / `__shared__` globals.
    fn global_decl(&mut self, d: Node<'t>) -> R<()> {
        let quals = qualifiers(d);
        let space = if quals.contains(&"__shared__") {
            MemorySpace::Shared
        } else if quals.contains(&"__managed__") {
            MemorySpace::Managed
        } else if quals.contains(&"__device__")
            || quals.contains(&"__constant__")
            || self.cl_has(d, "global")
            || self.cl_has(d, "constant")
        {
            MemorySpace::Global
        } else if self.cl_has(d, "local") {
            MemorySpace::Shared
        } else if quals.contains(&"constexpr") || quals.contains(&"const") {
            // A compile-time constant (`constexpr int N = 4;`): host and device code use it
            // as its value.
            let mut c = d.walk();
            let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
            for decl in decls {
                let ty = self.ty(d, Some(decl))?;
                let (name_node, len, init) = self.declarator_shape(decl)?;
                let (Some(init), 1, false) = (init, len, ty.pointer) else {
                    return err(
                        decl,
                        "not supported: a constant that is not one initialised integer",
                    );
                };
                let v = self.const_value(init, ty.int)?;
                let name = self.text(name_node).to_string();
                self.constants.push((name, Binding::Const(v, ty.int)));
            }
            return Ok(());
        } else {
            return err(
                d,
                "not supported: a host global variable; declare it `__device__` or `__managed__`, or allocate it in scopecheck_main",
            );
        };
        let mut c = d.walk();
        let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
        for decl in decls {
            let ty = self.ty(d, Some(decl))?;
            if ty.pointer || ty.dim3 || ty.stream || ty.atomic_ref {
                return err(
                    decl,
                    "not supported: a global of this type (globals are scalars or arrays of them)",
                );
            }
            self.not_in_memory(ty.strukt, decl)?;
            let (name_node, len, init) = self.declarator_shape(decl)?;
            let name = self.text(name_node).to_string();
            if self.globals.contains_key(&name) || self.shared_by_name.contains_key(&name) {
                return err(name_node, format!("`{name}` is declared twice"));
            }
            if space == MemorySpace::Shared {
                if init.is_some() {
                    return err(decl, "a `__shared__` variable cannot have an initialiser");
                }
                self.shared_decls.push(SharedDecl {
                    name: name.clone(),
                    len,
                    ty,
                    node: name_node,
                });
                self.shared_by_name
                    .insert(name, self.shared_decls.len() - 1);
                continue;
            }
            let per = ty.strukt.map_or(1, |sid| self.structs[sid].fields.len());
            let values = match init {
                Some(v) => {
                    let tys: Vec<IntType> = match ty.strukt {
                        Some(sid) => self.structs[sid].fields.iter().map(|f| f.1.int).collect(),
                        None => vec![ty.int],
                    };
                    self.const_init(v, len * per, &tys)?
                }
                None => Vec::new(),
            };
            let arr = self.new_array(
                &name,
                len,
                ty.strukt,
                ty.int,
                space,
                &values,
                Some(span_of(name_node)),
                false,
            )?;
            self.globals.insert(name, (arr, ty));
        }
        Ok(())
    }

    /// The name, element count and initialiser of a declarator.
    fn declarator_shape(&self, decl: Node<'t>) -> R<(Node<'t>, usize, Option<Node<'t>>)> {
        let mut len = 1usize;
        let mut init = None;
        let mut d = decl;
        loop {
            match d.kind() {
                "identifier" | "field_identifier" => return Ok((d, len, init)),
                "init_declarator" => {
                    init = d.child_by_field_name("value");
                }
                "array_declarator" => {
                    let size = d.child_by_field_name("size").ok_or_else(|| {
                        CudaError::new(span_of(d), "not supported: an array without a size")
                    })?;
                    let n = self.const_expr(size)?;
                    if n <= 0 || n as usize > MAX_ARRAY_ELEMENTS {
                        return err(
                            size,
                            format!("array size {n} outside 1..={MAX_ARRAY_ELEMENTS}"),
                        );
                    }
                    len = len
                        .checked_mul(n as usize)
                        .filter(|l| *l <= MAX_ARRAY_ELEMENTS)
                        .ok_or_else(|| CudaError::new(span_of(d), "array too large"))?;
                }
                "pointer_declarator" | "parenthesized_declarator" => {}
                k => return err(d, format!("not supported: declarator `{k}`")),
            }
            d = d
                .child_by_field_name("declarator")
                .ok_or_else(|| CudaError::new(span_of(d), "a declarator without a name"))?;
        }
    }

    /// The initial values of `len` elements, element `k` of type `tys[k % tys.len()]` (the
    /// fields of a struct, in order).
    fn const_init(&mut self, v: Node<'t>, len: usize, tys: &[IntType]) -> R<Vec<Value>> {
        let ty = |k: usize| {
            tys.get(k % tys.len().max(1))
                .copied()
                .unwrap_or(IntType::S32)
        };
        if v.kind() == "initializer_list" {
            // Nested lists (arrays of structs) are read flat, in order.
            let mut flat = Vec::new();
            let mut stack = vec![v];
            while let Some(n) = stack.pop() {
                if n.kind() == "initializer_list" {
                    let mut c = n.walk();
                    let kids: Vec<Node> = n.named_children(&mut c).collect();
                    stack.extend(kids.into_iter().rev());
                } else if n.kind() != "comment" {
                    let v = self.const_value(n, ty(flat.len()))?;
                    flat.push(v);
                }
            }
            if flat.len() > len {
                return err(v, "more initialisers than elements");
            }
            return Ok(flat);
        }
        Ok(vec![self.const_value(v, ty(0))?])
    }

    /// A compile-time constant converted to `to`, as C initialises a variable of that type
    /// (an integer to a float, a float to an integer truncated; one that type cannot hold is
    /// an error).
    fn const_value(&mut self, n: Node<'t>, to: IntType) -> R<Value> {
        let (v, from) = self.const_typed(n)?;
        if !(from.float || to.float) {
            return Ok(to.wrap(v));
        }
        cvt_c(from, to)
            .eval(to, Arithmetic::C, v, 0)
            .map_err(|why| {
                CudaError::new(span_of(n), format!("`{}` as a {to}: {why}", self.text(n)))
            })
    }

    /// A number literal: its value, its C type, and whether it was a float constant that is
    /// not a whole number.
    fn literal(&self, n: Node<'t>) -> R<(Value, IntType, bool)> {
        number(self.text(n)).ok_or_else(|| {
            CudaError::new(
                span_of(n),
                format!("not supported: the number `{}`", self.text(n)),
            )
        })
    }

    /// Constant expressions without names (array sizes, global initialisers).
    fn const_expr(&self, n: Node<'t>) -> R<Value> {
        Ok(self.const_typed(n)?.0)
    }

    /// A constant expression folded in C's types; an undefined one is an error.
    fn const_typed(&self, n: Node<'t>) -> R<(Value, IntType)> {
        match n.kind() {
            "number_literal" => {
                let (v, ty, _) = self.literal(n)?;
                Ok((v, ty))
            }
            // `bool` promotes to `int`.
            "true" => Ok((1, IntType::S32)),
            "false" | "null" | "nullptr" => Ok((0, IntType::S32)),
            "identifier" => match self.constants.iter().rev().find(|(k, _)| k == self.text(n)) {
                Some((_, Binding::Const(v, ty))) => Ok((*v, *ty)),
                _ => err(n, format!("`{}` is not a constant", self.text(n))),
            },
            "parenthesized_expression" => self.const_typed(only_child(n)?),
            "unary_expression" => {
                let op = self.operator(n);
                let (a, ta) = self.const_typed(field(n, "argument")?)?;
                let folded = fold_unary(op, a, ta).ok_or_else(|| {
                    CudaError::new(span_of(n), format!("not supported: operator `{op}`"))
                })?;
                Self::defined(folded, n)
            }
            // A chain `a + b + c ...` by a loop (`nesting::chain_of`), left to right.
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(n);
                let (mut a, mut ta) = self.const_typed(first)?;
                for o in ops {
                    let (b, tb) = self.const_typed(field(o, "right")?)?;
                    let folded = fold_binary(self.operator(o), a, ta, b, tb).ok_or_else(|| {
                        CudaError::new(span_of(o), format!("cannot fold `{}`", self.text(o)))
                    })?;
                    (a, ta) = Self::defined(folded, o)?;
                }
                Ok((a, ta))
            }
            "sizeof_expression" => Ok((self.sizeof(n)?, IntType::U64)),
            _ => err(
                n,
                format!("expected a constant here, found `{}`", self.text(n)),
            ),
        }
    }

    /// The operator of a unary or binary expression (`""` if none).
    fn operator(&self, n: Node<'t>) -> &'s str {
        n.child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or("")
    }

    /// A folded constant, or the error of an undefined one at `n`.
    fn defined(folded: Folded, n: Node<'t>) -> R<(Value, IntType)> {
        folded.map_err(|why| {
            CudaError::new(
                span_of(n),
                format!("this constant expression is undefined: {why}"),
            )
        })
    }

    fn sizeof(&self, n: Node<'t>) -> R<Value> {
        if let Some(t) = n.child_by_field_name("type") {
            let mut ty = Ty::int();
            let inner = t.child_by_field_name("type").unwrap_or(t);
            self.base_type(inner, &mut ty)?;
            if t.child_by_field_name("declarator").is_some() {
                return Ok(8);
            }
            return Ok(ty.size);
        }
        // `sizeof(S)` for a struct `S` parses as the size of an expression.
        if let Some(v) = n.child_by_field_name("value") {
            let mut v = v;
            while v.kind() == "parenthesized_expression" {
                v = only_child(v)?;
            }
            if let Some(&sid) = self.struct_by_name.get(self.text(v)) {
                return Ok(self.structs[sid].size);
            }
            // `sizeof(std::atomic<int>)` parses as a template expression.
            if matches!(v.kind(), "qualified_identifier" | "template_function") {
                let text: String = self.text(v).split_whitespace().collect();
                let mut ty = Ty::int();
                if self.atomic_type(v, &text, &mut ty).is_ok() {
                    return Ok(ty.size);
                }
            }
        }
        err(
            n,
            "not supported: `sizeof` of an expression; write `sizeof(int)`",
        )
    }

    fn finish(self) -> Result<(Program, Vec<Warning>, Vec<crate::KernelLaunch>), CudaError> {
        // One conjunct per asserting thread; a long chain is a balanced tree (Prop::chain).
        let atoms = self
            .asserts
            .iter()
            .map(|(o, _)| Prop::Cmp(Term::Observable(*o), CmpOp::Ne, Term::Const(0)))
            .collect();
        let prop = Prop::chain(atoms, true);
        let extra: Vec<Observable> = self
            .arrays
            .iter()
            .filter(|a| a.harness)
            .flat_map(|a| a.elems.iter().map(|l| Observable::Loc(*l)))
            .collect();
        // Every array of more than one location is an allocation of consecutive locations.
        let arrays = self
            .arrays
            .iter()
            .filter(|a| a.elems.len() > 1)
            .map(|a| scopecheck_ir::Array {
                name: a.name.clone(),
                first: a.elems[0],
                len: a.elems.len() as u32,
            })
            .collect();
        let program = Program {
            arch: if self.opencl { Arch::OpenCl } else { Arch::C },
            name: "scopecheck_main".into(),
            description: None,
            locations: self.locations,
            arrays,
            threads: self.threads,
            condition: Condition {
                quantifier: Quantifier::Forall,
                prop: prop.unwrap_or(Prop::True),
                span: self.asserts.first().map(|(_, s)| *s),
            },
            extra_observables: extra,
        };
        Ok((program, self.warnings, self.launches))
    }
}

fn field<'t>(n: Node<'t>, name: &str) -> R<Node<'t>> {
    n.child_by_field_name(name)
        .ok_or_else(|| CudaError::new(span_of(n), format!("internal: no `{name}` here")))
}

fn only_child(n: Node) -> R<Node> {
    let mut c = n.walk();
    let k = n.named_children(&mut c).find(|k| k.kind() != "comment");
    k.ok_or_else(|| CudaError::new(span_of(n), "empty parentheses"))
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
    registers: Vec<String>,
    /// The type of each register (a register always holds a value canonical in it).
    reg_types: Vec<IntType>,
    init_regs: Vec<(RegId, Value)>,
    code: Vec<Instr>,
    scopes: Vec<Vec<(String, Binding)>>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, usize)>,
    loops: Vec<(usize, usize)>,
    /// Inlined calls: (end label, result register).
    frames: Vec<(usize, Option<RegId>)>,
    end_label: usize,
    temps: u32,
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
            registers: Vec::new(),
            reg_types: Vec::new(),
            init_regs: Vec::new(),
            code: Vec::new(),
            scopes: vec![constants],
            labels: vec![None],
            fixups: Vec::new(),
            loops: Vec::new(),
            frames: Vec::new(),
            end_label: 0,
            temps: 0,
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
        k.scopes = vec![scope];
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
        self.resolve();
        let id = ThreadId(self.cx.threads.len() as u32);
        for (r, span) in std::mem::take(&mut self.asserts) {
            self.cx.asserts.push((Observable::Reg(id, r), span));
        }
        let thread = Thread {
            name,
            placement,
            span: Some(span),
            registers: std::mem::take(&mut self.registers),
            init_regs: std::mem::take(&mut self.init_regs),
            code: std::mem::take(&mut self.code),
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

    // ---- names, registers, labels, emission ----

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, b)| *b))
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.push((name.to_string(), b));
        }
    }

    /// Replaces the innermost binding of `name` (a pointer being allocated, a stream created).
    fn rebind(&mut self, name: &str, b: Binding) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(e) = s.iter_mut().rev().find(|(n, _)| n == name) {
                e.1 = b;
                return;
            }
        }
    }

    fn new_reg(&mut self, name: &str, ty: IntType) -> RegId {
        let mut n = name.to_string();
        let mut k = 2;
        while self.registers.contains(&n) {
            n = format!("{name}#{k}");
            k += 1;
        }
        self.registers.push(n);
        self.reg_types.push(ty);
        RegId((self.registers.len() - 1) as u32)
    }

    fn temp(&mut self, ty: IntType) -> RegId {
        let n = format!("$t{}", self.temps);
        self.temps += 1;
        self.registers.push(n);
        self.reg_types.push(ty);
        RegId((self.registers.len() - 1) as u32)
    }

    /// The register a result of type `ty` goes to: the hint when it has that type.
    fn dst_for(&mut self, hint: Option<RegId>, ty: IntType) -> RegId {
        match hint {
            Some(h) if self.reg_types[h.0 as usize] == ty => h,
            _ => self.temp(ty),
        }
    }

    fn reg_ty(&self, r: RegId) -> IntType {
        self.reg_types[r.0 as usize]
    }

    /// An operand with its type: a register's, or a constant's as C types a literal (`int`
    /// when it fits, else `long long`).
    fn typed(&self, o: Operand) -> Val {
        let ty = match o {
            Operand::Reg(r) => self.reg_ty(r),
            Operand::Imm(v) if IntType::S32.holds(i128::from(v)) => IntType::S32,
            Operand::Imm(_) => IntType::S64,
        };
        Val { op: o, ty }
    }

    fn new_label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    fn set_label(&mut self, label: usize) {
        let here = self.code.len();
        if let Some(l) = self.labels.get_mut(label) {
            *l = Some(here);
        }
    }

    fn emit(&mut self, kind: InstrKind, n: Node<'t>) {
        let span = span_of(n);
        let text = self
            .text(n)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        self.code.push(Instr { kind, span, text });
    }

    fn branch(&mut self, cond: BranchCond, label: usize, n: Node<'t>) {
        self.fixups.push((self.code.len(), label));
        self.emit(InstrKind::Branch { cond, target: 0 }, n);
    }

    /// Resolves branch targets; the code is then complete.
    fn resolve(&mut self) {
        let end = self.end_label;
        self.set_label(end);
        for &(instr, label) in &self.fixups {
            let target = self.labels.get(label).copied().flatten().unwrap_or(0);
            if let Some(Instr {
                kind: InstrKind::Branch { target: t, .. },
                ..
            }) = self.code.get_mut(instr)
            {
                *t = target;
            }
        }
        self.fixups.clear();
    }

    /// The instruction `dst = v`, converted to `ty` (the type of `dst`) as C converts on
    /// assignment: wrapping to the width (conversion to a signed type is two's complement in
    /// CUDA and OpenCL C), emitted as `v | 0` computed in `ty`.
    fn conversion(&self, dst: RegId, v: Operand, ty: IntType) -> InstrKind {
        self.conversion_of(dst, self.typed(v), ty)
    }

    /// [`Self::conversion`] of a value of known type: between integers and floats, and
    /// between float widths, a [`BinOp::Cvt`] (a constant folded when defined).
    fn conversion_of(&self, dst: RegId, v: Val, ty: IntType) -> InstrKind {
        let float = v.ty.float || ty.float;
        if float && v.ty != ty {
            let op = cvt_c(v.ty, ty);
            if let Operand::Imm(x) = v.op {
                if let Ok(c) = op.eval(ty, Arithmetic::C, x, 0) {
                    return InstrKind::Mov {
                        dst,
                        src: Operand::Imm(c),
                    };
                }
            }
            return InstrKind::Binary {
                dst,
                op,
                ty,
                a: v.op,
                b: Operand::Imm(0),
            };
        }
        match v.op {
            Operand::Imm(x) => InstrKind::Mov {
                dst,
                src: Operand::Imm(ty.wrap(x)),
            },
            Operand::Reg(r) if self.reg_ty(r) == ty => InstrKind::Mov { dst, src: v.op },
            Operand::Reg(_) => InstrKind::Binary {
                dst,
                op: BinOp::Or,
                ty,
                a: v.op,
                b: Operand::Imm(0),
            },
        }
    }

    /// `dst = v`, converted to `dst`'s type from `v`'s.
    fn mov_val(&mut self, dst: RegId, v: Val, n: Node<'t>) {
        if v.op != Operand::Reg(dst) {
            let kind = self.conversion_of(dst, v, self.reg_ty(dst));
            self.emit(kind, n);
        }
    }

    /// The value of `e` as an operand of type `ty`: converted where a float is involved (an
    /// integer constant to a float's bits, ...); other values as [`Self::value`] gives them,
    /// their consumer wrapping them to `ty`.
    fn value_as(&mut self, e: Node<'t>, ty: IntType, hint: Option<RegId>) -> R<Operand> {
        let v = self.val(e, hint)?;
        Ok(self.float_conv(v, ty, hint, e).op)
    }

    /// `v` converted to `ty` where a float is involved; unchanged otherwise.
    fn float_conv(&mut self, v: Val, ty: IntType, hint: Option<RegId>, n: Node<'t>) -> Val {
        if v.ty.float || ty.float {
            self.convert(v, ty, hint, n)
        } else {
            v
        }
    }

    /// `dst = v`, converted to `dst`'s type.
    fn mov(&mut self, dst: RegId, v: Operand, n: Node<'t>) {
        if v != Operand::Reg(dst) {
            let kind = self.conversion(dst, v, self.reg_ty(dst));
            self.emit(kind, n);
        }
    }

    /// `v` converted to `ty` (a cast, a parameter, a value stored).
    fn convert(&mut self, v: Val, ty: IntType, hint: Option<RegId>, n: Node<'t>) -> Val {
        let float = (v.ty.float || ty.float) && v.ty != ty;
        match v.op {
            Operand::Imm(x) if float => match cvt_c(v.ty, ty).eval(ty, Arithmetic::C, x, 0) {
                Ok(c) => Val::imm(c, ty),
                // No defined value (a NaN to an integer): converted when it runs, which
                // faults at its line.
                Err(_) => {
                    let dst = self.dst_for(hint, ty);
                    let kind = self.conversion_of(dst, v, ty);
                    self.emit(kind, n);
                    Val {
                        op: Operand::Reg(dst),
                        ty,
                    }
                }
            },
            Operand::Imm(x) => Val::imm(x, ty),
            _ if v.ty == ty => v,
            Operand::Reg(_) => {
                let dst = self.dst_for(hint, ty);
                let kind = self.conversion_of(dst, v, ty);
                self.emit(kind, n);
                Val {
                    op: Operand::Reg(dst),
                    ty,
                }
            }
        }
    }

    /// `a op b` in C's types: both operands are promoted to at least `int` and converted to
    /// their common type (a shift has the promoted type of its left operand); a comparison
    /// gives an `int`. Constants fold; a constant operation with no defined value (a division
    /// by zero in one thread, say) is emitted as it is, so that it faults at its line when it
    /// runs, with a warning.
    fn binary(&mut self, op: BinOp, a: Val, b: Val, hint: Option<RegId>, n: Node<'t>) -> Val {
        let (ty, result) = op_types(op, a.ty, b.ty);
        // Floats compute on values of the common type: an integer operand is converted
        // (integers wrap to it in the operation itself).
        let (a, b) = if ty.float {
            (self.convert(a, ty, None, n), self.convert(b, ty, None, n))
        } else {
            (a, b)
        };
        if let (Operand::Imm(x), Operand::Imm(y)) = (a.op, b.op) {
            match op.eval(ty, Arithmetic::C, x, y) {
                Ok(v) => return Val::imm(v, result),
                Err(why) => {
                    let message = format!(
                        "this expression has no defined value here ({why}): it faults when it runs"
                    );
                    // A folded condition may be lowered twice; say it once.
                    let said = self
                        .cx
                        .warnings
                        .last()
                        .is_some_and(|w| w.span == span_of(n) && w.message == message);
                    if !said {
                        self.cx.warn(n, message);
                    }
                }
            }
        }
        let dst = self.dst_for(hint, result);
        self.emit(
            InstrKind::Binary {
                dst,
                op,
                ty,
                a: a.op,
                b: b.op,
            },
            n,
        );
        Val {
            op: Operand::Reg(dst),
            ty: result,
        }
    }

    /// The scope of an operation: host threads always operate at system scope.
    fn scope(&mut self, scope: Scope, explicit: Option<Node>) -> Scope {
        if self.host() {
            if let Some(n) = explicit {
                if scope != Scope::Sys {
                    self.cx.warn(
                        n,
                        format!(
                            "a host thread operates at system scope; scope {scope} treated as sys"
                        ),
                    );
                }
            }
            return Scope::Sys;
        }
        scope
    }

    fn device_only(&self, name: &str, n: Node<'t>) -> R<()> {
        if self.host() {
            return err(
                n,
                format!("`{name}` is a device function; host code cannot call it"),
            );
        }
        Ok(())
    }

    // ---- memory ----

    /// The IR address of a pointer, with the checks of its memory space, and the access type.
    fn address(&mut self, p: Ptr, n: Node<'t>) -> R<(Address, IntType)> {
        if let Some(sid) = p.strukt {
            return err(
                n,
                format!(
                    "not supported: a whole `struct {}` as a value; access its fields (`s.f`, `p->f`)",
                    self.cx.structs[sid].name
                ),
            );
        }
        let arr = &self.cx.arrays[p.arr];
        let Some(loc) = usize::try_from(p.idx).ok().and_then(|i| arr.elems.get(i)) else {
            return err(
                n,
                format!(
                    "index {} is outside `{}` ({} element{})",
                    p.idx,
                    arr.name,
                    arr.elems.len(),
                    if arr.elems.len() == 1 { "" } else { "s" }
                ),
            );
        };
        if self.host() && arr.space == MemorySpace::Global {
            return err(
                n,
                format!("host code cannot dereference device memory (`{}`): allocate it with cudaMallocManaged or cudaHostAlloc(..., cudaHostAllocMapped)", arr.name),
            );
        }
        if self.host() && arr.space == MemorySpace::Shared {
            return err(n, "host code cannot touch `__shared__` memory");
        }
        let held = self.cx.locations[loc.0 as usize].ty;
        if held.bits != p.ty.bits {
            return err(
                n,
                format!(
                    "not supported: a {}-bit access (`{}`) to `{}`, which holds a {held} (mixed-size accesses)",
                    p.ty.bits, p.ty, arr.name
                ),
            );
        }
        Ok((
            Address::Loc {
                loc: *loc,
                index: p.index,
            },
            p.ty,
        ))
    }

    /// Narrows an atomic scope wider than the block on shared memory (as the C dialect does).
    fn space_scope(&mut self, addr: Address, order: Order, scope: Scope, n: Node<'t>) -> Scope {
        let shared = addr
            .named_loc()
            .is_some_and(|l| self.cx.locations[l.0 as usize].space == MemorySpace::Shared);
        if order.is_atomic() && scope > Scope::Cta && shared {
            self.cx.warn(
                n,
                format!("an atomic on __shared__ memory is only meaningful within its block: scope {scope} treated as cta"),
            );
            return Scope::Cta;
        }
        scope
    }

    fn plain_order(&mut self, p: Ptr) -> (Order, Scope) {
        match p.access {
            Access::Plain => (Order::Weak, Scope::Sys),
            Access::Volatile => (Order::Volatile, Scope::Sys),
            Access::Atomic(s) => (Order::SeqCst, self.scope(s, None)),
        }
    }

    fn load_ord(
        &mut self,
        (addr, ty): (Address, IntType),
        order: Order,
        scope: Scope,
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Operand {
        let scope = self.space_scope(addr, order, scope, n);
        let dst = self.dst_for(hint, ty);
        self.emit(
            InstrKind::Load {
                dst,
                addr,
                ty,
                order,
                scope,
            },
            n,
        );
        Operand::Reg(dst)
    }

    /// A store; a constant is stored converted to the access type.
    fn store_ord(
        &mut self,
        (addr, ty): (Address, IntType),
        value: Operand,
        order: Order,
        scope: Scope,
        n: Node<'t>,
    ) {
        let scope = self.space_scope(addr, order, scope, n);
        let value = match value {
            Operand::Imm(v) => Operand::Imm(ty.wrap(v)),
            v => v,
        };
        self.emit(
            InstrKind::Store {
                addr,
                value,
                ty,
                order,
                scope,
            },
            n,
        );
    }

    fn load(&mut self, p: Ptr, hint: Option<RegId>, n: Node<'t>) -> R<Operand> {
        let at = self.address(p, n)?;
        let (o, s) = self.plain_order(p);
        Ok(self.load_ord(at, o, s, hint, n))
    }

    fn store(&mut self, p: Ptr, v: Operand, n: Node<'t>) -> R<()> {
        let at = self.address(p, n)?;
        let (o, s) = self.plain_order(p);
        self.store_ord(at, v, o, s, n);
        Ok(())
    }

    /// An RMW of the access type: it computes in that type and wraps (atomics never overflow
    /// into undefined behaviour); it returns the old value.
    fn rmw(
        &mut self,
        (addr, ty): (Address, IntType),
        kind: RmwKind,
        order: Order,
        scope: Scope,
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Operand {
        let scope = self.space_scope(addr, order, scope, n);
        let dst = self.dst_for(hint, ty);
        self.emit(
            InstrKind::Rmw {
                dst: Some(dst),
                addr,
                kind,
                ty,
                order,
                scope,
            },
            n,
        );
        Operand::Reg(dst)
    }

    /// A compare-and-swap into a temporary, the result `old == expected` (a `bool`, as `int`),
    /// then `expected = old`: C++ `compare_exchange_*` and OpenCL `atomic_compare_exchange_*`.
    #[allow(clippy::too_many_arguments)]
    fn compare_exchange(
        &mut self,
        (addr, ty): (Address, IntType),
        expected: RegId,
        new: Operand,
        order: Order,
        scope: Scope,
        hint: Option<RegId>,
        n: Node<'t>,
    ) -> Operand {
        let scope = self.space_scope(addr, order, scope, n);
        let old = self.temp(ty);
        self.emit(
            InstrKind::Rmw {
                dst: Some(old),
                addr,
                kind: RmwKind::Cas {
                    expected: Operand::Reg(expected),
                    new,
                },
                ty,
                order,
                scope,
            },
            n,
        );
        // The comparison is the CAS's, in the object's type.
        let ok = self.dst_for(hint.filter(|h| *h != expected), IntType::S32);
        self.emit(
            InstrKind::Binary {
                dst: ok,
                op: BinOp::Eq,
                ty,
                a: Operand::Reg(old),
                b: Operand::Reg(expected),
            },
            n,
        );
        self.mov(expected, Operand::Reg(old), n);
        Operand::Reg(ok)
    }

    /// The shared-memory array of declaration `d` for this thread's block.
    fn shared_array(&mut self, d: usize, n: Node<'t>) -> R<usize> {
        let Some(cta) = self.cta else {
            return err(n, "host code cannot touch `__shared__` memory");
        };
        if let Some(a) = self.cx.shared_copies.get(&(d, cta)) {
            return Ok(*a);
        }
        let (name, len, span) = {
            let s = &self.cx.shared_decls[d];
            (format!("{}@b{cta}", s.name), s.len, span_of(s.node))
        };
        let ty = self.cx.shared_decls[d].ty;
        let a = self.cx.new_array(
            &name,
            len,
            ty.strukt,
            ty.int,
            MemorySpace::Shared,
            &[],
            Some(span),
            false,
        )?;
        self.cx.shared_copies.insert((d, cta), a);
        Ok(a)
    }

    /// The start of this block's copy of shared declaration `d`, with its length.
    fn shared_ptr(&mut self, d: usize, n: Node<'t>) -> R<(Ptr, usize)> {
        let arr = self.shared_array(d, n)?;
        let ty = self.cx.shared_decls[d].ty;
        let len = self.cx.shared_decls[d].len;
        Ok((Ptr::start_of(arr, ty), len))
    }

    /// What a bare name denotes when it is a memory object: a global, a shared variable, an
    /// atomic object or reference.
    fn object(&mut self, name: &str, n: Node<'t>) -> R<Option<(Ptr, usize)>> {
        match self.lookup(name) {
            Some(Binding::Obj(p)) => return Ok(Some((p, 1))),
            Some(Binding::Shared(d)) => return self.shared_ptr(d, n).map(Some),
            Some(_) => return Ok(None),
            None => {}
        }
        if let Some((arr, ty)) = self.cx.globals.get(name).copied() {
            let len = self.cx.arrays[arr].elems.len() / self.stride(ty.strukt) as usize;
            return Ok(Some((Ptr::start_of(arr, ty), len)));
        }
        if let Some(d) = self.cx.shared_by_name.get(name).copied() {
            return self.shared_ptr(d, n).map(Some);
        }
        Ok(None)
    }

    pub(super) fn unknown<T>(&self, name: &str, n: Node<'t>) -> R<T> {
        if let Some((_, why)) = self.cx.opaque_globals.iter().find(|(g, _)| g == name) {
            return err(
                n,
                format!(
                    "the harness uses `{name}`, whose declaration (line {}) this front-end cannot read: {}",
                    why.span.line, why.message
                ),
            );
        }
        err(n, format!("unknown name `{name}`"))
    }

    /// The pointer the variable `name` holds (an identifier, or `p.f` of a struct held by
    /// value), or the array it names.
    fn pointer_named(&mut self, name: &str, e: Node<'t>) -> R<Ptr> {
        match self.lookup(name) {
                Some(Binding::Ptr(p) | Binding::HostArr(p)) => return Ok(p),
                Some(Binding::SharedPtr(d)) => return Ok(self.shared_ptr(d, e)?.0),
                Some(Binding::PtrUnset(..)) => {
                    return err(e, format!("`{name}` is used before it is allocated (cudaMalloc / cudaMallocManaged / cudaHostAlloc)"))
                }
                _ => {}
            }
        match self.object(name, e)? {
            Some((p, len)) if len > 1 => Ok(p),
            Some(_) => err(
                e,
                format!("`{name}` is an object, not a pointer: write `&{name}`"),
            ),
            None if self.lookup(name).is_some() => {
                err(e, format!("`{name}` is a value, not a pointer to memory"))
            }
            None => self.unknown(name, e),
        }
    }

    /// The pointer an expression denotes (`p`, `&x`, `&a[i]`, `a` for an array, `p + i`).
    fn pointer(&mut self, e: Node<'t>) -> R<Ptr> {
        match e.kind() {
            // A name the most vexing parse read as a type (`atomic_ref<...> r(p[i])`).
            "identifier" | "type_identifier" => self.pointer_named(self.text(e), e),
            "field_expression" if self.flat_field(e).is_some() => {
                let key = self.flat_field(e).unwrap_or_default();
                self.pointer_named(&key, e)
            }
            "pointer_expression" if self.op(e) == "&" => {
                let a = field(e, "argument")?;
                self.place(a)?.ok_or_else(|| {
                    CudaError::new(span_of(e), "not supported: the address of a local variable")
                })
            }
            "parenthesized_expression" => self.pointer(only_child(e)?),
            "cast_expression" => self.pointer(field(e, "value")?),
            // `p + i - j ...` by a loop, left to right.
            "binary_expression" if matches!(self.op(e), "+" | "-") => {
                let mut steps = vec![e];
                let mut base = field(e, "left")?;
                while base.kind() == "binary_expression" && matches!(self.op(base), "+" | "-") {
                    steps.push(base);
                    base = field(base, "left")?;
                }
                let mut p = self.pointer(base)?;
                for s in steps.into_iter().rev() {
                    let minus = self.op(s) == "-";
                    p = self.offset(p, field(s, "right")?, minus, s)?;
                }
                Ok(p)
            }
            _ => err(
                e,
                format!("expected a pointer to memory, found `{}`", self.text(e)),
            ),
        }
    }

    /// `p + i` (or `p - i`, or `p[i]`): a constant `i` moves the element known at compile time;
    /// one known only at run time goes into the address's index register (in locations: a
    /// struct element spans one per field), which the explorer bounds-checks.
    fn offset(&mut self, p: Ptr, i: Node<'t>, minus: bool, e: Node<'t>) -> R<Ptr> {
        let stride = self.stride(p.strukt);
        let v = self.val(i, None)?;
        let r = match v.op {
            Operand::Imm(k) => {
                // A constant index counts in its own type (an `unsigned` -1 is 2^32 - 1).
                let k = i64::try_from(v.ty.exact(k)).map_err(|_| {
                    CudaError::new(
                        span_of(i),
                        format!("index {} is out of range", v.ty.display(k)),
                    )
                })?;
                let k = if minus { k.checked_neg() } else { Some(k) };
                let idx = k
                    .and_then(|k| k.checked_mul(stride))
                    .and_then(|k| k.checked_add(p.idx))
                    .ok_or_else(|| CudaError::new(span_of(i), "index out of range"))?;
                return Ok(Ptr { idx, ..p });
            }
            Operand::Reg(r) => r,
        };
        // The index in locations, computed in `long long` (it cannot overflow for any index
        // that stays in bounds).
        let s64 = |op| Val {
            op,
            ty: IntType::S64,
        };
        let mut off = Val {
            op: Operand::Reg(r),
            ty: v.ty,
        };
        if minus {
            off = self.binary(BinOp::Sub, s64(Operand::Imm(0)), off, None, e);
        }
        if stride != 1 {
            off = self.binary(BinOp::Mul, off, s64(Operand::Imm(stride)), None, e);
        }
        if let Some(prev) = p.index {
            let prev = Val {
                op: Operand::Reg(prev),
                ty: self.reg_ty(prev),
            };
            off = self.binary(BinOp::Add, prev, off, None, e);
        }
        let Operand::Reg(index) = off.op else {
            return err(e, "internal: an index register folded");
        };
        Ok(Ptr {
            index: Some(index),
            ..p
        })
    }

    /// A pointer that names its element at compile time (one the harness passes to a kernel,
    /// or keeps in a host variable across threads).
    fn fixed_pointer(&mut self, e: Node<'t>) -> R<Ptr> {
        let p = self.pointer(e)?;
        if p.index.is_some() {
            return err(
                e,
                "not supported: a pointer computed at run time here (the harness's pointers must name their element at compile time)",
            );
        }
        Ok(p)
    }

    /// A pointer kept in a variable: an index register is copied, so that later assignments
    /// to the variable it came from do not move the pointer.
    fn keep_pointer(&mut self, p: Ptr, n: Node<'t>) -> R<Ptr> {
        let Some(r) = p.index else {
            return Ok(p);
        };
        if self.host() {
            return err(
                n,
                "not supported: a pointer computed at run time in scopecheck_main (index the memory where it is accessed)",
            );
        }
        let t = self.temp(self.reg_ty(r));
        self.emit(
            InstrKind::Mov {
                dst: t,
                src: Operand::Reg(r),
            },
            n,
        );
        Ok(Ptr {
            index: Some(t),
            ..p
        })
    }

    /// An index or offset that must be known when lowering (thread indices fold).
    fn const_operand(&mut self, e: Node<'t>) -> R<Value> {
        match self.value(e, None)? {
            Operand::Imm(v) => Ok(v),
            Operand::Reg(_) => err(
                e,
                "not supported: a value computed at run time here (it must fold to a constant: literals, threadIdx, blockIdx, blockDim, gridDim, constant arithmetic)",
            ),
        }
    }

    /// The memory place an lvalue denotes, `None` when it is not memory.
    fn place(&mut self, e: Node<'t>) -> R<Option<Ptr>> {
        match e.kind() {
            // A name read as a type by the most vexing parse (`atomic_ref<int, S> h(x)`).
            "identifier" | "type_identifier" => Ok(self.object(self.text(e), e)?.map(|(p, _)| p)),
            "pointer_expression" if self.op(e) == "*" => {
                Ok(Some(self.pointer(field(e, "argument")?)?))
            }
            "subscript_expression" => {
                let p = self.pointer(field(e, "argument")?)?;
                let idx = field(e, "indices")?;
                let mut c = idx.walk();
                let items: Vec<Node> = idx.named_children(&mut c).collect();
                let [i] = items.as_slice() else {
                    return err(idx, "expected one index");
                };
                self.offset(p, *i, false, e).map(Some)
            }
            "parenthesized_expression" => self.place(only_child(e)?),
            "field_expression" => {
                let arg = field(e, "argument")?;
                let fnode = field(e, "field")?;
                let base = if self.op(e) == "->" {
                    Some(self.pointer(arg)?)
                } else {
                    self.place(arg)?
                };
                match base {
                    Some(b) => self.member_of(b, fnode, e).map(Some),
                    None => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }

    /// A pointer seen through a declared pointer type: its access and value type, and the
    /// same struct type.
    fn retype(&self, p: Ptr, t: PtrTy, n: Node<'t>) -> R<Ptr> {
        let (access, strukt, ty) = t;
        if p.strukt != strukt {
            let name = |s: Option<usize>| {
                s.map_or("a scalar".to_string(), |sid| {
                    format!("`struct {}`", self.cx.structs[sid].name)
                })
            };
            return err(
                n,
                format!(
                    "not supported: a pointer to {} used as a pointer to {}",
                    name(p.strukt),
                    name(strukt)
                ),
            );
        }
        if strukt.is_none() && p.ty.bits != ty.bits {
            return err(
                n,
                format!(
                    "not supported: a pointer to `{}` used as a pointer to `{ty}` (mixed-size accesses)",
                    p.ty
                ),
            );
        }
        Ok(Ptr { access, ty, ..p })
    }

    /// Locations per element: the number of fields of a struct, 1 for a scalar.
    fn stride(&self, strukt: Option<usize>) -> i64 {
        strukt.map_or(1, |sid| self.cx.structs[sid].fields.len() as i64)
    }

    /// The field `f` of the struct `base` points at (`s.f`, `p->f`).
    fn member_of(&self, base: Ptr, f: Node<'t>, e: Node<'t>) -> R<Ptr> {
        let fname = self.text(f);
        let Some(sid) = base.strukt else {
            return err(
                e,
                format!("not supported: the member `{fname}` of something that is not a struct"),
            );
        };
        let def = &self.cx.structs[sid];
        let Some(k) = def.fields.iter().position(|(n, _)| n == fname) else {
            return err(f, format!("`struct {}` has no field `{fname}`", def.name));
        };
        let fty = def.fields[k].1;
        // A field of a volatile struct is volatile.
        let access = match (fty.access, base.access) {
            (Access::Plain, Access::Volatile) => Access::Volatile,
            (a, _) => a,
        };
        Ok(Ptr {
            arr: base.arr,
            idx: base.idx + k as i64,
            index: base.index,
            access,
            strukt: None,
            ty: fty.int,
        })
    }

    fn op(&self, e: Node<'t>) -> &'s str {
        e.child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or("")
    }

    // ---- statements ----

    fn stmt(&mut self, s: Node<'t>) -> R<()> {
        match s.kind() {
            "comment" => Ok(()),
            "compound_statement" => self.block(s),
            "expression_statement" => {
                if let Some(e) = s.named_child(0) {
                    if e.kind() != "comment" && !self.misparsed_tile_decl(e)? {
                        self.value(e, None)?;
                    }
                }
                Ok(())
            }
            "declaration" => self.decl(s),
            "if_statement" => self.nested(|me| me.if_stmt(s)),
            "while_statement" => self.nested(|me| {
                let c = condition(s)?;
                me.loop_(Some(c), None, field(s, "body")?, s)
            }),
            "for_statement" => self.nested(|me| me.for_stmt(s)),
            // `do { ... } while (0)`, the body of a function-like macro (`CUDA_CHECK(call)`):
            // runs once, so it is no loop and may hold what the top of the harness may.
            "do_statement" if self.runs_once(s) => {
                let end = self.new_label();
                self.loops.push((end, end));
                let r = self.scoped(field(s, "body")?);
                self.loops.pop();
                r?;
                self.set_label(end);
                Ok(())
            }
            "do_statement" => self.nested(|me| me.do_stmt(s)),
            "break_statement" | "continue_statement" => {
                let Some(&(cont, end)) = self.loops.last() else {
                    return err(s, "`break` / `continue` outside a loop");
                };
                let l = if s.kind() == "break_statement" {
                    end
                } else {
                    cont
                };
                self.branch(BranchCond::Always, l, s);
                Ok(())
            }
            "return_statement" => {
                let value = s.named_child(0).filter(|v| v.kind() != "comment");
                match self.frames.last().copied() {
                    Some((end, ret)) => {
                        if let Some(v) = value {
                            let Some(r) = ret else {
                                return err(v, "a `void` function returns no value");
                            };
                            let ty = self.reg_ty(r);
                            let v = self.value_as(v, ty, Some(r))?;
                            self.mov(r, v, s);
                        }
                        self.branch(BranchCond::Always, end, s);
                    }
                    None => {
                        if self.host() {
                            return self.harness_return(s, value);
                        }
                        if value.is_some() {
                            return err(s, "a kernel returns no value");
                        }
                        let l = self.end_label;
                        self.branch(BranchCond::Always, l, s);
                    }
                }
                Ok(())
            }
            k => err(
                s,
                format!("not supported: `{}` ({k})", first_line(self.text(s))),
            ),
        }
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        r
    }

    fn block(&mut self, b: Node<'t>) -> R<()> {
        self.scopes.push(Vec::new());
        let mut c = b.walk();
        let kids: Vec<Node> = b.named_children(&mut c).collect();
        let mut r = Ok(());
        for s in kids {
            r = self.stmt(s);
            // After a `break`, `continue` or `return` that always runs (an `if` whose condition
            // folds), the rest of the block never runs: it is not lowered, so that what it
            // would compute there (an index past an array) is no error.
            if r.is_err() || self.falls_off() {
                break;
            }
        }
        self.scopes.pop();
        r
    }

    /// Whether the code so far ends in a jump that nothing jumps past: what follows in the
    /// current block is unreachable (structured code has no jump into a block's middle).
    fn falls_off(&self) -> bool {
        matches!(
            self.code.last().map(|i| &i.kind),
            Some(InstrKind::Branch {
                cond: BranchCond::Always,
                ..
            })
        ) && !self.labels.contains(&Some(self.code.len()))
    }

    fn decl(&mut self, d: Node<'t>) -> R<()> {
        let mut c = d.walk();
        let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
        for decl in decls {
            if self.group_decl(d, decl)?
                || self.arg_list_decl(d, decl)?
                || self.thread_decl(d, decl)?
            {
                continue;
            }
            let ty = self.cx.ty(d, Some(decl))?;
            // `cuda::atomic_ref<int, S> h(x);` parses as a function declaration (C++'s most
            // vexing parse): in a body it constructs `h` from `x`.
            let vexing = (ty.atomic_ref && decl.kind() == "function_declarator")
                .then(|| {
                    decl.child_by_field_name("declarator")
                        .zip(decl.child_by_field_name("parameters"))
                })
                .flatten();
            let (name_node, len, init) = match vexing {
                Some((n, args)) if n.kind() == "identifier" => (n, 1, Some(args)),
                _ if ty.shared && is_dynamic_array(self.text(d), decl) => {
                    let name = field(decl, "declarator")?;
                    (name, self.dynamic_shared_len(&ty, decl)?, None)
                }
                _ => self.cx.declarator_shape(decl)?,
            };
            let name = self.text(name_node).to_string();
            if self
                .scopes
                .last()
                .is_some_and(|sc| sc.iter().any(|(n, _)| *n == name))
            {
                return err(
                    name_node,
                    format!("`{name}` is already declared in this block"),
                );
            }
            if ty.shared {
                if self.host() {
                    return err(d, "`__shared__` variables belong in kernels");
                }
                self.cx.not_in_memory(ty.strukt, decl)?;
                if init.is_some() {
                    return err(decl, "a `__shared__` variable cannot have an initialiser");
                }
                // One declaration per source declaration (and size: a dynamic array is as long
                // as its launch says), shared by every thread.
                let idx = match self
                    .cx
                    .shared_decls
                    .iter()
                    .position(|s| s.node.id() == name_node.id() && s.len == len)
                {
                    Some(i) => i,
                    None => {
                        self.cx.shared_decls.push(SharedDecl {
                            name: name.clone(),
                            len,
                            ty,
                            node: name_node,
                        });
                        self.cx.shared_decls.len() - 1
                    }
                };
                self.bind(&name, Binding::Shared(idx));
                continue;
            }
            if (len > 1 || has_array(decl)) && self.host() && host_array_type(&ty) {
                // A host array: locations of ordinary host memory, which only the host touches.
                let values = match init {
                    Some(i) if i.kind() == "initializer_list" => {
                        self.cx.const_init(i, len, &[ty.int])?
                    }
                    Some(i) => return err(i, "expected `{ constants }` to initialise an array"),
                    None => Vec::new(),
                };
                let arr = self.cx.new_array(
                    &name,
                    len,
                    None,
                    ty.int,
                    MemorySpace::HostPageable,
                    &values,
                    Some(span_of(name_node)),
                    false,
                )?;
                self.bind(&name, Binding::HostArr(Ptr::start_of(arr, ty)));
                continue;
            }
            if len > 1 || has_array(decl) {
                return err(
                    decl,
                    "not supported: local arrays (use a `__shared__` array or an allocation)",
                );
            }
            if let (Some(sid), false) = (ty.strukt, ty.pointer) {
                self.val_struct_decl(&name, sid, init)?;
                continue;
            }
            if self.host() && !ty.pointer && self.memory_locals.contains(&name) {
                self.memory_local(&name, name_node, &ty, init, decl)?;
                continue;
            }
            if ty.stream {
                let b = match init {
                    Some(_) => self.cl_create_queue(init, decl)?,
                    None => Binding::Stream(None),
                };
                self.bind(&name, b);
                continue;
            }
            if ty.event {
                if !self.host() {
                    return err(decl, "a `cudaEvent_t` belongs in host code");
                }
                if let Some(i) = init {
                    return err(i, "create an event with cudaEventCreate(&e)");
                }
                self.bind(&name, Binding::Event(None));
                continue;
            }
            if ty.dim3 {
                let v = match init {
                    Some(i) => self.dim3_init(i)?,
                    None => [1, 1, 1],
                };
                self.bind(&name, Binding::Dim3(v));
                continue;
            }
            if ty.atomic_ref {
                let Some(i) = init else {
                    return err(
                        decl,
                        "an atomic reference must be bound: `cuda::atomic_ref<int, S> r(*p);`",
                    );
                };
                let target = match i.kind() {
                    "argument_list" | "initializer_list" | "parameter_list" => {
                        let mut c = i.walk();
                        let items: Vec<Node> = i.named_children(&mut c).collect();
                        let [t] = items.as_slice() else {
                            return err(i, "an atomic reference binds to one object");
                        };
                        // The most vexing parse: `(x)` read as a parameter of type `x`, and
                        // `(p[i])` as a parameter of type `p` declared an array of `i`.
                        match (t.kind(), t.child_by_field_name("type")) {
                            ("parameter_declaration", Some(ty))
                                if t.child_by_field_name("declarator").is_none() =>
                            {
                                ty
                            }
                            ("parameter_declaration", Some(base)) => {
                                let d = field(*t, "declarator")?;
                                let size = d.child_by_field_name("size").filter(|_| {
                                    d.kind() == "abstract_array_declarator"
                                        && d.child_by_field_name("declarator").is_none()
                                });
                                let Some(size) = size else {
                                    return err(*t, "an atomic reference binds to an object: write `*p`, `p[i]` or a global");
                                };
                                let p = self.pointer(base)?;
                                let p = self.offset(p, size, false, *t)?;
                                let p = self.retype(p, ty.ptr_ty(), *t)?;
                                let p = self.keep_pointer(p, *t)?;
                                self.bind(&name, Binding::Obj(p));
                                continue;
                            }
                            _ => *t,
                        }
                    }
                    _ => i,
                };
                let Some(p) = self.place(target)? else {
                    return err(
                        target,
                        "an atomic reference binds to an object: write `*p`, `p[i]` or a global",
                    );
                };
                let p = self.retype(p, ty.ptr_ty(), target)?;
                let p = self.keep_pointer(p, target)?;
                self.bind(&name, Binding::Obj(p));
                continue;
            }
            if ty.cl_kernel {
                let b = self.cl_create_kernel(init, decl)?;
                self.bind(&name, b);
                continue;
            }
            if ty.pointer && self.host() {
                if let Some(i) = init {
                    if let Some(p) = self.cl_alloc(&name, ty, i)? {
                        self.bind(&name, Binding::Ptr(p));
                        continue;
                    }
                }
            }
            if ty.pointer {
                let b = match init {
                    Some(i) => {
                        let p = self.pointer(i)?;
                        let p = self.retype(p, ty.ptr_ty(), i)?;
                        Binding::Ptr(self.keep_pointer(p, i)?)
                    }
                    None => Binding::PtrUnset(ty.access, ty.size, ty.strukt, ty.int),
                };
                self.bind(&name, b);
                continue;
            }
            if ty.access != Access::Plain {
                return err(
                    d,
                    "not supported: a volatile or atomic local variable (locals are registers)",
                );
            }
            // A host constant, or a local initialised with a constant (thread and block
            // indices fold) and never assigned afterwards, is that constant (converted to its
            // type), so it can index memory. (The value computed, when it is not constant, is
            // the initial value of the register.)
            let mut computed = None;
            if let Some(i) = init {
                // An OpenCL harness passes sizes by address (`&global`) without writing them.
                let by_address = !(self.host() && self.cx.opencl);
                let fold = (self.host() && ty.constant)
                    || (self.foldable(i) && !assigned_after(d, &name, self.cx.src, by_address));
                if fold && !matches!(i.kind(), "argument_list" | "initializer_list") {
                    let v = self.value_as(i, ty.int, None)?;
                    if let Operand::Imm(v) = v {
                        self.bind(&name, Binding::Const(ty.int.wrap(v), ty.int));
                        continue;
                    }
                    computed = Some(v);
                }
            }
            // Host code evaluates the initialiser first: a runtime call in it may end the
            // segment (`cudaError_t e = cudaDeviceSynchronize();`).
            let runtime_call = |i: &Node| {
                i.kind() == "call_expression"
                    && i.child_by_field_name("function")
                        .is_some_and(|f| f.kind() != "field_expression")
            };
            if let Some(i) = init.filter(|i| self.host() && computed.is_none() && runtime_call(i)) {
                computed = Some(self.value_as(i, ty.int, None)?);
            }
            let r = self.new_reg(&name, ty.int);
            match init {
                Some(i) if i.kind() == "argument_list" || i.kind() == "initializer_list" => {
                    return err(i, "not supported: this initialiser; write `int x = e;`");
                }
                Some(i) => {
                    let v = match computed {
                        Some(v) => v,
                        None => self.value_as(i, ty.int, Some(r))?,
                    };
                    self.mov(r, v, decl);
                }
                None => {}
            }
            let seg = self.seg;
            self.bind(&name, Binding::Reg(r, seg, ty.int));
        }
        Ok(())
    }

    fn dim3_init(&mut self, i: Node<'t>) -> R<[Value; 3]> {
        match i.kind() {
            "argument_list" | "initializer_list" => {
                let mut c = i.walk();
                let items: Vec<Node> = i.named_children(&mut c).collect();
                if items.is_empty() || items.len() > 3 {
                    return err(i, "dim3 takes one to three sizes");
                }
                let mut v = [1, 1, 1];
                for (k, it) in items.into_iter().enumerate() {
                    v[k] = self.const_operand(it)?;
                }
                Ok(v)
            }
            _ => self.dims_of(i),
        }
    }

    /// A launch size: an integer or a `dim3`.
    fn dims_of(&mut self, e: Node<'t>) -> R<[Value; 3]> {
        match e.kind() {
            "identifier" => {
                if let Some(Binding::Dim3(v)) = self.lookup(self.text(e)) {
                    return Ok(v);
                }
            }
            "call_expression" => {
                let f = field(e, "function")?;
                if self.text(f) == "dim3" {
                    return self.dim3_init(field(e, "arguments")?);
                }
            }
            _ => {}
        }
        Ok([self.const_operand(e)?, 1, 1])
    }

    /// An `if`, and the `else if`s chained to it by a loop (generated code chains a thousand):
    /// each link is lowered as the `else` branch of the one before, in a scope of its own.
    fn if_stmt(&mut self, s: Node<'t>) -> R<()> {
        // Per link entered: the end label the link before sets once the chain is lowered.
        let mut ends: Vec<Option<usize>> = Vec::new();
        let mut at = s;
        let r = loop {
            match self.if_link(at) {
                Ok(Some((next, end))) => {
                    self.scopes.push(Vec::new());
                    self.nesting += 1;
                    ends.push(end);
                    at = next;
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        for end in ends.into_iter().rev() {
            self.nesting -= 1;
            self.scopes.pop();
            if let (Some(end), true) = (end, r.is_ok()) {
                self.set_label(end);
            }
        }
        r
    }

    /// Lowers the `if` statement `s` but for an `else` branch that is itself an `if`: that one
    /// is returned, to be lowered next, with the label to set after it (none when the
    /// condition was folded and only the `else` is lowered).
    fn if_link(&mut self, s: Node<'t>) -> R<Option<(Node<'t>, Option<usize>)>> {
        let c = condition(s)?;
        let then = field(s, "consequence")?;
        let els = s.child_by_field_name("alternative").map(|e| {
            if e.kind() == "else_clause" {
                e.named_child(0).unwrap_or(e)
            } else {
                e
            }
        });
        let chained = els.filter(|e| e.kind() == "if_statement");
        // A condition known when lowering (`if (blockIdx.x == 0)`) lowers only the branch
        // taken: the other may index memory that this thread's indices put out of range.
        let inner = match c.kind() {
            "condition_clause" => c
                .child_by_field_name("value")
                .map_or_else(|| only_child(c), Ok)?,
            _ => c,
        };
        // `if (bad) return 1;` (or `exit(1)`, `abort()`, after printf and cleanup calls) in
        // the harness: the requirement `!bad` here, as `assert(!bad)` would be.
        if self.host() && self.frames.is_empty() && els.is_none() && self.fails(then)? {
            self.require_not(inner, s)?;
            return Ok(None);
        }
        if self.foldable(inner) {
            if let Operand::Imm(v) = self.value(inner, None)? {
                match (v != 0, els) {
                    (true, _) => self.scoped(then)?,
                    (false, Some(_)) if chained.is_some() => {
                        return Ok(chained.map(|next| (next, None)))
                    }
                    (false, Some(els)) => self.scoped(els)?,
                    (false, None) => {}
                }
                return Ok(None);
            }
        }
        if let (None, Some(&(cont, end))) = (els, self.loops.last()) {
            let jump = match then.kind() {
                "compound_statement" if then.named_child_count() == 1 => {
                    then.named_child(0).map(|n| n.kind()).unwrap_or("")
                }
                k => k,
            };
            match jump {
                "break_statement" => {
                    self.branch_if(c, true, end)?;
                    return Ok(None);
                }
                "continue_statement" => {
                    self.branch_if(c, true, cont)?;
                    return Ok(None);
                }
                _ => {}
            }
        }
        let else_l = self.new_label();
        self.branch_if(c, false, else_l)?;
        self.scoped(then)?;
        if let Some(els) = els {
            let end = self.new_label();
            self.branch(BranchCond::Always, end, c);
            self.set_label(else_l);
            if let Some(next) = chained {
                return Ok(Some((next, Some(end))));
            }
            self.scoped(els)?;
            self.set_label(end);
        } else {
            self.set_label(else_l);
        }
        Ok(None)
    }

    fn scoped(&mut self, s: Node<'t>) -> R<()> {
        self.scopes.push(Vec::new());
        let r = self.stmt(s);
        self.scopes.pop();
        r
    }

    /// A constant expression over literals and constant bindings, without emitting anything;
    /// `None` when it is not one.
    fn folded(&self, e: Node<'t>) -> Option<(Value, IntType)> {
        match e.kind() {
            "identifier" => match self.lookup(self.text(e))? {
                Binding::Const(v, ty) => Some((v, ty)),
                _ => None,
            },
            "parenthesized_expression" => self.folded(e.named_child(0)?),
            // `blockIdx.x` and friends: constants of a device thread, `unsigned int`.
            "field_expression" if !self.host() => {
                let on = self.text(e.child_by_field_name("argument")?);
                let k = match self.text(e.child_by_field_name("field")?) {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return None,
                };
                Some((self.dims.member(on, k)?, IntType::U32))
            }
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(e);
                let (mut a, mut ta) = self.folded(first)?;
                for o in ops {
                    let op = self.text(o.child_by_field_name("operator")?);
                    let (b, tb) = self.folded(o.child_by_field_name("right")?)?;
                    (a, ta) = fold_binary(op, a, ta, b, tb)?.ok()?;
                }
                Some((a, ta))
            }
            _ => self.cx.const_typed(e).ok(),
        }
    }

    /// `for (int i = A; i < B; ++i) body` with constant bounds and a body that never changes
    /// `i`: the body lowered once per value of `i`, a constant in each copy, so that a harness
    /// loop over an array costs no unroll bound. `Ok(false)` when the loop is not of that shape.
    fn unrolled_for(&mut self, s: Node<'t>) -> R<bool> {
        const MAX_TRIPS: i64 = crate::MAX_ARRAY_ELEMENTS as i64;
        let (Some(init), Some(cond), Some(step), Some(body)) = (
            s.child_by_field_name("initializer"),
            s.child_by_field_name("condition"),
            s.child_by_field_name("update"),
            s.child_by_field_name("body"),
        ) else {
            return Ok(false);
        };
        let mut c = init.walk();
        let decls: Vec<Node> = init.children_by_field_name("declarator", &mut c).collect();
        let ([d], "declaration") = (decls.as_slice(), init.kind()) else {
            return Ok(false);
        };
        let (Some(name), Some(value)) = (
            d.child_by_field_name("declarator"),
            d.child_by_field_name("value"),
        ) else {
            return Ok(false);
        };
        let var = self.text(name);
        let Ok(ty) = self.cx.ty(init, Some(*d)) else {
            return Ok(false);
        };
        if ty.pointer || ty.strukt.is_some() {
            return Ok(false);
        }
        let Some((start, _)) = self.folded(value) else {
            return Ok(false);
        };
        // `i < B`, `i <= B`, `i != B`, `i > B`, `i >= B`.
        let bound = (cond.kind() == "binary_expression")
            .then(|| {
                let l = cond.child_by_field_name("left")?;
                let op = self.text(cond.child_by_field_name("operator")?);
                (self.text(l) == var).then_some(())?;
                let (b, _) = self.folded(cond.child_by_field_name("right")?)?;
                Some((op, b))
            })
            .flatten();
        let Some((op, end)) = bound else {
            return Ok(false);
        };
        // `++i`, `i++`, `--i`, `i--`, `i += C`, `i -= C`.
        let stride = match step.kind() {
            "update_expression" => {
                let arg = step.child_by_field_name("argument");
                if arg.map(|a| self.text(a)) != Some(var) {
                    return Ok(false);
                }
                if self.text(step).contains("++") {
                    1
                } else {
                    -1
                }
            }
            "assignment_expression" => {
                let (Some(l), Some(op), Some(r)) = (
                    step.child_by_field_name("left"),
                    step.child_by_field_name("operator"),
                    step.child_by_field_name("right"),
                ) else {
                    return Ok(false);
                };
                let Some((v, _)) = self.folded(r) else {
                    return Ok(false);
                };
                match (self.text(l) == var, self.text(op)) {
                    (true, "+=") => v,
                    (true, "-=") => -v,
                    _ => return Ok(false),
                }
            }
            _ => return Ok(false),
        };
        if stride == 0 || writes_name(body, var, self.cx.src) {
            return Ok(false);
        }
        let mut values = Vec::new();
        let mut i = start;
        loop {
            let go = match op {
                "<" => i < end,
                "<=" => i <= end,
                ">" => i > end,
                ">=" => i >= end,
                "!=" => i != end,
                _ => return Ok(false),
            };
            if !go {
                break;
            }
            if values.len() as i64 >= MAX_TRIPS {
                return Ok(false);
            }
            values.push(ty.int.wrap(i));
            i += stride;
        }
        let end_label = self.new_label();
        for v in values {
            let next = self.new_label();
            self.scopes
                .push(vec![(var.to_string(), Binding::Const(v, ty.int))]);
            self.loops.push((next, end_label));
            let r = self.scoped(body);
            self.loops.pop();
            self.scopes.pop();
            r?;
            self.set_label(next);
        }
        self.set_label(end_label);
        Ok(true)
    }

    fn for_stmt(&mut self, s: Node<'t>) -> R<()> {
        if self.unrolled_for(s)? {
            return Ok(());
        }
        self.scopes.push(Vec::new());
        let r = (|| {
            if let Some(i) = s.child_by_field_name("initializer") {
                if i.kind() == "declaration" {
                    self.decl(i)?;
                } else {
                    self.value(i, None)?;
                }
            }
            let cond = s.child_by_field_name("condition");
            let step = s.child_by_field_name("update");
            self.loop_(cond, step, field(s, "body")?, s)
        })();
        self.scopes.pop();
        r
    }

    /// Whether a `do` statement's condition is the constant false (`while (0)`).
    fn runs_once(&self, s: Node<'t>) -> bool {
        s.child_by_field_name("condition").is_some_and(|c| {
            let t: String = self
                .text(c)
                .chars()
                .filter(|c| !"() \t\n".contains(*c))
                .collect();
            t == "0" || t == "false"
        })
    }

    fn do_stmt(&mut self, s: Node<'t>) -> R<()> {
        let head = self.new_label();
        let cont = self.new_label();
        let end = self.new_label();
        self.set_label(head);
        self.loops.push((cont, end));
        let r = self.scoped(field(s, "body")?);
        self.loops.pop();
        r?;
        self.set_label(cont);
        self.branch_if(condition(s)?, true, head)?;
        self.set_label(end);
        Ok(())
    }

    /// `L: if !c goto END; body; CONT: step; goto L; END:`, or `L: if c goto L` for a loop
    /// with neither body nor step (an await loop).
    fn loop_(
        &mut self,
        cond: Option<Node<'t>>,
        step: Option<Node<'t>>,
        body: Node<'t>,
        s: Node<'t>,
    ) -> R<()> {
        let head = self.new_label();
        let cont = self.new_label();
        let end = self.new_label();
        self.set_label(head);
        if is_empty_stmt(body) && step.is_none() {
            match cond {
                Some(c) => self.branch_if(c, true, head)?,
                None => self.branch(BranchCond::Always, head, s),
            }
            return Ok(());
        }
        if let Some(c) = cond {
            self.branch_if(c, false, end)?;
        }
        self.loops.push((cont, end));
        let r = self.scoped(body);
        self.loops.pop();
        r?;
        self.set_label(cont);
        if let Some(st) = step {
            self.value(st, None)?;
        }
        self.branch(BranchCond::Always, head, cond.unwrap_or(s));
        self.set_label(end);
        Ok(())
    }

    // ---- expressions ----

    /// Emits code that jumps to `label` when `e` is `when` and falls through otherwise.
    fn branch_if(&mut self, e: Node<'t>, when: bool, label: usize) -> R<()> {
        match e.kind() {
            "parenthesized_expression" | "condition_clause" => {
                let inner = e
                    .child_by_field_name("value")
                    .map_or_else(|| only_child(e), Ok)?;
                self.branch_if(inner, when, label)
            }
            "unary_expression" if self.op(e) == "!" => {
                self.branch_if(field(e, "argument")?, !when, label)
            }
            // A chain `a && b && ...` (or of `||`) by a loop: when every operand must hold
            // (`both`) the first that fails skips the branch, else each may take it.
            "binary_expression" if matches!(self.op(e), "&&" | "||") => {
                let (first, ops) = crate::nesting::chain_of(e);
                let mut operands = vec![first];
                for o in &ops {
                    operands.push(field(*o, "right")?);
                }
                let last = operands.pop().unwrap_or(first);
                let both = (self.op(e) == "&&") == when;
                if both {
                    let skip = self.new_label();
                    for a in operands {
                        self.branch_if(a, !when, skip)?;
                    }
                    self.branch_if(last, when, label)?;
                    self.set_label(skip);
                } else {
                    for a in operands {
                        self.branch_if(a, when, label)?;
                    }
                    self.branch_if(last, when, label)?;
                }
                Ok(())
            }
            "binary_expression" if matches!(self.op(e), "==" | "!=") => {
                let va = self.val(field(e, "left")?, None)?;
                let vb = self.val(field(e, "right")?, None)?;
                let eq = (self.op(e) == "==") == when;
                self.cond_branch(eq, va, vb, label, e);
                Ok(())
            }
            _ => {
                let v = self.val(e, None)?;
                self.cond_branch(!when, v, Val::imm(0, IntType::S32), label, e);
                Ok(())
            }
        }
    }

    /// Branches to `label` when `a == b` (`eq`) or `a != b` (`!eq`) in C's types, folding
    /// constants.
    fn cond_branch(&mut self, eq: bool, a: Val, b: Val, label: usize, n: Node<'t>) {
        let ty = common_type(a.ty, b.ty);
        let (a, b) = if ty.float {
            (self.convert(a, ty, None, n), self.convert(b, ty, None, n))
        } else {
            (a, b)
        };
        if let (Operand::Imm(x), Operand::Imm(y)) = (a.op, b.op) {
            // Equality of constants never has undefined behaviour.
            let same = BinOp::Eq.eval(ty, Arithmetic::C, x, y) == Ok(1);
            if same == eq {
                self.branch(BranchCond::Always, label, n);
            }
            return;
        }
        // A branch compares raw values: operands of different types compare in their common
        // type first (a constant the register's type holds compares as it is).
        let (a, b) = if compares_raw(a.op, a.ty, b.op, b.ty) {
            (a.op, b.op)
        } else {
            let t = self.temp(IntType::S32);
            self.emit(
                InstrKind::Binary {
                    dst: t,
                    op: BinOp::Eq,
                    ty,
                    a: a.op,
                    b: b.op,
                },
                n,
            );
            (Operand::Reg(t), Operand::Imm(1))
        };
        let cond = if eq {
            BranchCond::Eq(a, b)
        } else {
            BranchCond::Ne(a, b)
        };
        self.branch(cond, label, n);
    }

    /// Whether `e` only computes registers (so `&&` may evaluate both sides).
    /// Whether `e` folds to a constant without emitting code: literals, `sizeof`, constants,
    /// thread and block indices, and operators on them.
    fn foldable(&self, e: Node<'t>) -> bool {
        match e.kind() {
            "number_literal" | "true" | "false" | "sizeof_expression" => true,
            "identifier" => matches!(self.lookup(self.text(e)), Some(Binding::Const(..))),
            "field_expression" => e.child_by_field_name("argument").is_some_and(|a| {
                let on = self.text(a);
                matches!(self.lookup(on), Some(Binding::Dim3(_)))
                    || (!self.host()
                        && matches!(on, "threadIdx" | "blockIdx" | "blockDim" | "gridDim"))
            }),
            "parenthesized_expression" => only_child(e).is_ok_and(|c| self.foldable(c)),
            "call_expression" => {
                !self.host()
                    && e.child_by_field_name("function")
                        .is_some_and(|f| opencl::WORK_ITEM_FNS.contains(&self.text(f)))
                    && e.child_by_field_name("arguments").is_some_and(|a| {
                        let mut c = a.walk();
                        let all = a.named_children(&mut c).all(|x| self.foldable(x));
                        all
                    })
            }
            "cast_expression" => e
                .child_by_field_name("value")
                .is_some_and(|v| self.foldable(v)),
            "unary_expression" => {
                matches!(self.op(e), "-" | "+" | "!" | "~")
                    && e.child_by_field_name("argument")
                        .is_some_and(|a| self.foldable(a))
            }
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(e);
                self.foldable(first)
                    && ops.iter().all(|o| {
                        o.child_by_field_name("right")
                            .is_some_and(|a| self.foldable(a))
                    })
            }
            "conditional_expression" => ["condition", "consequence", "alternative"]
                .iter()
                .all(|f| e.child_by_field_name(f).is_some_and(|a| self.foldable(a))),
            _ => false,
        }
    }

    fn is_pure(&self, e: Node<'t>) -> bool {
        match e.kind() {
            "number_literal" | "true" | "false" | "field_expression" => true,
            "identifier" => matches!(
                self.lookup(self.text(e)),
                Some(Binding::Reg(..) | Binding::Const(..))
            ),
            "parenthesized_expression" => only_child(e).is_ok_and(|c| self.is_pure(c)),
            "unary_expression" => e
                .child_by_field_name("argument")
                .is_some_and(|a| self.is_pure(a)),
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(e);
                self.is_pure(first)
                    && ops.iter().all(|o| {
                        o.child_by_field_name("right")
                            .is_some_and(|a| self.is_pure(a))
                    })
            }
            _ => false,
        }
    }

    fn reg_of(&self, name: &str, n: Node<'t>) -> R<Option<RegId>> {
        match self.lookup(name) {
            Some(Binding::Reg(r, seg, _)) => {
                if seg != self.seg {
                    return err(n, format!("not supported: the host local `{name}` is used across a kernel launch or synchronization (host code there runs as separate host threads); read it again after the launch"));
                }
                Ok(Some(r))
            }
            _ => Ok(None),
        }
    }

    /// Evaluates `e`; the result goes to `hint` when an instruction computes it.
    fn value(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Operand> {
        Ok(self.val(e, hint)?.op)
    }

    /// The C type a cast names, `None` for a cast to a pointer or to a type that is not an
    /// integer or floating type (the value then passes unchanged).
    fn cast_type(&self, e: Node<'t>) -> Option<IntType> {
        let t = e.child_by_field_name("type")?;
        if t.child_by_field_name("declarator").is_some() {
            return None;
        }
        let inner = t.child_by_field_name("type")?;
        // `(void)v` discards the value: no conversion (and no 8-bit arithmetic).
        if self.text(inner).trim() == "void" {
            return None;
        }
        let mut ty = Ty::int();
        self.cx.base_type(inner, &mut ty).ok()?;
        let scalar = !(ty.pointer || ty.dim3 || ty.stream || ty.cl_kernel || ty.strukt.is_some());
        scalar.then_some(ty.int)
    }

    /// The value of the variable `name` (an identifier, or `p.f` of a struct held by value).
    fn val_named(&mut self, name: &str, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let typed = |me: &Self, o: R<Operand>| o.map(|o| me.typed(o));
        if let Some(r) = self.reg_of(name, e)? {
            return Ok(self.typed(Operand::Reg(r)));
        }
        match self.lookup(name) {
            Some(Binding::Const(v, ty)) => return Ok(Val::imm(v, ty)),
            Some(Binding::Ptr(_) | Binding::PtrUnset(..)) => {
                return err(
                    e,
                    format!("`{name}` is a pointer: read the memory with `*{name}`"),
                )
            }
            Some(Binding::Dim3(_) | Binding::Stream(_)) => {
                return err(e, format!("`{name}` is not a number"))
            }
            Some(Binding::HostArr(_)) => return err(e, format!("`{name}` is an array: index it")),
            _ => {}
        }
        match self.object(name, e)? {
            Some((p, 1)) => {
                let v = self.load(p, hint, e);
                typed(self, v)
            }
            Some(_) => err(e, format!("`{name}` is an array: index it")),
            // Every runtime call of the harness succeeds.
            None if name == "cudaSuccess" => Ok(Val::imm(0, IntType::S32)),
            None if matches!(name, "threadIdx" | "blockIdx" | "blockDim" | "gridDim") => {
                err(e, format!("`{name}` needs a member: `{name}.x`"))
            }
            None => self.unknown(name, e),
        }
    }

    /// Evaluates `e` with its C type; the result goes to `hint` when an instruction computes
    /// it and it has the hint's type (the caller moves it there otherwise).
    fn val(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let typed = |me: &Self, o: R<Operand>| o.map(|o| me.typed(o));
        match e.kind() {
            "number_literal" => {
                let (v, ty, _) = self.cx.literal(e)?;
                Ok(Val::imm(v, ty))
            }
            // `bool` promotes to `int`.
            "true" => Ok(Val::imm(1, IntType::S32)),
            "false" | "null" | "nullptr" => Ok(Val::imm(0, IntType::S32)),
            "char_literal" => err(e, "not supported: character constants"),
            "sizeof_expression" => {
                let size = match self.local_size(e) {
                    Some(n) => n,
                    None => self.cx.sizeof(e)?,
                };
                Ok(Val::imm(size, IntType::U64))
            }
            "parenthesized_expression" => self.val(only_child(e)?, hint),
            "cast_expression" => {
                let v = self.val(field(e, "value")?, None)?;
                Ok(match self.cast_type(e) {
                    Some(ty) => self.convert(v, ty, hint, e),
                    None => v,
                })
            }
            "identifier" => self.val_named(self.text(e), e, hint),
            "field_expression" if self.flat_field(e).is_some() => {
                let key = self.flat_field(e).unwrap_or_default();
                self.val_named(&key, e, hint)
            }
            "field_expression" => {
                let obj = field(e, "argument")?;
                let f = self.text(field(e, "field")?);
                let on = self.text(obj);
                let dims = matches!(self.lookup(on), Some(Binding::Dim3(_)))
                    || matches!(on, "threadIdx" | "blockIdx" | "blockDim" | "gridDim");
                if !dims {
                    // A struct field: `s.a`, `p->flag`, `a[1].flag`.
                    return match self.place(e)? {
                        Some(p) => {
                            let v = self.load(p, hint, e);
                            typed(self, v)
                        }
                        None => err(e, format!("not supported: the member `{}`", self.text(e))),
                    };
                }
                let k = match f {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return err(e, format!("`{on}` has members x, y and z")),
                };
                // The members of `dim3` and `uint3` are `unsigned int`.
                if let Some(Binding::Dim3(v)) = self.lookup(on) {
                    return Ok(Val::imm(v[k], IntType::U32));
                }
                if self.host() && matches!(on, "threadIdx" | "blockIdx" | "blockDim" | "gridDim") {
                    return err(e, format!("`{on}` exists only in device code"));
                }
                let Some(v) = self.dims.member(on, k) else {
                    return err(e, format!("not supported: the member `{}`", self.text(e)));
                };
                Ok(Val::imm(v, IntType::U32))
            }
            "pointer_expression" => match self.op(e) {
                "*" => {
                    let p = self.pointer(field(e, "argument")?)?;
                    let v = self.load(p, hint, e);
                    typed(self, v)
                }
                _ => err(e, "not supported: an address as a value (pass addresses to atomic functions and kernels only)"),
            },
            "subscript_expression" => {
                let p = self.place(e)?.ok_or_else(|| CudaError::new(span_of(e), "expected `a[i]`"))?;
                let v = self.load(p, hint, e);
                typed(self, v)
            }
            "unary_expression" => {
                let a = self.val(field(e, "argument")?, None)?;
                let int = |v| Val::imm(v, IntType::S32);
                match self.op(e) {
                    // `+a` promotes.
                    "+" => Ok(self.convert(a, promote(a.ty), hint, e)),
                    // `-x` of a float flips the sign (`-0.0` from `0.0`, unlike `0 - x`).
                    "-" if a.ty.float => {
                        let neg = BinOp::Float(FloatOp::Neg, FloatMode::default());
                        Ok(self.binary(neg, a, a, hint, e))
                    }
                    "-" => Ok(self.binary(BinOp::Sub, int(0), a, hint, e)),
                    "!" => Ok(self.binary(BinOp::Eq, a, int(0), hint, e)),
                    "~" => Ok(self.binary(BinOp::Xor, a, int(-1), hint, e)),
                    op => err(e, format!("not supported: operator `{op}`")),
                }
            }
            "binary_expression" => self.binary_expr(e, hint),
            "conditional_expression" => {
                // The result has the arms' common type; each arm's move is written once both
                // types are known.
                let t = self.temp(IntType::S32);
                let els = self.new_label();
                let end = self.new_label();
                let (c, a, b) = (field(e, "condition")?, field(e, "consequence")?, field(e, "alternative")?);
                self.branch_if(c, false, els)?;
                let va = self.val(a, None)?;
                let at_a = self.code.len();
                self.emit(InstrKind::Mov { dst: t, src: va.op }, a);
                self.branch(BranchCond::Always, end, e);
                self.set_label(els);
                let vb = self.val(b, None)?;
                let at_b = self.code.len();
                self.emit(InstrKind::Mov { dst: t, src: vb.op }, b);
                self.set_label(end);
                let ty = common_type(va.ty, vb.ty);
                self.reg_types[t.0 as usize] = ty;
                self.code[at_a].kind = self.conversion_of(t, va, ty);
                self.code[at_b].kind = self.conversion_of(t, vb, ty);
                Ok(Val { op: Operand::Reg(t), ty })
            }
            "assignment_expression" => {
                let v = self.assign(e);
                typed(self, v)
            }
            "update_expression" => {
                let v = self.update(e);
                typed(self, v)
            }
            "call_expression" => self.call(e, hint),
            "comma_expression" => {
                self.value(field(e, "left")?, None)?;
                self.val(field(e, "right")?, hint)
            }
            k => err(e, format!("not supported: `{}` ({k})", first_line(self.text(e)))),
        }
    }

    fn binary_expr(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let op = self.op(e);
        let (a, b) = (field(e, "left")?, field(e, "right")?);
        let zero = Val::imm(0, IntType::S32);
        let (first, ops) = crate::nesting::chain_of(e);
        if matches!(op, "&&" | "||") {
            if self.is_pure(a) && self.is_pure(b) {
                // Each link of the chain as `(left != 0) op (right != 0)`, left to right.
                let bop = if op == "&&" { BinOp::And } else { BinOp::Or };
                let mut v = self.val(first, None)?;
                let last = ops.len() - 1;
                for (k, o) in ops.into_iter().enumerate() {
                    let na = self.binary(BinOp::Ne, v, zero, None, o);
                    let vb = self.val(field(o, "right")?, None)?;
                    let nb = self.binary(BinOp::Ne, vb, zero, None, o);
                    v = self.binary(bop, na, nb, if k == last { hint } else { None }, o);
                }
                return Ok(v);
            }
            let t = self.temp(IntType::S32);
            let f = self.new_label();
            let end = self.new_label();
            self.branch_if(e, false, f)?;
            self.emit(
                InstrKind::Mov {
                    dst: t,
                    src: Operand::Imm(1),
                },
                e,
            );
            self.branch(BranchCond::Always, end, e);
            self.set_label(f);
            self.emit(
                InstrKind::Mov {
                    dst: t,
                    src: Operand::Imm(0),
                },
                e,
            );
            self.set_label(end);
            return Ok(Val {
                op: Operand::Reg(t),
                ty: IntType::S32,
            });
        }
        // A chain `a + b * c - d ...` by a loop, left to right.
        let mut v = self.val(first, None)?;
        let last = ops.len() - 1;
        for (k, o) in ops.into_iter().enumerate() {
            let vb = self.val(field(o, "right")?, None)?;
            let op = self.op(o);
            let Some((bop, swap)) = bin_op(op) else {
                return err(o, format!("not supported: `{op}` on values known only at run time (the IR has no such operation; it folds on constants)"));
            };
            let (x, y) = if swap { (vb, v) } else { (v, vb) };
            v = self.binary(bop, x, y, if k == last { hint } else { None }, o);
        }
        Ok(v)
    }

    fn assign(&mut self, e: Node<'t>) -> R<Operand> {
        let target = field(e, "left")?;
        let value = field(e, "right")?;
        let op = self.op(e);
        let bin = match op {
            "=" => None,
            "+=" => Some((BinOp::Add, Some(RmwOp::Add))),
            "-=" => Some((BinOp::Sub, Some(RmwOp::Sub))),
            "*=" => Some((BinOp::Mul, None)),
            "/=" => Some((BinOp::Div, None)),
            "%=" => Some((BinOp::Rem, None)),
            "<<=" => Some((BinOp::Shl, None)),
            ">>=" => Some((BinOp::Shr, None)),
            "&=" => Some((BinOp::And, Some(RmwOp::And))),
            "|=" => Some((BinOp::Or, Some(RmwOp::Or))),
            "^=" => Some((BinOp::Xor, Some(RmwOp::Xor))),
            _ => return err(e, format!("not supported: `{op}`")),
        };
        let flat = self.flat_field(target);
        if target.kind() == "identifier" || flat.is_some() {
            let name = flat.as_deref().unwrap_or(self.text(target));
            // `x = e;` on the host overwrites `x`: a local of an earlier segment gets a new
            // register in this one (and `e` may itself end the segment).
            // (Not in a loop or `if`: the old value would be lost where the assignment does
            // not run.)
            let top = self.host() && self.nesting == 0;
            // A field of a struct held by value, set in straight-line code: a constant stays
            // one (it may become a kernel argument), anything else a register.
            if let (Some(_), None, Some(Binding::Const(_, ty) | Binding::Reg(_, _, ty))) =
                (&flat, bin, self.lookup(name))
            {
                if self.nesting == 0 || !self.host() {
                    let v = self.val(value, None)?;
                    let v = self.float_conv(v, ty, None, value);
                    if let (Operand::Imm(k), true) = (v.op, self.nesting == 0) {
                        self.rebind(name, Binding::Const(ty.wrap(k), ty));
                        return Ok(Operand::Imm(ty.wrap(k)));
                    }
                    let r = self.new_reg(name, ty);
                    self.mov(r, v.op, e);
                    let seg = self.seg;
                    self.rebind(name, Binding::Reg(r, seg, ty));
                    return Ok(Operand::Reg(r));
                }
            }
            if let (None, true, Some(Binding::Reg(_, _, ty))) = (bin, top, self.lookup(name)) {
                let v = self.val(value, None)?;
                let v = self.float_conv(v, ty, None, value);
                let r = match self.lookup(name) {
                    Some(Binding::Reg(r, seg, _)) if seg == self.seg => r,
                    _ => {
                        let r = self.new_reg(name, ty);
                        let seg = self.seg;
                        self.rebind(name, Binding::Reg(r, seg, ty));
                        r
                    }
                };
                self.mov(r, v.op, e);
                return Ok(Operand::Reg(r));
            }
            if let Some(r) = self.reg_of(name, target)? {
                match bin {
                    None => {
                        let ty = self.reg_ty(r);
                        let v = self.value_as(value, ty, Some(r))?;
                        self.mov(r, v, e);
                    }
                    Some((b, _)) => {
                        // `r op= v` is `r = r op v`, converted back to `r`'s type.
                        let v = self.val(value, None)?;
                        let old = self.typed(Operand::Reg(r));
                        let res = self.binary(b, old, v, Some(r), e);
                        self.mov_val(r, res, e);
                    }
                }
                return Ok(Operand::Reg(r));
            }
            match self.lookup(name) {
                Some(Binding::Ptr(_) | Binding::PtrUnset(..)) => {
                    let p = self.pointer(value)?;
                    let t = match self.lookup(name) {
                        Some(Binding::Ptr(old) | Binding::Obj(old)) => {
                            Some((old.access, old.strukt, old.ty))
                        }
                        Some(Binding::PtrUnset(a, _, st, ty)) => Some((a, st, ty)),
                        _ => None,
                    };
                    if let Some(t) = t {
                        let p = self.retype(p, t, value)?;
                        let p = self.keep_pointer(p, value)?;
                        self.rebind(name, Binding::Ptr(p));
                    }
                    return Ok(Operand::Imm(0));
                }
                Some(Binding::Const(..)) => return err(target, format!("`{name}` is a constant")),
                _ => {}
            }
        }
        let Some(p) = self.place(target)? else {
            return err(target, "cannot assign to this expression");
        };
        match (bin, p.access) {
            (None, _) => {
                let v = self.value_as(value, p.ty, None)?;
                self.store(p, v, e)?;
                Ok(v)
            }
            (Some((_, Some(rop))), Access::Atomic(scope)) => {
                let v = self.value_as(value, p.ty, None)?;
                let at = self.address(p, target)?;
                let scope = self.scope(scope, None);
                Ok(self.rmw(at, RmwKind::Op(rop, v), Order::SeqCst, scope, None, e))
            }
            (Some((_, None)), Access::Atomic(_)) => err(
                e,
                format!("not supported: `{op}` on an atomic (no such atomic operation)"),
            ),
            (Some((b, _)), _) => {
                let old = self.load(p, None, target)?;
                let old = self.typed(old);
                let v = self.val(value, None)?;
                let t = self.binary(b, old, v, None, e);
                let t = self.float_conv(t, p.ty, None, e);
                self.store(p, t.op, e)?;
                Ok(t.op)
            }
        }
    }

    fn update(&mut self, e: Node<'t>) -> R<Operand> {
        let target = field(e, "argument")?;
        let op = if self.op(e) == "++" {
            BinOp::Add
        } else {
            BinOp::Sub
        };
        let one = Val::imm(1, IntType::S32);
        if target.kind() == "identifier" {
            if let Some(r) = self.reg_of(self.text(target), target)? {
                // `r++` is `r = r + 1` in C's types, converted back to `r`'s type.
                let old = self.typed(Operand::Reg(r));
                let res = self.binary(op, old, one, Some(r), e);
                self.mov_val(r, res, e);
                return Ok(Operand::Reg(r));
            }
        }
        let Some(p) = self.place(target)? else {
            return err(target, "cannot increment this expression");
        };
        if let Access::Atomic(scope) = p.access {
            let at = self.address(p, target)?;
            let scope = self.scope(scope, None);
            let rop = if op == BinOp::Add {
                RmwOp::Add
            } else {
                RmwOp::Sub
            };
            let one = self.float_conv(one, at.1, None, e).op;
            return Ok(self.rmw(at, RmwKind::Op(rop, one), Order::SeqCst, scope, None, e));
        }
        let old = self.load(p, None, target)?;
        let old = self.typed(old);
        let t = self.binary(op, old, one, None, e);
        let t = self.float_conv(t, p.ty, None, e);
        self.store(p, t.op, e)?;
        Ok(t.op)
    }

    fn args(&self, call: Node<'t>) -> R<Vec<Node<'t>>> {
        let a = field(call, "arguments")?;
        let mut c = a.walk();
        Ok(a.named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect())
    }

    fn arity(
        &self,
        name: &str,
        args: &[Node<'t>],
        (lo, hi): (usize, usize),
        what: &str,
        n: Node<'t>,
    ) -> R<()> {
        if args.len() < lo || args.len() > hi {
            return err(n, format!("`{name}` takes {what}"));
        }
        Ok(())
    }

    fn word(&self, n: Node<'t>) -> String {
        self.text(n).split_whitespace().collect()
    }

    fn order_arg(&self, n: Node<'t>) -> R<Order> {
        order_name(&self.word(n)).ok_or_else(|| {
            CudaError::new(
                span_of(n),
                format!(
                    "expected a memory order such as cuda::memory_order_acquire, found `{}`",
                    self.text(n)
                ),
            )
        })
    }

    fn fence_order(&self, n: Node<'t>) -> R<FenceOrder> {
        Ok(match self.order_arg(n)? {
            Order::SeqCst => FenceOrder::Sc,
            Order::AcqRel => FenceOrder::AcqRel,
            Order::Acquire => FenceOrder::Acquire,
            Order::Release => FenceOrder::Release,
            _ => {
                return err(
                    n,
                    "a relaxed fence orders nothing; use acquire, release, acq_rel or seq_cst",
                )
            }
        })
    }

    fn check_order(&self, o: Order, load: bool, store: bool, n: Node<'t>) -> R<()> {
        let bad = (load && !store && matches!(o, Order::Release | Order::AcqRel))
            || (store && !load && matches!(o, Order::Acquire | Order::AcqRel));
        if bad {
            return err(
                n,
                format!(
                    "this order is not allowed on a {}",
                    if load { "load" } else { "store" }
                ),
            );
        }
        Ok(())
    }

    /// A call, with the type of its value: an atomic's is the object's, an inlined function's
    /// its return type, OpenCL's work-item functions' `size_t` (`uint` for `get_work_dim`).
    fn call(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Val> {
        let f = field(e, "function")?;
        if f.kind() == "identifier" {
            let name = self.word(f);
            let args = self.args(e)?;
            if let Some(v) = self.float_call(&name, &args, hint, e)? {
                return Ok(v);
            }
        }
        let v = self.call_op(e, hint)?;
        let name = self.word(field(e, "function")?);
        if let Operand::Imm(x) = v {
            if opencl::WORK_ITEM_FNS.contains(&name.as_str()) {
                let ty = if name == "get_work_dim" {
                    IntType::U32
                } else {
                    IntType::U64
                };
                return Ok(Val::imm(x, ty));
            }
        }
        Ok(self.typed(v))
    }

    fn call_op(&mut self, e: Node<'t>, hint: Option<RegId>) -> R<Operand> {
        let f = field(e, "function")?;
        let mut c = e.walk();
        if e.children(&mut c).any(|k| k.kind() == "kernel_call_syntax") {
            return self.launch(e);
        }
        if f.kind() == "field_expression" {
            return self.member(e, f, hint);
        }
        let name = self.word(f);
        let args = self.args(e)?;
        if cg_base(&name) == "sync" && !self.cx.funcs.contains_key(&name) && args.len() == 1 {
            if let Some(g) = self.group_of(args[0]) {
                return self.group_method(g, "sync", e);
            }
        }
        if let Some((base, scope)) = cuda_atomic(&name) {
            self.device_only(&name, f)?;
            let scope = self.scope(scope, None);
            if base == "atomicCAS" {
                self.arity(&name, &args, (3, 3), "pointer, compare, value", e)?;
                let p = self.pointer(args[0])?;
                let addr = self.address(p, args[0])?;
                let expected = self.value_as(args[1], addr.1, None)?;
                let new = self.value_as(args[2], addr.1, None)?;
                return Ok(self.rmw(
                    addr,
                    RmwKind::Cas { expected, new },
                    Order::Relaxed,
                    scope,
                    hint,
                    e,
                ));
            }
            let op = CUDA_RMW
                .iter()
                .find(|(n, _)| *n == base)
                .map_or(RmwOp::Add, |(_, o)| *o);
            self.arity(&name, &args, (2, 2), "pointer, value", e)?;
            let p = self.pointer(args[0])?;
            let addr = self.address(p, args[0])?;
            if addr.1.float && !matches!(op, RmwOp::Add | RmwOp::Exch) {
                return err(
                    e,
                    format!("`{name}` takes an integer pointer (CUDA has no `{base}` on floats)"),
                );
            }
            let v = self.value_as(args[1], addr.1, None)?;
            return Ok(self.rmw(addr, RmwKind::Op(op, v), Order::Relaxed, scope, hint, e));
        }
        if let Some(v) = self.cl_device_call(&name, &args, hint, e)? {
            return Ok(v);
        }
        if let Some(v) = self.warp_call(&name, &args, hint, e)? {
            return Ok(v);
        }
        if self.host() {
            if let Some(v) = self.cl_host_call(&name, &args, hint, e)? {
                return Ok(v);
            }
        }
        match name.as_str() {
            "__threadfence_block" | "__threadfence" | "__threadfence_system" => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (0, 0), "no arguments", e)?;
                let scope = match name.as_str() {
                    "__threadfence_block" => Scope::Cta,
                    "__threadfence" => Scope::Gpu,
                    _ => Scope::Sys,
                };
                self.emit(
                    InstrKind::Fence {
                        order: FenceOrder::Sc,
                        scope,
                        spaces: FenceSpaces::ALL,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            // A hint to the scheduler: no memory effect, and a spin that sleeps is still a spin.
            "__nanosleep" => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (1, 1), "nanoseconds", e)?;
                self.value(args[0], None)?;
                Ok(Operand::Imm(0))
            }
            "__syncthreads" => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (0, 0), "no arguments", e)?;
                self.emit(
                    InstrKind::Barrier {
                        id: Operand::Imm(0),
                        kind: BarrierKind::Sync,
                        count: None, spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            "cuda::atomic_thread_fence"
            | "cuda::std::atomic_thread_fence"
            | "std::atomic_thread_fence" => {
                let max = if name == "cuda::atomic_thread_fence" {
                    2
                } else {
                    1
                };
                self.arity(&name, &args, (1, max), "order[, scope]", e)?;
                let order = self.fence_order(args[0])?;
                let (scope, explicit) = match args.get(1) {
                    Some(s) => (
                        thread_scope(&self.word(*s)).ok_or_else(|| {
                            CudaError::new(
                                span_of(*s),
                                "expected cuda::thread_scope_block / device / system",
                            )
                        })?,
                        Some(*s),
                    ),
                    None => (Scope::Sys, None),
                };
                let scope = self.scope(scope, explicit);
                self.emit(
                    InstrKind::Fence {
                        order,
                        scope,
                        spaces: FenceSpaces::ALL,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            n if HINT_LOADS.contains(&n) => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (1, 1), "a pointer", e)?;
                let p = self.pointer(args[0])?;
                let addr = self.address(p, args[0])?;
                Ok(self.load_ord(addr, Order::Weak, Scope::Sys, hint, e))
            }
            n if HINT_STORES.contains(&n) => {
                self.device_only(&name, f)?;
                self.arity(&name, &args, (2, 2), "pointer, value", e)?;
                let p = self.pointer(args[0])?;
                let addr = self.address(p, args[0])?;
                let v = self.value_as(args[1], addr.1, None)?;
                self.store_ord(addr, v, Order::Weak, Scope::Sys, e);
                Ok(Operand::Imm(0))
            }
            "assert" => {
                self.arity(&name, &args, (1, 1), "one condition", e)?;
                self.assert(args[0], e)?;
                Ok(Operand::Imm(0))
            }
            "printf" if self.host() => {
                self.check_names(&args)?;
                Ok(Operand::Imm(0))
            }
            "printf" => {
                self.cx.warn(e, "printf is ignored");
                Ok(Operand::Imm(0))
            }
            "exit" | "abort" if self.host() => err(
                f,
                format!("not supported: `{name}` here; the harness fails with `if (bad) {name}({});` (or `if (bad) return 1;`)", if name == "exit" { "1" } else { "" }),
            ),
            _ if self.host() && self.harness_call(&name, &args, e)? => Ok(Operand::Imm(0)),
            _ => {
                if let Some(func) = self.cx.funcs.get(&name) {
                    let (kind, node) = (func.kind, func.node);
                    if kind == FnKind::Global {
                        return err(f, format!("`{name}` is a kernel: launch it with `{name}<<<blocks, threads>>>(...)`"));
                    }
                    if self.host() && kind == FnKind::Device {
                        return err(
                            f,
                            format!(
                                "`{name}` is a `__device__` function; host code cannot call it"
                            ),
                        );
                    }
                    return self.inline(node, &args, hint, e);
                }
                err(f, format!("not supported: call to `{name}` (not a CUDA synchronization function, a harness call or a function of this file)"))
            }
        }
    }

    /// `assert(c)` accumulates `c != 0` into a register that starts at 1.
    fn assert(&mut self, c: Node<'t>, e: Node<'t>) -> R<()> {
        let r = self.requirement_register(e);
        let v = self.val(c, None)?;
        let ok = self.binary(BinOp::Ne, v, Val::imm(0, IntType::S32), None, c);
        self.and_into_requirement(r, ok.op, e);
        Ok(())
    }

    /// A new requirement of the test at `at`: a register of the thread that starts at 1, which
    /// the condition requires non-zero.
    pub(super) fn requirement_register(&mut self, at: Node<'t>) -> RegId {
        let r = self.new_reg(&format!("assert{}", self.asserts.len()), IntType::S32);
        self.init_regs.push((r, 1));
        self.asserts.push((r, span_of(at)));
        r
    }

    /// `r &= ok`: the requirement `r` holds only if `ok` is non-zero here.
    pub(super) fn and_into_requirement(&mut self, r: RegId, ok: Operand, at: Node<'t>) {
        self.emit(
            InstrKind::Binary {
                dst: r,
                op: BinOp::And,
                ty: IntType::S32,
                a: Operand::Reg(r),
                b: ok,
            },
            at,
        );
    }

    /// The parameter declarations of function definition `func` (none for `(void)`).
    fn params_of(&self, func: Node<'t>) -> R<Vec<Node<'t>>> {
        let decl = field(func, "declarator")?;
        let params = field(decl, "parameters")?;
        let mut c = params.walk();
        Ok(params
            .named_children(&mut c)
            .filter(|p| p.kind() == "parameter_declaration")
            .filter(|p| self.text(*p).trim() != "void")
            .collect())
    }

    /// Inlines a call to a function of this file.
    fn inline(
        &mut self,
        func: Node<'t>,
        args: &[Node<'t>],
        hint: Option<RegId>,
        call: Node<'t>,
    ) -> R<Operand> {
        if self.frames.len() >= MAX_INLINE_DEPTH {
            return err(
                call,
                format!("calls nest deeper than {MAX_INLINE_DEPTH} (recursion is not supported)"),
            );
        }
        let params = self.params_of(func)?;
        if params.len() != args.len() {
            return err(
                call,
                format!(
                    "{} argument(s) given, the function takes {}",
                    args.len(),
                    params.len()
                ),
            );
        }
        let mut frame = Vec::new();
        for (p, a) in params.iter().zip(args) {
            let ty = self.cx.ty(*p, p.child_by_field_name("declarator"))?;
            let pname = p
                .child_by_field_name("declarator")
                .map(|d| self.cx.declarator_shape(d))
                .transpose()?
                .map(|(n, _, _)| self.text(n).to_string())
                .unwrap_or_default();
            if let (Some(sid), false) = (ty.strukt, ty.pointer) {
                self.bind_struct_param(&pname, sid, *a, false, &mut frame)?;
                continue;
            }
            if ty.pointer {
                self.cx.not_in_memory(ty.strukt, *p)?;
            }
            // A parameter is initialised as a variable of its type is: converted.
            let b = if ty.pointer {
                let ptr = self.pointer(*a)?;
                let ptr = self.retype(ptr, ty.ptr_ty(), *a)?;
                Binding::Ptr(self.keep_pointer(ptr, *a)?)
            } else {
                match self.value_as(*a, ty.int, None)? {
                    Operand::Imm(v) => Binding::Const(ty.int.wrap(v), ty.int),
                    v => {
                        let r = self.new_reg(&pname, ty.int);
                        self.mov(r, v, *a);
                        Binding::Reg(r, self.seg, ty.int)
                    }
                }
            };
            frame.push((pname, b));
        }
        let returns = self.text(field(func, "type")?).trim() != "void";
        let ret = if returns {
            // The return type (`int` for one this front-end has no words for).
            let rty = self.cx.ty(func, None).map_or(IntType::S32, |t| t.int);
            Some(self.dst_for(hint, rty))
        } else {
            None
        };
        let end = self.new_label();
        // The callee sees its parameters and the globals, not the caller's locals.
        let saved = std::mem::replace(&mut self.scopes, vec![frame]);
        let saved_loops = std::mem::take(&mut self.loops);
        let body = field(func, "body")?;
        let outer = self.cx.enter_body(call, body, "this call")?;
        self.frames.push((end, ret));
        let r = self.stmt(body);
        self.frames.pop();
        self.cx.leave_body(outer);
        self.loops = saved_loops;
        self.scopes = saved;
        r?;
        self.set_label(end);
        Ok(ret.map_or(Operand::Imm(0), Operand::Reg))
    }

    /// libcu++ / std members: `x->load(order)`, `f.store(v, order)`, `r.fetch_add(1)`, ...
    /// The length of `extern __shared__ T a[];`: the launch's dynamic shared bytes in `T`s.
    fn dynamic_shared_len(&self, ty: &Ty, decl: Node<'t>) -> R<usize> {
        let bytes = self.cx.launch_smem;
        let elem = i64::from(ty.int.bits / 8).max(1);
        if bytes <= 0 {
            return err(decl, "a dynamic shared array (`extern __shared__`), but the launch gives no dynamic shared memory: pass its size as the third <<<...>>> argument");
        }
        let len = (bytes / elem) as usize;
        if len == 0 || len > MAX_ARRAY_ELEMENTS {
            return err(decl, format!("a dynamic shared array of {len} elements"));
        }
        Ok(len)
    }

    /// The cooperative group `e` names: `cg::this_thread_block()`, `cg::this_grid()`, or a
    /// variable bound to one.
    fn group_of(&self, e: Node<'t>) -> Option<Group> {
        let mut e = e;
        while e.kind() == "parenthesized_expression" {
            e = e.named_child(0)?;
        }
        match e.kind() {
            "call_expression" => {
                let f = e.child_by_field_name("function")?;
                let name = self.word(f);
                if self.cx.funcs.contains_key(&name) {
                    return None;
                }
                match cg_base(&name) {
                    "this_thread_block" => Some(Group::Block),
                    "this_grid" => Some(Group::Grid),
                    t if t.starts_with("tiled_partition") => {
                        // `tiled_partition<N>(g)` of the block (or of a wider tile).
                        let n = tile_size(t)?;
                        let args = e.child_by_field_name("arguments")?;
                        let parent = args.named_child(0)?;
                        match self.group_of(parent)? {
                            Group::Block => Some(Group::Tile(n)),
                            Group::Tile(m) if n <= m => Some(Group::Tile(n)),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            }
            "identifier" => match self.lookup(self.text(e)) {
                Some(Binding::Group(g)) => Some(g),
                _ => None,
            },
            _ => None,
        }
    }

    /// `cg::thread_block b = cg::this_thread_block();` (or `cg::grid_group`, or `auto`):
    /// binds the group; whether `decl` was one.
    fn group_decl(&mut self, d: Node<'t>, decl: Node<'t>) -> R<bool> {
        let ty = d
            .child_by_field_name("type")
            .map(|t| self.word(t))
            .unwrap_or_default();
        let base = cg_base(&ty);
        if !matches!(base, "thread_block" | "grid_group" | "auto")
            && !base.starts_with("thread_block_tile")
        {
            return Ok(false);
        }
        let value = (decl.kind() == "init_declarator")
            .then(|| decl.child_by_field_name("value"))
            .flatten();
        let group = value.and_then(|v| self.group_of(v));
        let name = decl
            .child_by_field_name("declarator")
            .filter(|n| n.kind() == "identifier");
        match (group, name) {
            (Some(g), Some(n)) => {
                self.device_only(&ty, d)?;
                let want = match g {
                    Group::Block => "thread_block".to_string(),
                    Group::Grid => "grid_group".to_string(),
                    Group::Tile(n) => format!("thread_block_tile<{n}>"),
                };
                if base != "auto" && base.replace(' ', "") != want {
                    return err(d, format!("`{ty}` holds a `{want}`"));
                }
                let name = self.text(n).to_string();
                self.bind(&name, Binding::Group(g));
                Ok(true)
            }
            _ if base == "auto" => Ok(false),
            _ => err(
                decl,
                "expected `= cg::this_thread_block()`, `= cg::this_grid()` or `= cg::tiled_partition<N>(block)` with N a power of two up to 32 (other cooperative groups are not supported yet)",
            ),
        }
    }

    /// `cg::thread_block_tile<N> t = cg::tiled_partition<N>(b);`, which the grammar may read as
    /// the expression `cg::thread_block_tile < N > (t = ...)` (it cannot tell a template from
    /// a comparison without knowing the names): binds the tile; whether `e` was one.
    fn misparsed_tile_decl(&mut self, e: Node<'t>) -> R<bool> {
        let shape = || -> Option<(Node<'t>, Node<'t>, Node<'t>)> {
            if e.kind() != "binary_expression" || self.op(e) != ">" {
                return None;
            }
            let lt = e.child_by_field_name("left")?;
            if lt.kind() != "binary_expression" || self.op(lt) != "<" {
                return None;
            }
            let ty = lt.child_by_field_name("left")?;
            let n = lt.child_by_field_name("right")?;
            let assign = e.child_by_field_name("right")?;
            if cg_base(&self.word(ty)) != "thread_block_tile"
                || assign.kind() != "assignment_expression"
            {
                return None;
            }
            Some((n, field(assign, "left").ok()?, field(assign, "right").ok()?))
        };
        let Some((n, name, value)) = shape() else {
            return Ok(false);
        };
        self.device_only("thread_block_tile", e)?;
        let want = tile_size(&format!("<{}>", self.text(n)));
        match (self.group_of(value), want) {
            (Some(Group::Tile(k)), Some(w)) if k == w && name.kind() == "identifier" => {
                let var = self.text(name).to_string();
                self.bind(&var, Binding::Group(Group::Tile(k)));
                Ok(true)
            }
            _ => err(
                e,
                "expected `cg::thread_block_tile<N> t = cg::tiled_partition<N>(block);` with the same N, a power of two up to 32",
            ),
        }
    }

    /// The host's `void *args[] = {&a, &b};` for a cooperative launch; whether `decl` was one.
    fn arg_list_decl(&mut self, d: Node<'t>, decl: Node<'t>) -> R<bool> {
        let ty = d
            .child_by_field_name("type")
            .map(|t| self.word(t))
            .unwrap_or_default();
        if !self.host() || ty != "void" || decl.kind() != "init_declarator" {
            return Ok(false);
        }
        let Some(list) = decl
            .child_by_field_name("value")
            .filter(|v| v.kind() == "initializer_list")
        else {
            return Ok(false);
        };
        let target = field(decl, "declarator")?;
        if !self.text(target).contains('[') {
            return Ok(false);
        }
        let mut n = target;
        while n.kind() != "identifier" {
            n = match n.child_by_field_name("declarator") {
                Some(x) => x,
                None => return err(target, "expected `void *name[] = {&a, &b};`"),
            };
        }
        let mut c = list.walk();
        let elems: Vec<Node<'t>> = list
            .named_children(&mut c)
            .filter(|x| x.kind() != "comment")
            .collect();
        self.cx.arg_lists.push(elems);
        let name = self.text(n).to_string();
        self.bind(&name, Binding::ArgList(self.cx.arg_lists.len() - 1));
        Ok(true)
    }

    /// A cooperative group's member function: `sync()`, `thread_rank()`, `size()`.
    fn group_method(&mut self, g: Group, method: &str, e: Node<'t>) -> R<Operand> {
        let lin = |v: [Value; 3], d: [Value; 3]| v[0] + v[1] * d[0] + v[2] * d[0] * d[1];
        let block_size = self.dims.block_dim.iter().product::<Value>();
        let thread = lin(self.dims.thread, self.dims.block_dim);
        match (method, g) {
            ("sync", Group::Block) => {
                self.device_only("thread_block::sync", e)?;
                self.emit(
                    InstrKind::Barrier {
                        id: Operand::Imm(0),
                        kind: BarrierKind::Sync,
                        count: None, spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    e,
                );
                Ok(Operand::Imm(0))
            }
            ("sync", Group::Grid) => {
                self.device_only("grid_group::sync", e)?;
                self.grid_sync(e)?;
                Ok(Operand::Imm(0))
            }
            ("thread_rank", Group::Block) => Ok(Operand::Imm(thread)),
            ("thread_rank", Group::Grid) => Ok(Operand::Imm(
                lin(self.dims.block, self.dims.grid_dim) * block_size + thread,
            )),
            ("size" | "num_threads", Group::Block) => Ok(Operand::Imm(block_size)),
            ("size" | "num_threads", Group::Grid) => Ok(Operand::Imm(self.cx.launch_threads)),
            (_, Group::Tile(n)) => self.tile_method(n, thread, block_size, method, e),
            _ => err(
                e,
                format!("not supported: `{method}` of a cooperative group (sync, thread_rank, size and num_threads are)"),
            ),
        }
    }

    /// `this_grid().sync()`: every thread of the cooperative launch arrives with an acq_rel
    /// device-scope add on the launch's hidden counter, then waits (acquire) until the counter
    /// has reached this sync's generation (the launch's threads times the syncs so far). The
    /// last arrival's RMW chain carries every thread's writes before the sync to every thread
    /// after it: the ordering a grid barrier gives.
    fn grid_sync(&mut self, e: Node<'t>) -> R<()> {
        if !self.cx.launch_cooperative {
            return err(
                e,
                "`this_grid().sync()` needs a cooperative launch: launch the kernel with cudaLaunchCooperativeKernel (with <<<...>>> its blocks are not guaranteed to be resident together and CUDA leaves grid.sync() undefined)",
            );
        }
        let loc = match self.cx.grid_sync {
            Some(l) => l,
            None => {
                let name = format!("grid_sync#{}", self.cx.launches.len() + 1);
                let arr = self.cx.new_array(
                    &name,
                    1,
                    None,
                    IntType::U32,
                    MemorySpace::Global,
                    &[0],
                    Some(span_of(e)),
                    false,
                )?;
                let l = self.cx.arrays[arr].elems[0];
                self.cx.grid_sync = Some(l);
                l
            }
        };
        let gen = match self.grid_gen {
            Some(r) => r,
            None => {
                let r = self.new_reg("$grid_gen", IntType::U32);
                self.grid_gen = Some(r);
                r
            }
        };
        let addr = Address::loc(loc);
        self.emit(
            InstrKind::Rmw {
                dst: None,
                addr,
                kind: RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
                ty: IntType::U32,
                order: Order::AcqRel,
                scope: Scope::Gpu,
            },
            e,
        );
        self.emit(
            InstrKind::Binary {
                dst: gen,
                op: BinOp::Add,
                ty: IntType::U32,
                a: Operand::Reg(gen),
                b: Operand::Imm(self.cx.launch_threads),
            },
            e,
        );
        let top = self.new_label();
        self.set_label(top);
        let seen = self.temp(IntType::U32);
        self.emit(
            InstrKind::Load {
                dst: seen,
                addr,
                ty: IntType::U32,
                order: Order::Acquire,
                scope: Scope::Gpu,
            },
            e,
        );
        let short = self.temp(IntType::U32);
        self.emit(
            InstrKind::Binary {
                dst: short,
                op: BinOp::Lt,
                ty: IntType::U32,
                a: Operand::Reg(seen),
                b: Operand::Reg(gen),
            },
            e,
        );
        self.branch(BranchCond::Ne(Operand::Reg(short), Operand::Imm(0)), top, e);
        Ok(())
    }

    fn member(&mut self, e: Node<'t>, f: Node<'t>, hint: Option<RegId>) -> R<Operand> {
        let obj = field(f, "argument")?;
        let method = self.text(field(f, "field")?);
        if let Some(g) = self.group_of(obj) {
            return self.group_method(g, method, e);
        }
        if let Some(Binding::HostThread(i)) = (obj.kind() == "identifier")
            .then(|| self.lookup(self.text(obj)))
            .flatten()
        {
            self.thread_method(i, method, e)?;
            return Ok(Operand::Imm(0));
        }
        let arrow = self.op(f) == "->";
        let p = if arrow {
            self.pointer(obj)?
        } else {
            self.place(obj)?.ok_or_else(|| {
                CudaError::new(
                    span_of(obj),
                    "member functions are called on atomic objects: `x->load()` or `r.load()`",
                )
            })?
        };
        let Access::Atomic(scope) = p.access else {
            return err(obj, format!("`{method}` needs an atomic object (declare it `cuda::atomic<int, ...>` or bind a `cuda::atomic_ref`)"));
        };
        let scope = self.scope(scope, None);
        let addr = self.address(p, obj)?;
        let args = self.args(e)?;
        let order_at = |me: &Self, i: usize| -> R<Order> {
            match args.get(i) {
                Some(o) => me.order_arg(*o),
                None => Ok(Order::SeqCst),
            }
        };
        if let Some((_, op)) = RMW_MEMBERS.iter().find(|(n, _)| *n == method) {
            self.arity(method, &args, (1, 2), "value[, order]", e)?;
            if addr.1.float && !matches!(op, RmwOp::Add | RmwOp::Sub | RmwOp::Exch) {
                return err(e, format!("`{method}` on a floating-point atomic (only fetch_add, fetch_sub and exchange are)"));
            }
            let v = self.value_as(args[0], addr.1, None)?;
            let order = order_at(self, 1)?;
            return Ok(self.rmw(addr, RmwKind::Op(*op, v), order, scope, hint, e));
        }
        match method {
            "load" => {
                self.arity(method, &args, (0, 1), "[order]", e)?;
                let order = order_at(self, 0)?;
                self.check_order(order, true, false, e)?;
                Ok(self.load_ord(addr, order, scope, hint, e))
            }
            "store" => {
                self.arity(method, &args, (1, 2), "value[, order]", e)?;
                let v = self.value_as(args[0], addr.1, None)?;
                let order = order_at(self, 1)?;
                self.check_order(order, false, true, e)?;
                self.store_ord(addr, v, order, scope, e);
                Ok(Operand::Imm(0))
            }
            "compare_exchange_strong" | "compare_exchange_weak" => {
                self.arity(method, &args, (2, 4), "expected, desired[, order | success, failure]", e)?;
                let exp_name = self.text(args[0]);
                let Some(expected) = self.reg_of(exp_name, args[0])? else {
                    return err(args[0], "the expected value must be a local variable (it receives the current value on failure)");
                };
                let new = self.value(args[1], None)?;
                let order = order_at(self, 2)?;
                if let Some(fo) = args.get(3) {
                    self.order_arg(*fo)?;
                }
                Ok(self.compare_exchange(addr, expected, new, order, scope, hint, e))
            }
            _ => err(field(f, "field")?, format!("not supported: member function `{method}` (load, store, exchange, fetch_add/sub/and/or/xor/min/max, compare_exchange_strong/weak)")),
        }
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
mod depth;
mod float;
mod harness;
mod host_thread;
mod opencl;
mod warp;

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
