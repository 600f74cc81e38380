//! The syntax of a PTX module, as written: what the parser produces and the lowering reads.
//! Every item keeps its span in the module text; instructions also keep the source line
//! their `.loc` directive gives, so that diagnostics name the user's `.cu` line.

use scopecheck_ir::Span;

/// A whole `.ptx` module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// `.version 8.5`, as written.
    pub version: Option<String>,
    /// `.target sm_90` (the first target name).
    pub target: Option<String>,
    /// `.address_size 64`.
    pub address_size: Option<u32>,
    /// `.file 1 "kernel.cu"`: file number to name.
    pub files: Vec<(u32, String)>,
    /// Module-scope variables (`.global`, `.shared`, `.const`).
    pub variables: Vec<Variable>,
    /// `.entry` kernels and `.func` device functions, in order.
    pub functions: Vec<Function>,
}

/// A state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Param,
    Global,
    Shared,
    /// `.shared::cluster`: another CTA's shared memory in the cluster.
    SharedCluster,
    Const,
    Local,
    /// No state space written: the generic address space.
    Generic,
}

/// A scalar type suffix (`.u32`, `.b64`, `.s16`, `.pred`, `.f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `.b8` .. `.b64`: untyped bits.
    B(u8),
    /// `.u8` .. `.u64`.
    U(u8),
    /// `.s8` .. `.s64`.
    S(u8),
    /// `.f16`, `.f32`, `.f64` (parsed so that a clear error can name them at lowering).
    F(u8),
    Pred,
}

/// A variable declaration: module scope, or `.local`/`.shared` inside a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    pub space: StateSpace,
    /// `.extern` (e.g. `extern .shared .align 4 .b8 buf[];`).
    pub external: bool,
    /// `.visible` / `.weak` / `.common` linkage, without the dot (`"visible"`); irrelevant to
    /// the model, kept for messages.
    pub linkage: Option<String>,
    pub align: Option<u32>,
    pub ty: ScalarType,
    pub name: String,
    /// Array dimensions: `[16]` gives `Some(16)`, `[]` gives `None` in the list.
    pub dims: Vec<Option<u64>>,
    /// `= {1, 2}` or `= 5`: integer initial values, in order (a floating value as its bits;
    /// an address as 0, see `init_symbols`).
    pub init: Vec<i64>,
    /// The initial values that are addresses (`= generic(x)`, `= {f1, f2}`, `= x+4`), which
    /// NVRTC writes for pointer globals and function-pointer tables.
    pub init_symbols: Vec<SymbolInit>,
    pub span: Span,
}

/// An initial value that is the address of a variable or function, plus a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolInit {
    /// Its position in [`Variable::init`].
    pub index: usize,
    pub symbol: String,
    pub offset: i64,
    /// `generic(x)`: a generic address; plain `x`: the address in `x`'s own state space.
    pub generic: bool,
}

/// A `.param` of a kernel or a device function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub ty: ScalarType,
    pub name: String,
    /// `.ptr .global .align 8` annotations, when written.
    pub ptr_space: Option<StateSpace>,
    pub align: Option<u32>,
    /// `.param .align 8 .b8 p[16]` (a struct passed by value): its byte size.
    pub array: Option<u64>,
    pub span: Span,
}

/// A `.reg` declaration: `.reg .b32 %r<5>;` declares `%r0` .. `%r4`; `.reg .pred p, q;`
/// declares the names listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegDecl {
    pub ty: ScalarType,
    /// `(prefix, Some(n))` for `%r<n>`; `(name, None)` for a plain name.
    pub names: Vec<(String, Option<u32>)>,
    pub span: Span,
}

/// `.entry` (a kernel) or `.func` (a device function, called with `call`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub entry: bool,
    /// The name as written (mangled: `_Z7produceriPi`).
    pub name: String,
    /// A `.func`'s return parameters: `.func (.param .b32 ret) f(...)`.
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    /// Performance directives (`.maxntid 256, 1, 1`, `.reqntid`, `.minnctapersm`), as
    /// `(name, values)`, the name without the dot: `("maxntid", [256, 1, 1])`,
    /// `("explicitcluster", [])`.
    pub directives: Vec<(String, Vec<u64>)>,
    /// `None` for a declaration without a body (`.extern .func`).
    pub body: Option<Body>,
    pub span: Span,
}

/// A function body: declarations, then statements in order (labels, instructions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    pub regs: Vec<RegDecl>,
    /// `.local` / `.shared` variables declared in the body, and the `.param` buffers a call
    /// block declares (`.param .b64 param0;`, space [`StateSpace::Param`]).
    pub locals: Vec<Variable>,
    pub statements: Vec<Statement>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Statement {
    /// `$L__BB0_2:`
    Label(String, Span),
    Instruction(Instruction),
    /// A nested `{ ... }` block (NVRTC writes them around calls): its statements, its own
    /// register declarations.
    Block(Body),
}

/// One instruction: `@%p1 bra $L__BB0_2;`, `ld.global.acquire.gpu.u32 %r2, [%rd4+8];`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// `@%p` or `@!%p`: the predicate register and whether it is negated.
    pub guard: Option<(String, bool)>,
    /// The mnemonic before the first dot (`ld`).
    pub opcode: String,
    /// The dot-separated qualifiers after it, in order, without dots
    /// (`["global", "acquire", "gpu", "u32"]`). `::` stays inside a qualifier
    /// (`"shared::cta"`).
    pub modifiers: Vec<String>,
    /// In order. A destination pair `%r8|%p2` (`shfl`, `setp`) is two operands, the predicate
    /// right after the register: `shfl.sync.bfly.b32 %r8|%p2, %r8, 1, 31, -1` has six.
    pub operands: Vec<Operand>,
    pub span: Span,
    /// The source position the last `.loc` before it gave: (file number, line, column).
    pub loc: Option<(u32, u32, u32)>,
    /// Where the code `loc` names was inlined into the function being compiled: the `.loc`'s
    /// `inlined_at` chain (file number, line, column), from the innermost call to the
    /// outermost; empty for code not inlined. A reader picks the first position in its own
    /// file (a library header's code answers for the user's call of it).
    pub inlined_at: Vec<(u32, u32, u32)>,
}

/// An operand as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A register (`%r1`, `%rd4`, `%p1`) or a special register (`%tid.x`, `%laneid`): the
    /// name as written, dots included.
    Reg(String),
    /// An integer literal (decimal, `0x` hex, octal, `0b` binary; an `U` suffix is dropped).
    Int(i64),
    /// A floating literal, its bits: `0f3F800000` the 32 bits of an `f32`; `0d...` and a
    /// decimal literal (`1.5`, which PTX reads as a double) the 64 bits of an `f64`
    /// (`double`).
    Float { bits: u64, double: bool },
    /// A symbol: a label (`$L__BB0_2`), a variable or parameter name, a function name.
    Symbol(String),
    /// `[base+offset]`: the base is a register or a symbol (variable or parameter), or an
    /// `Int` for an absolute address (`[0x100]`).
    Address { base: Box<Operand>, offset: i64 },
    /// `[%rd10, {%r1, %r2}]`: the bracketed operand of the texture and surface instructions
    /// (`tex`, `tld4`, `suld`, `sust`): the texture or surface, perhaps a sampler, then the
    /// coordinates vector, in order.
    Texture(Vec<Operand>),
    /// `{%r1, %r2}`: a vector operand.
    Vector(Vec<Operand>),
    /// `!%p` as an operand (`setp ... %p|%q`, `selp` do not need it, but `and.pred` may).
    Not(Box<Operand>),
    /// `_`: a sink.
    Sink,
    /// `(%r1, %r2)`: the argument or return list of a `call`.
    List(Vec<Operand>),
}
