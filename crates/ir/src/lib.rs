//! The intermediate representation: the one vocabulary every scopecheck crate shares.
//!
//! A [`Program`] is a set of [`Thread`]s, each placed in the thread hierarchy
//! (system > GPU > cluster > CTA > warp > thread, or the host), a set of [`Location`]s with a
//! memory space and an initial value, per-thread straight-line [`Instr`] lists with explicit
//! branch targets, and a final [`Condition`]. Every instruction carries the [`Span`] of the source
//! text it came from so that any verdict can point back at the user's line.
//!
//! Front-ends (litmus parsers, the CUDA front-end) produce a `Program`; the explorer and the
//! models consume it. Nothing here knows about any particular memory model.

pub mod cursor;
pub mod diagnostic;
pub mod float;
pub mod ptx;
pub mod weaken;
pub use diagnostic::{Diagnostic, DiagnosticFields, Severity};
pub use float::{FloatCmp, FloatMode, FloatOp, Rounding};
use std::fmt;

/// A value held in a register or a memory location: an integer of some [`IntType`], held in
/// its canonical form (see [`IntType::wrap`]): a signed value sign-extended, an unsigned one
/// zero-extended, a `u64` above `i64::MAX` as the `i64` with the same bits. A float or a
/// double is its IEEE-754 bit pattern, zero-extended ([`float`]).
pub type Value = i64;

/// The type of a value, as the source states it: the width and signedness of an integer (C
/// `int` is 32-bit signed, `unsigned` 32-bit unsigned, `long long` 64-bit; PTX `.s32`, `.u32`,
/// `.b32` (untyped bits: unsigned here), `.u64`, `.b64` as written), or a floating type
/// (`float`/`.f32`, `double`/`.f64`: `float` set, `signed` clear, the value its bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntType {
    pub bits: u8,
    pub signed: bool,
    /// An IEEE-754 binary float of `bits` bits, held as its bit pattern ([`float`]).
    pub float: bool,
}

impl IntType {
    pub const S8: IntType = IntType::new(8, true);
    pub const U8: IntType = IntType::new(8, false);
    pub const S16: IntType = IntType::new(16, true);
    pub const U16: IntType = IntType::new(16, false);
    pub const S32: IntType = IntType::new(32, true);
    pub const U32: IntType = IntType::new(32, false);
    pub const S64: IntType = IntType::new(64, true);
    pub const U64: IntType = IntType::new(64, false);
    /// `float`, `.f32`: IEEE-754 binary32.
    pub const F32: IntType = IntType::float(32);
    /// `double`, `.f64`: IEEE-754 binary64.
    pub const F64: IntType = IntType::float(64);

    pub const fn new(bits: u8, signed: bool) -> Self {
        IntType {
            bits,
            signed,
            float: false,
        }
    }

    /// The floating type of `bits` bits.
    pub const fn float(bits: u8) -> Self {
        IntType {
            bits,
            signed: false,
            float: true,
        }
    }

    /// The unsigned integer type of the same width: what holds the bits of a float.
    pub const fn bits_type(self) -> Self {
        IntType::new(self.bits, self.signed && !self.float)
    }

    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        u64::from(self.bits) / 8
    }

    /// The canonical form of `v` in this type: its low `bits` bits, sign- or zero-extended.
    /// This is exactly how the hardware wraps: an `int` counter past `INT_MAX` becomes
    /// `INT_MIN`, an `unsigned` one past `2^32 - 1` becomes 0.
    pub fn wrap(self, v: Value) -> Value {
        if self.bits >= 64 {
            return v;
        }
        let shift = 64 - u32::from(self.bits);
        if self.signed {
            (v << shift) >> shift
        } else {
            ((v as u64) << shift >> shift) as i64
        }
    }

    /// Whether `v` (an exact mathematical result, as an `i128`) fits this type unchanged.
    pub fn holds(self, v: i128) -> bool {
        let (lo, hi) = self.range();
        (lo..=hi).contains(&v)
    }

    /// The smallest and largest value of the type.
    pub fn range(self) -> (i128, i128) {
        let b = u32::from(self.bits);
        if self.signed {
            (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
        } else {
            (0, (1i128 << b) - 1)
        }
    }

    /// The mathematical value of canonical `v` in this type (a `u64` above `i64::MAX` too).
    pub fn exact(self, v: Value) -> i128 {
        if !self.signed && self.bits == 64 {
            i128::from(v as u64)
        } else {
            i128::from(v)
        }
    }

    /// The value as a report prints it (a float as the number its bits encode).
    pub fn display(self, v: Value) -> String {
        if self.float {
            return float::display(self, v);
        }
        self.exact(v).to_string()
    }

    /// The PTX spelling (`s32`, `u64`, `f32`).
    pub fn ptx_name(self) -> String {
        let kind = if self.float {
            'f'
        } else if self.signed {
            's'
        } else {
            'u'
        };
        format!("{kind}{}", self.bits)
    }
}

impl fmt::Display for IntType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.float {
            return f.write_str(if self.bits == 32 { "float" } else { "double" });
        }
        let name = match (self.bits, self.signed) {
            (8, true) => "signed char",
            (8, false) => "unsigned char",
            (16, true) => "short",
            (16, false) => "unsigned short",
            (32, true) => "int",
            (32, false) => "unsigned int",
            (64, true) => "long long",
            (64, false) => "unsigned long long",
            _ => return write!(f, "{}-bit integer", self.bits),
        };
        f.write_str(name)
    }
}

/// A byte range in the source text, with the 1-based line and column of its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub offset: usize,
    pub len: usize,
    pub line: u32,
    pub column: u32,
}

/// The scope of a strong operation or fence: the set of threads it is morally strong with.
/// Ordered from narrowest to widest. The thread and the warp are scopes of the source languages
/// only (`thread_scope_thread`, OpenCL `memory_scope_work_item` / `sub_group`); PTX has neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The issuing thread alone.
    Thread,
    /// Threads of the same warp (OpenCL sub-group).
    Warp,
    /// Threads of the same CTA (block, work-group).
    Cta,
    /// Threads of the same cluster of CTAs.
    Cluster,
    /// Threads of the same GPU (device), across grids.
    Gpu,
    /// All threads of the system, host threads and peer GPUs included.
    Sys,
}

impl Scope {
    /// The scopes PTX has.
    pub const ALL: [Scope; 4] = [Scope::Cta, Scope::Cluster, Scope::Gpu, Scope::Sys];
}

/// The memory order of an access. `Weak` is a plain (non-atomic) access; the others are strong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Order {
    /// A plain access: non-atomic in the source languages, weak in PTX.
    Weak,
    /// A C `volatile` access: non-atomic for the language (it races), relaxed at system scope
    /// once compiled to PTX (`ld.volatile`).
    Volatile,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    /// Sequentially consistent access (C11 `seq_cst`); PTX has no SC access, only `fence.sc`.
    SeqCst,
}

impl Order {
    /// Strong in the PTX sense (everything but a weak access; volatile is relaxed at `.sys`).
    pub fn is_strong(self) -> bool {
        self != Order::Weak
    }
    /// Atomic in the source languages' sense.
    pub fn is_atomic(self) -> bool {
        !matches!(self, Order::Weak | Order::Volatile)
    }
    /// Whether an access with this order has acquire semantics on its read part.
    pub fn is_acquire(self) -> bool {
        matches!(self, Order::Acquire | Order::AcqRel | Order::SeqCst)
    }
    /// Whether an access with this order has release semantics on its write part.
    pub fn is_release(self) -> bool {
        matches!(self, Order::Release | Order::AcqRel | Order::SeqCst)
    }
}

/// The order of a fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceOrder {
    Acquire,
    Release,
    /// `fence.acq_rel`: the light-weight fence, enough for release and acquire patterns.
    AcqRel,
    /// `fence.sc`: also takes part in the Fence-SC order.
    Sc,
}

/// The memory spaces a fence orders: PTX fences order all of them; an OpenCL
/// `atomic_work_item_fence` orders those its flags name (`CLK_GLOBAL_MEM_FENCE`,
/// `CLK_LOCAL_MEM_FENCE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FenceSpaces {
    /// Global memory (and host and managed memory, which the device reaches the same way).
    pub global: bool,
    /// CTA shared memory (OpenCL local memory).
    pub shared: bool,
}

impl FenceSpaces {
    pub const ALL: FenceSpaces = FenceSpaces {
        global: true,
        shared: true,
    };

    /// Whether the fence orders accesses to a location in `space`.
    pub fn covers(self, space: MemorySpace) -> bool {
        match space {
            MemorySpace::Shared => self.shared,
            MemorySpace::Global
            | MemorySpace::HostMapped
            | MemorySpace::Managed
            | MemorySpace::HostPageable => self.global,
        }
    }
}

impl Default for FenceSpaces {
    fn default() -> Self {
        FenceSpaces::ALL
    }
}

/// The memory space a location lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemorySpace {
    /// Device global memory.
    #[default]
    Global,
    /// Per-CTA shared memory (`__shared__`, OpenCL `local`).
    Shared,
    /// Pinned host memory mapped into the device's address space.
    HostMapped,
    /// Unified (managed) memory.
    Managed,
    /// Ordinary pageable host memory.
    HostPageable,
}

/// Index of a location in [`Program::locations`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocId(pub u32);

/// Index of a thread in [`Program::threads`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadId(pub u32);

/// Index of a register in its thread's [`Thread::registers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegId(pub u32);

/// A shared memory location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub name: String,
    pub space: MemorySpace,
    /// The initial value, canonical in `ty`.
    pub init: Value,
    /// The type of the value it holds; every access to it has this width (accesses of another
    /// width would need a mixed-size model, which scopecheck does not have).
    pub ty: IntType,
    pub span: Option<Span>,
}

/// An allocation of more than one location: an array whose elements are the locations
/// `first`, `first + 1`, ... `first + len - 1`, laid out one after the other in memory. A
/// location in no array is an allocation of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub name: String,
    pub first: LocId,
    pub len: u32,
}

/// Where a device thread sits in the hierarchy. Two threads share a CTA when GPU, cluster and CTA
/// numbers all match; a thread without a warp number sits in a warp of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DevicePlacement {
    pub gpu: u32,
    /// Cluster number within the GPU. Tests that do not name clusters put each CTA in a cluster
    /// of its own, so that `.cluster` scope then means the same as `.cta`.
    pub cluster: u32,
    pub cta: u32,
    pub warp: Option<u32>,
}

/// Where a thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    Device(DevicePlacement),
    /// A CPU thread: only system scope includes it.
    Host,
}

impl Placement {
    /// Whether an operation by a thread placed at `self` with scope `scope` includes a thread
    /// placed at `other`. Host operations are always system scope.
    pub fn scope_includes(&self, scope: Scope, other: &Placement) -> bool {
        match (self, other) {
            (Placement::Device(a), Placement::Device(b)) => match scope {
                // Only ever asked about another thread, which the thread scope never includes.
                Scope::Thread => false,
                Scope::Warp => {
                    a.warp.is_some()
                        && a.warp == b.warp
                        && a.gpu == b.gpu
                        && a.cluster == b.cluster
                        && a.cta == b.cta
                }
                Scope::Sys => true,
                Scope::Gpu => a.gpu == b.gpu,
                Scope::Cluster => a.gpu == b.gpu && a.cluster == b.cluster,
                Scope::Cta => a.gpu == b.gpu && a.cluster == b.cluster && a.cta == b.cta,
            },
            (Placement::Host, _) | (_, Placement::Host) => scope == Scope::Sys,
        }
    }

    /// Whether two placements are in the same CTA (and so may share a CTA barrier).
    pub fn same_cta(&self, other: &Placement) -> bool {
        matches!((self, other), (Placement::Device(_), Placement::Device(_)))
            && self.scope_includes(Scope::Cta, other)
    }
}

/// A register or an immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(RegId),
    Imm(Value),
}

impl Operand {
    /// The value of an immediate.
    pub fn imm(self) -> Option<Value> {
        match self {
            Operand::Imm(v) => Some(v),
            Operand::Reg(_) => None,
        }
    }
}

/// A memory address, computed when the instruction runs. Leaving the allocation (an index out
/// of bounds, a pointer to no location, a misaligned pointer or one to a location of another
/// width) is a fault of the test at the instruction's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Address {
    /// A location the code names (`x`), or the element `index` places after it in its
    /// allocation (`a[i]`, `[x+r1]`: `index` holds a value read at run time, and the access
    /// depends on it).
    Loc { loc: LocId, index: Option<RegId> },
    /// The location at the byte address held in register `reg`, plus `disp` bytes (PTX
    /// `[%rd4+8]`; pointers are values: see [`Program::address_of`]).
    Ptr { reg: RegId, disp: Value },
}

impl Address {
    /// The address of location `loc` itself.
    pub const fn loc(loc: LocId) -> Self {
        Address::Loc { loc, index: None }
    }

    /// The location, when the address names it and computes nothing.
    pub fn fixed(&self) -> Option<LocId> {
        match *self {
            Address::Loc { loc, index: None } => Some(loc),
            _ => None,
        }
    }

    /// The location the code names: the location itself, or the element an index counts from
    /// (an array's elements share its memory space); `None` for a pointer.
    pub fn named_loc(&self) -> Option<LocId> {
        match *self {
            Address::Loc { loc, .. } => Some(loc),
            Address::Ptr { .. } => None,
        }
    }

    /// The register the address is computed from, if any.
    pub fn reg(&self) -> Option<RegId> {
        match *self {
            Address::Loc { index, .. } => index,
            Address::Ptr { reg, .. } => Some(reg),
        }
    }
}

/// Pointers: allocation `k` (in the order of its first location) starts at byte address
/// `(k + 1) * ALLOCATION_STRIDE`, so that no pointer arithmetic within any allocation scopecheck
/// can hold reaches another, and a null pointer (0) is no location's.
pub const ALLOCATION_STRIDE: u64 = 1 << 32;

/// The number of barriers of a CTA (PTX ISA, `barrier{.cta}`: "each CTA instance has sixteen
/// barriers numbered 0..15").
pub const BARRIER_IDS: u32 = 16;

/// Read-modify-write operations (`atom` / `red`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    Add,
    Sub,
    /// PTX `inc`: `old >= v ? 0 : old + 1`.
    Inc,
    /// PTX `dec`: `old == 0 || old > v ? v : old - 1`.
    Dec,
    Exch,
    And,
    Or,
    Xor,
    Min,
    Max,
}

impl RmwOp {
    /// Every operation with its PTX mnemonic (`atom.add`, `red.exch`, ...).
    pub const PTX_NAMES: [(&'static str, RmwOp); 10] = [
        ("add", RmwOp::Add),
        ("sub", RmwOp::Sub),
        ("inc", RmwOp::Inc),
        ("dec", RmwOp::Dec),
        ("exch", RmwOp::Exch),
        ("and", RmwOp::And),
        ("or", RmwOp::Or),
        ("xor", RmwOp::Xor),
        ("min", RmwOp::Min),
        ("max", RmwOp::Max),
    ];

    /// The operation a PTX mnemonic names.
    pub fn from_ptx(name: &str) -> Option<RmwOp> {
        Self::PTX_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
    }

    /// The value an RMW of type `ty` writes, given the value it read and its operand: computed
    /// in `ty` and wrapped to it, as the hardware's atomics do (an atomic add never overflows
    /// into undefined behaviour, in C++ either). `min`/`max` compare as `ty` is signed or not;
    /// `inc`/`dec` compare unsigned (PTX has them for `.u32` only).
    pub fn apply(self, ty: IntType, old: Value, v: Value) -> Value {
        if ty.float {
            return float::rmw(self, ty, old, v);
        }
        let (old, v) = (ty.wrap(old), ty.wrap(v));
        let (xo, xv) = (ty.exact(old), ty.exact(v));
        let out = match self {
            RmwOp::Add => old.wrapping_add(v),
            RmwOp::Sub => old.wrapping_sub(v),
            RmwOp::Inc => {
                if (xo as u128) >= (xv as u128) {
                    0
                } else {
                    old.wrapping_add(1)
                }
            }
            RmwOp::Dec => {
                if old == 0 || (xo as u128) > (xv as u128) {
                    v
                } else {
                    old.wrapping_sub(1)
                }
            }
            RmwOp::Exch => v,
            RmwOp::And => old & v,
            RmwOp::Or => old | v,
            RmwOp::Xor => old ^ v,
            RmwOp::Min => {
                if xo <= xv {
                    old
                } else {
                    v
                }
            }
            RmwOp::Max => {
                if xo >= xv {
                    old
                } else {
                    v
                }
            }
        };
        ty.wrap(out)
    }
}

/// The operation of an RMW instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwKind {
    /// Unconditional RMW with one operand.
    Op(RmwOp, Operand),
    /// Compare-and-swap: writes `new` only when the old value equals `expected`. A failed CAS is
    /// a read only.
    Cas { expected: Operand, new: Operand },
}

/// Register arithmetic in an [`IntType`]: the operands are taken as values of the type, the
/// result wraps to it. The comparisons give 1 or 0, comparing signed or unsigned as the type
/// is. Division and remainder truncate toward zero; `Shr` is arithmetic on a signed type and
/// logical on an unsigned one.
///
/// What has no defined value depends on the language ([`Arithmetic`]): division or remainder
/// by zero never has one; in C a shift by a negative amount or by the width or more, and a
/// signed `+ - * /` whose exact result the type cannot hold, are undefined behaviour; PTX
/// clamps shift amounts to the width and wraps signed results. The explorer reports the
/// undefined cases as faults of the test at their line ([`BinOp::eval`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Eq,
    Ne,
    Lt,
    Le,
    /// Bit operations of `a` alone (`b` is unused), over the type's width: the number of set
    /// bits (`popc`, `__popc`), of leading zeros (`clz`, `__clz`), the bits reversed (`brev`,
    /// `__brev`), and the position of the most significant bit that differs from the sign
    /// (`bfind`: all bits set when there is none), or that position counted from the top
    /// (`bfind.shiftamt`).
    Popc,
    Clz,
    Brev,
    Bfind,
    BfindShift,
    /// A floating-point operation in `ty` (a float type), with its modifiers ([`float`]).
    Float(FloatOp, FloatMode),
    /// The conversion of `a` from type `from` to `ty` (`b` is unused): between floats and
    /// integers and between float widths, rounded by the mode; `integral` rounds to an
    /// integral value first (PTX `cvt.rzi.f32.f32`). See [`float::convert`].
    Cvt {
        from: IntType,
        mode: FloatMode,
        integral: bool,
    },
    /// No value: the thread faults here (CUDA `__trap()`, PTX `trap`, which abort the kernel
    /// with an error). `a` and `b` are unused.
    Trap,
}

/// Whose rules decide the undefined cases of [`BinOp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    /// C and C++: signed overflow and over-wide shifts are undefined behaviour.
    C,
    /// PTX: signed arithmetic wraps, shift amounts are clamped to the width.
    Ptx,
}

impl BinOp {
    /// `a op b` in type `ty`, or why it has no defined value.
    pub fn eval(
        self,
        ty: IntType,
        rules: Arithmetic,
        a: Value,
        b: Value,
    ) -> Result<Value, &'static str> {
        if let Some(r) = self.eval_float(ty, rules, a, b) {
            return r;
        }
        let (a, b) = (ty.wrap(a), ty.wrap(b));
        let (xa, xb) = (ty.exact(a), ty.exact(b));
        let width = i128::from(ty.bits);
        let checked = |exact: i128| {
            if rules == Arithmetic::C && ty.signed && !ty.holds(exact) {
                Err("signed integer overflow (undefined behaviour in C)")
            } else {
                Ok(ty.wrap(exact as i64))
            }
        };
        match self {
            // Taken by `eval_float` above.
            BinOp::Float(..) | BinOp::Cvt { .. } | BinOp::Trap => {
                Err("a floating-point operation on integers")
            }
            BinOp::Add => checked(xa + xb),
            BinOp::Sub => checked(xa - xb),
            BinOp::Mul => checked(xa.wrapping_mul(xb)),
            BinOp::Div | BinOp::Rem if xb == 0 => Err(if self == BinOp::Div {
                "division by zero"
            } else {
                "remainder by zero"
            }),
            BinOp::Div => checked(xa / xb),
            BinOp::Rem => checked(xa % xb),
            BinOp::Shl | BinOp::Shr => {
                // PTX reads the shift amount as unsigned and clamps it to the width.
                let amount = match rules {
                    Arithmetic::C if !(0..width).contains(&xb) => {
                        return Err(
                            "shift by a negative amount or by the width or more (undefined behaviour in C)",
                        )
                    }
                    Arithmetic::C => xb,
                    Arithmetic::Ptx => i128::from(b as u64).min(width),
                };
                if self == BinOp::Shr {
                    // Arithmetic on signed values (sign fill), logical on unsigned ones.
                    let shifted = if amount >= width {
                        if xa < 0 {
                            -1
                        } else {
                            0
                        }
                    } else {
                        xa >> amount
                    };
                    return Ok(ty.wrap(shifted as i64));
                }
                if amount >= width {
                    return Ok(0);
                }
                if rules == Arithmetic::C && ty.signed {
                    // C: shifting a negative value, or a 1 into or past the sign bit, is undefined.
                    if xa < 0 || !ty.holds(xa << amount) {
                        return Err("left shift of a signed value past its range (undefined behaviour in C)");
                    }
                }
                Ok(ty.wrap(((xa as u128) << amount) as i64))
            }
            BinOp::And => Ok(ty.wrap(a & b)),
            BinOp::Or => Ok(ty.wrap(a | b)),
            BinOp::Xor => Ok(ty.wrap(a ^ b)),
            BinOp::Eq => Ok(Value::from(xa == xb)),
            BinOp::Ne => Ok(Value::from(xa != xb)),
            BinOp::Lt => Ok(Value::from(xa < xb)),
            BinOp::Le => Ok(Value::from(xa <= xb)),
            BinOp::Popc | BinOp::Clz | BinOp::Brev | BinOp::Bfind | BinOp::BfindShift => {
                let bits = u32::from(ty.bits);
                let mask = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                let u = a as u64 & mask;
                Ok(match self {
                    BinOp::Popc => Value::from(u.count_ones()),
                    BinOp::Clz => Value::from(u.leading_zeros() - (64 - bits)),
                    BinOp::Brev => ty.wrap((u.reverse_bits() >> (64 - bits)) as i64),
                    _ => {
                        // A negative signed value: the most significant 0 bit.
                        let v = if ty.signed && xa < 0 { !u & mask } else { u };
                        match (v != 0, self == BinOp::BfindShift) {
                            (false, _) => ty.wrap(0xffff_ffff),
                            (true, false) => Value::from(63 - v.leading_zeros()),
                            (true, true) => Value::from(bits - 1 - (63 - v.leading_zeros())),
                        }
                    }
                })
            }
        }
    }

    /// The floating-point operations: [`BinOp::Float`], [`BinOp::Cvt`], and the arithmetic
    /// and comparisons of a float type (C's `+ - * /` and `== != < <=` on floats: `!=` is true
    /// when an operand is NaN, the others false). `None` for integer arithmetic.
    fn eval_float(
        self,
        ty: IntType,
        rules: Arithmetic,
        a: Value,
        b: Value,
    ) -> Option<Result<Value, &'static str>> {
        let plain = FloatMode::default();
        let op = match self {
            BinOp::Trap => return Some(Err("a trap (`__trap()`, `trap`): the kernel aborts here")),
            BinOp::Float(op, mode) => return Some(float::eval(op, mode, ty, a, b)),
            BinOp::Cvt {
                from,
                mode,
                integral,
            } => return Some(float::convert(from, ty, mode, integral, rules, a)),
            _ if !ty.float => return None,
            BinOp::Add => FloatOp::Add,
            BinOp::Sub => FloatOp::Sub,
            BinOp::Mul => FloatOp::Mul,
            BinOp::Div => FloatOp::Div,
            BinOp::Eq => FloatOp::Cmp(FloatCmp::Eq),
            BinOp::Ne => FloatOp::Cmp(FloatCmp::Neu),
            BinOp::Lt => FloatOp::Cmp(FloatCmp::Lt),
            BinOp::Le => FloatOp::Cmp(FloatCmp::Le),
            _ => return Some(Err("an integer operation on a floating value")),
        };
        Some(float::eval(op, plain, ty, a, b))
    }

    /// Whether the operation can have no defined value for some operands (so an operand not
    /// known yet must be waited for before it is applied).
    pub fn can_be_undefined(self, ty: IntType, rules: Arithmetic) -> bool {
        if let BinOp::Cvt { from, mode, .. } = self {
            // C: a float converted to an integer type that cannot hold it (unless it
            // saturates, as CUDA's `__float2int_rn` and PTX's `cvt` do).
            return rules == Arithmetic::C && from.float && !ty.float && !mode.sat;
        }
        if self == BinOp::Trap {
            return true;
        }
        if ty.float || matches!(self, BinOp::Float(..)) {
            return false;
        }
        match self {
            BinOp::Div | BinOp::Rem => true,
            BinOp::Add | BinOp::Sub | BinOp::Mul => rules == Arithmetic::C && ty.signed,
            BinOp::Shl | BinOp::Shr => rules == Arithmetic::C,
            _ => false,
        }
    }
}

/// The comparison of a conditional branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BranchCond {
    Always,
    Eq(Operand, Operand),
    Ne(Operand, Operand),
}

/// What a barrier instruction does at its barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// `bar.sync`: arrive, then wait for the others.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
    /// `bar.red.OP`: arrive with a predicate, wait, and receive the reduction into `dst`.
    Red {
        op: BarrierRedOp,
        dst: RegId,
        pred: Operand,
    },
}

/// The reduction of `bar.red`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierRedOp {
    /// Number of threads whose predicate is non-zero.
    Popc,
    /// 1 when every predicate is non-zero.
    And,
    /// 1 when some predicate is non-zero.
    Or,
}

impl BarrierRedOp {
    /// The reduction of a round's predicates (`None`: a thread that contributed none, false).
    pub fn reduce(self, preds: impl Iterator<Item = Option<Value>>) -> Value {
        let mut preds = preds.map(|p| p.unwrap_or(0) != 0);
        match self {
            BarrierRedOp::Popc => preds.filter(|p| *p).count() as Value,
            BarrierRedOp::And => Value::from(preds.all(|p| p)),
            BarrierRedOp::Or => Value::from(preds.any(|p| p)),
        }
    }
}

/// What a warp collective does ([`InstrKind::Warp`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpOp {
    /// `__syncwarp` / `bar.warp.sync`: a barrier of the named lanes that also orders memory
    /// among them (the PTX ISA: "guarantees memory ordering among threads participating").
    Sync,
    /// `shfl.sync.MODE`: `dst` receives the `value` of the source lane that `lane` (the ISA's
    /// `b`) and `clamp` (its `c`: clamp in bits 0-4, segment mask in bits 8-12) select from
    /// this thread's lane; `pred_dst` whether that lane was in range (else its own value).
    Shfl {
        mode: ShflMode,
        lane: Operand,
        clamp: Operand,
    },
    /// `vote.sync.MODE` on the predicate `value` (non-zero is true).
    Vote(VoteOp),
    /// `activemask.b32` / `__activemask()`: `dst` receives the mask of the lanes that execute
    /// this instruction together with this thread (its own lane among them). Under independent
    /// thread scheduling which lanes run converged is the scheduler's choice (CUDA C++
    /// Programming Guide, "Warp Vote Functions": threads convergent at `__activemask()` are
    /// not guaranteed to stay so); lanes that report each other report the same mask. `mask`
    /// and `value` are unused (immediates).
    ActiveMask,
}

/// How `shfl.sync` computes its source lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShflMode {
    /// `b` names the lane (within the segment).
    Idx,
    /// Lane minus `b`.
    Up,
    /// Lane plus `b`.
    Down,
    /// Lane xor `b` (butterfly).
    Bfly,
}

/// What `vote.sync` computes over the predicates of the lanes that meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteOp {
    /// The mask of the lanes whose predicate is true.
    Ballot,
    /// 1 when some predicate is true.
    Any,
    /// 1 when every predicate is true.
    All,
    /// 1 when the predicates are all equal.
    Uni,
}

impl ShflMode {
    /// The source lane of `shfl.sync` for a thread at `lane` with operands `b` and `c`, as the
    /// PTX ISA defines it, and whether it is in range (when it is not, the thread's own lane).
    pub fn source_lane(self, lane: u32, b: Value, c: Value) -> (u32, bool) {
        let (b, c) = (b as u32 & 0x1f, c as u32);
        let clamp = c & 0x1f;
        let seg = (c >> 8) & 0x1f;
        let max_lane = (lane & seg) | (clamp & !seg);
        let min_lane = lane & seg;
        let (j, ok) = match self {
            ShflMode::Up => {
                let j = lane as i64 - b as i64;
                (j, j >= max_lane as i64)
            }
            ShflMode::Down => {
                let j = (lane + b) as i64;
                (j, j <= max_lane as i64)
            }
            ShflMode::Bfly => {
                let j = (lane ^ b) as i64;
                (j, j <= max_lane as i64)
            }
            ShflMode::Idx => {
                let j = (min_lane | (b & !seg)) as i64;
                (j, j <= max_lane as i64)
            }
        };
        if ok {
            (j as u32, true)
        } else {
            (lane, false)
        }
    }
}

/// One instruction of a thread. The exhaustive list of what a thread can do: every consumer
/// matches on it, so adding a kind shows every place that must handle it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstrKind {
    /// A load of type `ty`, the width of the location it reads.
    Load {
        dst: RegId,
        addr: Address,
        ty: IntType,
        order: Order,
        scope: Scope,
    },
    /// A store of `value` as type `ty`, the width of the location it writes.
    Store {
        addr: Address,
        value: Operand,
        ty: IntType,
        order: Order,
        scope: Scope,
    },
    /// `atom` (with `dst`) or `red` (without).
    Rmw {
        dst: Option<RegId>,
        addr: Address,
        kind: RmwKind,
        /// The type the operation computes in, the width of the location.
        ty: IntType,
        order: Order,
        scope: Scope,
    },
    Fence {
        order: FenceOrder,
        scope: Scope,
        spaces: FenceSpaces,
    },
    /// A CTA barrier (`bar{.cta}`, `barrier{.cta}`): one of the CTA's [`BARRIER_IDS`] barriers,
    /// named by `id`. `count` is the number of threads each round of it holds; `None` means
    /// every thread of the test in the CTA. Both are immediates or registers; a value out of
    /// range when it runs is a fault of the test.
    Barrier {
        id: Operand,
        kind: BarrierKind,
        count: Option<Operand>,
        /// The memory whose accesses the barrier orders between the threads of a round: all
        /// of it for PTX and CUDA barriers; for OpenCL's `work_group_barrier(flags)` the
        /// regions its flags name (its entry and exit fences carry them, API specification
        /// "Work-group Functions").
        spaces: FenceSpaces,
    },
    /// A warp collective: the threads of this thread's warp whose lanes `mask` names (its own
    /// lane among them; [`Program::lane`]) meet here, each at its collective of the same kind and
    /// mask, and those that finished without are left out. Each contributes `value`; `dst` and
    /// `pred_dst` receive what [`WarpOp`] says.
    Warp {
        op: WarpOp,
        mask: Operand,
        value: Operand,
        dst: Option<RegId>,
        pred_dst: Option<RegId>,
    },
    Mov {
        dst: RegId,
        src: Operand,
    },
    Binary {
        dst: RegId,
        op: BinOp,
        ty: IntType,
        a: Operand,
        b: Operand,
    },
    /// `a * b + c` in float type `ty`, rounded once (PTX `fma.rn`, CUDA `fmaf`/`fma`).
    Fma {
        dst: RegId,
        ty: IntType,
        mode: FloatMode,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    /// Jump to instruction index `target` (which may equal the code length: the end) when
    /// `cond` holds.
    Branch {
        cond: BranchCond,
        target: usize,
    },
}

impl InstrKind {
    /// The registers the instruction reads: operands, address registers, barrier and warp
    /// operands, branch operands.
    pub fn read_registers(&self) -> Vec<RegId> {
        let mut v = Vec::new();
        let mut op = |o: &Operand| {
            if let Operand::Reg(r) = o {
                v.push(*r);
            }
        };
        match self {
            InstrKind::Load { addr, .. } => {
                if let Some(r) = addr.reg() {
                    op(&Operand::Reg(r));
                }
            }
            InstrKind::Store { addr, value, .. } => {
                op(value);
                if let Some(r) = addr.reg() {
                    op(&Operand::Reg(r));
                }
            }
            InstrKind::Rmw { addr, kind, .. } => {
                match kind {
                    RmwKind::Op(_, x) => op(x),
                    RmwKind::Cas { expected, new } => {
                        op(expected);
                        op(new);
                    }
                }
                if let Some(r) = addr.reg() {
                    op(&Operand::Reg(r));
                }
            }
            InstrKind::Mov { src, .. } => op(src),
            InstrKind::Binary { a, b, .. } => {
                op(a);
                op(b);
            }
            InstrKind::Fma { a, b, c, .. } => {
                op(a);
                op(b);
                op(c);
            }
            InstrKind::Branch {
                cond: BranchCond::Eq(a, b) | BranchCond::Ne(a, b),
                ..
            } => {
                op(a);
                op(b);
            }
            InstrKind::Barrier {
                id, kind, count, ..
            } => {
                op(id);
                if let Some(c) = count {
                    op(c);
                }
                if let BarrierKind::Red { pred, .. } = kind {
                    op(pred);
                }
            }
            InstrKind::Warp {
                op: wop,
                mask,
                value,
                ..
            } => {
                op(mask);
                op(value);
                if let WarpOp::Shfl { lane, clamp, .. } = wop {
                    op(lane);
                    op(clamp);
                }
            }
            InstrKind::Branch { .. } | InstrKind::Fence { .. } => {}
        }
        v
    }

    /// The registers the instruction writes (a warp shuffle may write two).
    pub fn written_registers(&self) -> impl Iterator<Item = RegId> {
        let (a, b) = match self {
            InstrKind::Load { dst, .. }
            | InstrKind::Mov { dst, .. }
            | InstrKind::Binary { dst, .. }
            | InstrKind::Fma { dst, .. } => (Some(*dst), None),
            InstrKind::Rmw { dst, .. } => (*dst, None),
            InstrKind::Warp { dst, pred_dst, .. } => (*dst, *pred_dst),
            InstrKind::Barrier {
                kind: BarrierKind::Red { dst, .. },
                ..
            } => (Some(*dst), None),
            InstrKind::Store { .. }
            | InstrKind::Fence { .. }
            | InstrKind::Barrier { .. }
            | InstrKind::Branch { .. } => (None, None),
        };
        a.into_iter().chain(b)
    }

    /// The address of a memory access (load, store, RMW).
    pub fn address(&self) -> Option<&Address> {
        match self {
            InstrKind::Load { addr, .. }
            | InstrKind::Store { addr, .. }
            | InstrKind::Rmw { addr, .. } => Some(addr),
            _ => None,
        }
    }

    /// The location a memory access's code names ([`Address::named_loc`]).
    pub fn named_loc(&self) -> Option<LocId> {
        self.address().and_then(Address::named_loc)
    }
}

/// An instruction with its source span and the source text it was written as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    pub kind: InstrKind,
    pub span: Span,
    pub text: String,
}

impl Instr {
    /// The instructions that may run after this one, at index `pc` of its thread: the next
    /// one, a branch's target, or both (a target may be the code's length: the end).
    pub fn successors(&self, pc: usize) -> Vec<usize> {
        match self.kind {
            InstrKind::Branch {
                cond: BranchCond::Always,
                target,
            } => vec![target],
            InstrKind::Branch { target, .. } => vec![pc + 1, target],
            _ => vec![pc + 1],
        }
    }
}

/// One thread of the test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// The name as written (`P0`).
    pub name: String,
    pub placement: Placement,
    pub span: Option<Span>,
    /// Register names; a [`RegId`] indexes this list.
    pub registers: Vec<String>,
    /// Initial register values; registers not listed start at 0.
    pub init_regs: Vec<(RegId, Value)>,
    pub code: Vec<Instr>,
    /// Threads that must finish before this one starts, with everything they did visible to it:
    /// a kernel launched after another on the same stream, host code after a synchronization.
    /// Empty for litmus threads, which all run at once.
    pub after: Vec<ThreadId>,
}

impl Thread {
    pub fn reg(&self, name: &str) -> Option<RegId> {
        self.registers
            .iter()
            .position(|r| r == name)
            .map(|i| RegId(i as u32))
    }
}

/// Something whose final value a condition can test or a report can print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Observable {
    Reg(ThreadId, RegId),
    Loc(LocId),
}

/// A term of a condition atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    Observable(Observable),
    Const(Value),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
}

/// A proposition over the final state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prop {
    True,
    False,
    Cmp(Term, CmpOp, Term),
    Not(Box<Prop>),
    And(Box<Prop>, Box<Prop>),
    Or(Box<Prop>, Box<Prop>),
}

/// The longest `/\` or `\/` chain [`Prop::chain`] nests to the left as written.
pub const MAX_LEFT_CHAIN: usize = 64;

impl Prop {
    /// The conjunction (`and`) or disjunction of `parts`, in order; `None` when there are
    /// none. Up to [`MAX_LEFT_CHAIN`] parts nest to the left as written (`a /\ b /\ c` is
    /// `(a /\ b) /\ c`); a longer chain is a balanced tree of the same parts in the same
    /// order: it means the same and prints the same (the connective is associative and
    /// evaluation has no effects), but is log2(n) deep instead of n, so that the recursive
    /// walks over propositions (evaluation, printing, dropping) stay shallow for a condition
    /// of 100,000 terms.
    pub fn chain(parts: Vec<Prop>, and: bool) -> Option<Prop> {
        let join = if and { Prop::And } else { Prop::Or };
        if parts.len() > MAX_LEFT_CHAIN {
            return Some(balanced(parts, join));
        }
        let mut parts = parts.into_iter();
        let first = parts.next()?;
        Some(parts.fold(first, |l, r| join(Box::new(l), Box::new(r))))
    }

    /// Evaluates the proposition; `value` gives the final value of each observable.
    pub fn eval(&self, value: &dyn Fn(Observable) -> Value) -> bool {
        let term = |t: &Term| match t {
            Term::Observable(o) => value(*o),
            Term::Const(c) => *c,
        };
        match self {
            Prop::True => true,
            Prop::False => false,
            Prop::Cmp(a, CmpOp::Eq, b) => term(a) == term(b),
            Prop::Cmp(a, CmpOp::Ne, b) => term(a) != term(b),
            Prop::Not(p) => !p.eval(value),
            Prop::And(a, b) => a.eval(value) && b.eval(value),
            Prop::Or(a, b) => a.eval(value) || b.eval(value),
        }
    }

    /// The observables the proposition mentions, in order of first mention.
    pub fn observables(&self, out: &mut Vec<Observable>) {
        let mut term = |t: &Term| {
            if let Term::Observable(o) = t {
                if !out.contains(o) {
                    out.push(*o);
                }
            }
        };
        match self {
            Prop::True | Prop::False => {}
            Prop::Cmp(a, _, b) => {
                term(a);
                term(b);
            }
            Prop::Not(p) => p.observables(out),
            Prop::And(a, b) | Prop::Or(a, b) => {
                a.observables(out);
                b.observables(out);
            }
        }
    }
}

/// `parts` (at least one) joined by `join` as a balanced tree, the first half on the left.
fn balanced(mut parts: Vec<Prop>, join: fn(Box<Prop>, Box<Prop>) -> Prop) -> Prop {
    if parts.len() <= 1 {
        return parts.pop().unwrap_or(Prop::True);
    }
    let right = parts.split_off(parts.len().div_ceil(2));
    join(
        Box::new(balanced(parts, join)),
        Box::new(balanced(right, join)),
    )
}

/// The quantifier of the final condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantifier {
    /// `exists P`: Ok when some execution satisfies P.
    Exists,
    /// `~exists P`: Ok when no execution satisfies P.
    NotExists,
    /// `forall P`: Ok when every execution satisfies P.
    Forall,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub prop: Prop,
    pub span: Option<Span>,
}

/// The source dialect a program was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    Ptx,
    /// C or CUDA C++ with scoped atomics (libcu++).
    C,
    /// OpenCL C 2.0: C11 atomics with scopes, whose orders apply to one memory region (global
    /// or local) at a time. Judged by the scoped C11 model like `C`, with OpenCL's region and
    /// scope-inclusion rules.
    OpenCl,
}

impl Arch {
    /// C, CUDA C++ or OpenCL C: a dialect judged by the scoped C11 model.
    pub fn is_c(self) -> bool {
        matches!(self, Arch::C | Arch::OpenCl)
    }
}

/// A whole test: threads, locations, condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub arch: Arch,
    pub name: String,
    pub description: Option<String>,
    pub locations: Vec<Location>,
    /// The allocations of more than one location, by first location.
    pub arrays: Vec<Array>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
    /// Extra observables listed by a `locations [...]` line, printed with the final states.
    pub extra_observables: Vec<Observable>,
}

/// Why an address computed at run time names no location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressFault(pub String);

impl Program {
    /// Whether two device threads share a warp (a thread without a warp number is alone in one).
    fn same_warp(&self, a: ThreadId, b: ThreadId) -> bool {
        let p = |t: ThreadId| self.threads[t.0 as usize].placement;
        a == b || (p(a).scope_includes(Scope::Warp, &p(b)) && p(b).same_cta(&p(a)))
    }

    /// The lane of thread `t` in its warp: its rank among the program's threads of that warp,
    /// in thread order (the front-ends create a warp's threads lane by lane). A thread in no
    /// warp is lane 0 of a warp of its own; a host thread has none.
    pub fn lane(&self, t: ThreadId) -> Option<u32> {
        if self.threads[t.0 as usize].placement == Placement::Host {
            return None;
        }
        Some((0..t.0).filter(|&u| self.same_warp(ThreadId(u), t)).count() as u32)
    }

    /// The threads of `t`'s warp whose lanes `mask` names, in lane order.
    pub fn warp_members(&self, t: ThreadId, mask: u32) -> Vec<ThreadId> {
        (0..self.threads.len() as u32)
            .map(ThreadId)
            .filter(|&u| self.same_warp(u, t))
            .enumerate()
            .filter(|&(lane, _)| lane < 32 && mask & (1 << lane) != 0)
            .map(|(_, u)| u)
            .collect()
    }

    /// Whose rules decide undefined arithmetic in this program.
    pub fn arithmetic(&self) -> Arithmetic {
        match self.arch {
            Arch::C | Arch::OpenCl => Arithmetic::C,
            Arch::Ptx => Arithmetic::Ptx,
        }
    }

    /// The array `loc` is an element of, if any.
    pub fn array_of(&self, loc: LocId) -> Option<&Array> {
        self.arrays
            .iter()
            .find(|a| (a.first.0..a.first.0.saturating_add(a.len)).contains(&loc.0))
    }

    /// The allocation `loc` belongs to: its first location and its length.
    pub fn allocation_of(&self, loc: LocId) -> (LocId, u32) {
        self.array_of(loc).map_or((loc, 1), |a| (a.first, a.len))
    }

    /// The name of the allocation `loc` belongs to.
    fn allocation_name(&self, loc: LocId) -> &str {
        match self.array_of(loc) {
            Some(a) => &a.name,
            None => &self.location(loc).name,
        }
    }

    /// The number of the allocation `loc` belongs to, counting allocations in the order of
    /// their first locations.
    fn allocation_number(&self, loc: LocId) -> u64 {
        let (first, _) = self.allocation_of(loc);
        (0..first.0)
            .filter(|&l| self.allocation_of(LocId(l)).0 == LocId(l))
            .count() as u64
    }

    /// The byte address of location `loc`: the value of a pointer to it.
    pub fn address_of(&self, loc: LocId) -> Value {
        let (first, _) = self.allocation_of(loc);
        let bytes = self.location(loc).ty.bytes();
        let base = (self.allocation_number(loc) + 1) * ALLOCATION_STRIDE;
        (base + u64::from(loc.0 - first.0) * bytes) as Value
    }

    /// The element `index` places after `loc` in its allocation (`a[i]`).
    pub fn element(&self, loc: LocId, index: Value) -> Result<LocId, AddressFault> {
        let (first, len) = self.allocation_of(loc);
        let at = i128::from(loc.0 - first.0) + i128::from(index);
        if (0..i128::from(len)).contains(&at) {
            return Ok(LocId(first.0 + at as u32));
        }
        let name = self.allocation_name(loc);
        Err(AddressFault(if len == 1 {
            format!("index {index} leaves `{name}`, which holds one value")
        } else {
            format!("index {at} is out of bounds of `{name}` ({len} elements)")
        }))
    }

    /// The location a pointer value names, for an access of type `ty`.
    pub fn resolve(&self, addr: Value, ty: IntType) -> Result<LocId, AddressFault> {
        let a = addr as u64;
        let number = (a / ALLOCATION_STRIDE).checked_sub(1);
        let offset = a % ALLOCATION_STRIDE;
        let mut k = 0;
        let mut l = 0;
        while (l as usize) < self.locations.len() {
            let (first, len) = self.allocation_of(LocId(l));
            if Some(k) == number {
                let elem = self.location(first).ty;
                let name = self.allocation_name(first);
                if elem.bytes() != ty.bytes() {
                    return Err(AddressFault(format!(
                        "a {}-byte access to `{name}`, whose elements are {} bytes (mixed-size accesses are not supported)",
                        ty.bytes(),
                        elem.bytes()
                    )));
                }
                if !offset.is_multiple_of(elem.bytes()) {
                    return Err(AddressFault(format!(
                        "address {addr:#x} is misaligned in `{name}`"
                    )));
                }
                let i = offset / elem.bytes();
                if i >= u64::from(len) {
                    return Err(AddressFault(format!(
                        "address {addr:#x} is out of bounds of `{name}` (byte {offset} of {})",
                        u64::from(len) * elem.bytes()
                    )));
                }
                return Ok(LocId(first.0 + i as u32));
            }
            k += 1;
            l = first.0 + len;
        }
        Err(AddressFault(if addr == 0 {
            "a null pointer is dereferenced".to_string()
        } else {
            format!("address {addr:#x} is no location's")
        }))
    }

    /// Every location an access through `addr` may touch, for static analyses.
    pub fn possible_locations(&self, addr: &Address) -> Vec<LocId> {
        match *addr {
            Address::Loc { loc, index: None } => vec![loc],
            Address::Loc {
                loc,
                index: Some(_),
            } => {
                let (first, len) = self.allocation_of(loc);
                (first.0..first.0 + len).map(LocId).collect()
            }
            Address::Ptr { .. } => (0..self.locations.len() as u32).map(LocId).collect(),
        }
    }

    pub fn loc(&self, name: &str) -> Option<LocId> {
        self.locations
            .iter()
            .position(|l| l.name == name)
            .map(|i| LocId(i as u32))
    }

    pub fn location(&self, id: LocId) -> &Location {
        &self.locations[id.0 as usize]
    }

    pub fn thread(&self, id: ThreadId) -> &Thread {
        &self.threads[id.0 as usize]
    }

    /// The observables a report prints: those the condition mentions, then the `locations` line.
    pub fn observables(&self) -> Vec<Observable> {
        let mut out = Vec::new();
        self.condition.prop.observables(&mut out);
        for o in &self.extra_observables {
            if !out.contains(o) {
                out.push(*o);
            }
        }
        out
    }

    /// A final value of an observable as a report prints it: a location's in its type (a
    /// `u64` above `i64::MAX` as itself), a register's as held.
    pub fn observable_display(&self, o: Observable, v: Value) -> String {
        match o {
            Observable::Loc(l) => self.location(l).ty.display(v),
            Observable::Reg(..) => v.to_string(),
        }
    }

    /// The name of an observable as conditions write it: `P1:r0` or `x`.
    pub fn observable_name(&self, o: Observable) -> String {
        match o {
            Observable::Reg(t, r) => {
                let th = self.thread(t);
                format!("{}:{}", th.name, th.registers[r.0 as usize])
            }
            Observable::Loc(l) => self.location(l).name.clone(),
        }
    }
}

impl Order {
    /// The order as PTX and C spell it (`weak` for a plain access).
    pub const fn name(self) -> &'static str {
        match self {
            Order::Weak => "weak",
            Order::Volatile => "volatile",
            Order::Relaxed => "relaxed",
            Order::Acquire => "acquire",
            Order::Release => "release",
            Order::AcqRel => "acq_rel",
            Order::SeqCst => "seq_cst",
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FenceOrder {
    /// The fence's PTX qualifier (`fence.sc`, `fence.acq_rel`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            FenceOrder::Acquire => "acquire",
            FenceOrder::Release => "release",
            FenceOrder::AcqRel => "acq_rel",
            FenceOrder::Sc => "sc",
        }
    }
}

impl fmt::Display for FenceOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Thread => "thread",
            Scope::Warp => "warp",
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(gpu: u32, cluster: u32, cta: u32) -> Placement {
        Placement::Device(DevicePlacement {
            gpu,
            cluster,
            cta,
            warp: None,
        })
    }

    #[test]
    fn scope_inclusion_follows_the_hierarchy() {
        let a = dev(0, 0, 0);
        // Same cluster, other CTA: cluster scope includes it, CTA scope does not.
        let b = dev(0, 0, 1);
        assert!(!a.scope_includes(Scope::Cta, &b));
        assert!(a.scope_includes(Scope::Cluster, &b));
        // Other GPU: only system scope.
        let c = dev(1, 0, 0);
        assert!(!a.scope_includes(Scope::Gpu, &c));
        assert!(a.scope_includes(Scope::Sys, &c));
        // Host threads are included only by system scope, and include only at system scope.
        assert!(!a.scope_includes(Scope::Gpu, &Placement::Host));
        assert!(Placement::Host.scope_includes(Scope::Sys, &a));
        assert!(!Placement::Host.same_cta(&Placement::Host));
    }

    fn depth(p: &Prop) -> usize {
        match p {
            Prop::True | Prop::False | Prop::Cmp(..) => 1,
            Prop::Not(a) => 1 + depth(a),
            Prop::And(a, b) | Prop::Or(a, b) => 1 + depth(a).max(depth(b)),
        }
    }

    #[test]
    fn chains_nest_left_when_short_and_balance_when_long() {
        let atom = |i: Value| Prop::Cmp(Term::Const(i), CmpOp::Eq, Term::Const(1));
        assert_eq!(Prop::chain(vec![], true), None);
        // Three parts: ((a /\ b) /\ c), as the parser always built them.
        let left = Prop::chain((0..3).map(atom).collect(), true).unwrap();
        let expect = Prop::And(
            Box::new(Prop::And(Box::new(atom(0)), Box::new(atom(1)))),
            Box::new(atom(2)),
        );
        assert_eq!(left, expect);
        assert_eq!(
            depth(&Prop::chain((0..64).map(atom).collect(), false).unwrap()),
            64
        );
        // 100,000 parts: 17 levels of connectives over the atoms (2^17 >= 100,000), the
        // atoms in order (the observables' order depends on it), the same truth value.
        let n = 100_000;
        let long = Prop::chain((0..n).map(atom).collect(), false).unwrap();
        assert_eq!(depth(&long), 18);
        assert!(long.eval(&|_| 0));
        let all = Prop::chain((0..n).map(|_| atom(1)).collect(), true).unwrap();
        assert!(all.eval(&|_| 0));
        let one_false = Prop::chain((0..n).map(|i| atom(i32_to(i == 70_000))).collect(), true);
        assert!(!one_false.unwrap().eval(&|_| 0));
        let obs = |i: u32| {
            Prop::Cmp(
                Term::Observable(Observable::Loc(LocId(i))),
                CmpOp::Eq,
                Term::Const(0),
            )
        };
        let mut seen = Vec::new();
        Prop::chain((0..1000).map(obs).collect(), true)
            .unwrap()
            .observables(&mut seen);
        assert_eq!(
            seen,
            (0..1000)
                .map(|i| Observable::Loc(LocId(i)))
                .collect::<Vec<_>>()
        );
    }

    /// 0 for `true`, 1 otherwise: `atom(0)` is the false comparison 0 = 1.
    fn i32_to(zero: bool) -> Value {
        if zero {
            0
        } else {
            1
        }
    }

    #[test]
    fn ptx_inc_and_dec_wrap_at_their_operand() {
        assert_eq!(RmwOp::Inc.apply(IntType::U32, 0, 1), 1);
        assert_eq!(RmwOp::Inc.apply(IntType::U32, 1, 1), 0);
        assert_eq!(RmwOp::Dec.apply(IntType::U32, 0, 5), 5);
        assert_eq!(RmwOp::Dec.apply(IntType::U32, 7, 5), 5);
        assert_eq!(RmwOp::Dec.apply(IntType::U32, 3, 5), 2);
    }
}

#[cfg(test)]
mod arithmetic_tests {
    use super::*;

    const C: Arithmetic = Arithmetic::C;
    const PTX: Arithmetic = Arithmetic::Ptx;

    #[test]
    fn bit_operations_count_in_the_width() {
        let u = |op: BinOp, ty, a| op.eval(ty, C, a, 0).unwrap();
        assert_eq!(u(BinOp::Popc, IntType::U32, 0xf0f0), 8);
        // -1 as 32 bits has 32 set bits, not 64.
        assert_eq!(u(BinOp::Popc, IntType::S32, -1), 32);
        assert_eq!(u(BinOp::Clz, IntType::U32, 1), 31);
        assert_eq!(u(BinOp::Clz, IntType::U64, 1), 63);
        assert_eq!(u(BinOp::Clz, IntType::U32, 0), 32);
        assert_eq!(u(BinOp::Brev, IntType::U32, 1), 0x8000_0000);
        assert_eq!(u(BinOp::Brev, IntType::U32, 0b110), 0x6000_0000);
        // bfind: the highest set bit, all ones when none; .shiftamt counts it from the top.
        assert_eq!(u(BinOp::Bfind, IntType::U32, 0x50), 6);
        assert_eq!(u(BinOp::Bfind, IntType::U32, 0), 0xffff_ffff);
        assert_eq!(u(BinOp::BfindShift, IntType::U32, 0x50), 25);
        // Signed: for a negative value, the highest 0 bit.
        assert_eq!(u(BinOp::Bfind, IntType::S32, -5), 2);
        // NVRTC's __ffs(x) - 1: bfind.shiftamt of the bits reversed.
        let ffs = |x: Value| {
            u(
                BinOp::BfindShift,
                IntType::U32,
                u(BinOp::Brev, IntType::U32, x),
            )
        };
        assert_eq!(ffs(0b1000), 3);
        assert_eq!(ffs(1), 0);
        assert_eq!(IntType::S32.wrap(ffs(0)), -1);
    }

    #[test]
    fn shuffle_source_lanes_follow_the_isa() {
        // c = 31: the whole warp is one segment, clamp 31 (down, bfly, idx); up uses c = 0.
        assert_eq!(ShflMode::Down.source_lane(3, 2, 31), (5, true));
        assert_eq!(ShflMode::Down.source_lane(30, 2, 31), (30, false));
        assert_eq!(ShflMode::Up.source_lane(1, 2, 0), (1, false));
        assert_eq!(ShflMode::Up.source_lane(5, 2, 0), (3, true));
        assert_eq!(ShflMode::Bfly.source_lane(5, 1, 31), (4, true));
        assert_eq!(ShflMode::Idx.source_lane(9, 0, 31), (0, true));
        // width 16 (c = (32 - 16) << 8 | 31): each half-warp is a segment.
        let c = (16 << 8) | 31;
        assert_eq!(ShflMode::Idx.source_lane(20, 3, c), (19, true));
        assert_eq!(ShflMode::Down.source_lane(14, 4, c), (14, false));
        assert_eq!(ShflMode::Bfly.source_lane(17, 2, c), (19, true));
        let c_up = 16 << 8;
        assert_eq!(ShflMode::Up.source_lane(17, 2, c_up), (17, false));
        assert_eq!(ShflMode::Up.source_lane(19, 2, c_up), (17, true));
    }

    #[test]
    fn values_wrap_to_their_width() {
        // Two's complement truncation, then sign or zero extension.
        assert_eq!(
            IntType::S32.wrap(i64::from(i32::MAX) + 1),
            i64::from(i32::MIN)
        );
        assert_eq!(IntType::U32.wrap(-1), 4_294_967_295);
        assert_eq!(IntType::U8.wrap(256 + 7), 7);
        assert_eq!(IntType::S8.wrap(0xff), -1);
        assert_eq!(IntType::U64.display(-1), "18446744073709551615");
    }

    #[test]
    fn c_signed_overflow_is_undefined_and_unsigned_wraps() {
        let max = i64::from(i32::MAX);
        assert!(BinOp::Add.eval(IntType::S32, C, max, 1).is_err());
        assert_eq!(
            BinOp::Add.eval(IntType::S32, PTX, max, 1),
            Ok(i64::from(i32::MIN))
        );
        assert_eq!(BinOp::Add.eval(IntType::U32, C, 4_294_967_295, 1), Ok(0));
        // INT_MIN / -1 overflows too.
        assert!(BinOp::Div
            .eval(IntType::S32, C, i64::from(i32::MIN), -1)
            .is_err());
        assert_eq!(BinOp::Sub.eval(IntType::U32, C, 0, 1), Ok(4_294_967_295));
    }

    #[test]
    fn division_truncates_and_by_zero_is_undefined_everywhere() {
        assert_eq!(BinOp::Div.eval(IntType::S32, C, -7, 2), Ok(-3));
        assert_eq!(BinOp::Rem.eval(IntType::S32, C, -7, 2), Ok(-1));
        // Unsigned division sees -7 as 2^32 - 7.
        assert_eq!(BinOp::Div.eval(IntType::U32, C, -7, 2), Ok(2_147_483_644));
        assert!(BinOp::Div.eval(IntType::S32, PTX, 1, 0).is_err());
        assert!(BinOp::Rem.eval(IntType::U64, C, 1, 0).is_err());
    }

    #[test]
    fn shifts_are_undefined_past_the_width_in_c_and_clamped_in_ptx() {
        assert_eq!(BinOp::Shl.eval(IntType::S32, C, 1, 4), Ok(16));
        assert!(BinOp::Shl.eval(IntType::U32, C, 1, 32).is_err());
        assert!(BinOp::Shl.eval(IntType::S32, C, 1, -1).is_err());
        assert!(BinOp::Shl.eval(IntType::S32, C, 1, 31).is_err());
        assert_eq!(BinOp::Shl.eval(IntType::U32, C, 1, 31), Ok(2_147_483_648));
        assert_eq!(BinOp::Shl.eval(IntType::U32, PTX, 1, 40), Ok(0));
        assert_eq!(BinOp::Shr.eval(IntType::S32, PTX, -16, 40), Ok(-1));
        assert_eq!(BinOp::Shr.eval(IntType::S32, C, -16, 2), Ok(-4));
        // Logical on unsigned values.
        assert_eq!(BinOp::Shr.eval(IntType::U32, C, -16, 28), Ok(15));
    }

    #[test]
    fn comparisons_follow_the_signedness() {
        assert_eq!(BinOp::Lt.eval(IntType::S32, C, -1, 0), Ok(1));
        assert_eq!(BinOp::Lt.eval(IntType::U32, C, -1, 0), Ok(0));
        assert_eq!(BinOp::Eq.eval(IntType::U32, C, -1, 4_294_967_295), Ok(1));
    }

    #[test]
    fn atomics_wrap_and_compare_in_their_type() {
        assert_eq!(RmwOp::Add.apply(IntType::U32, 4_294_967_295, 1), 0);
        assert_eq!(
            RmwOp::Add.apply(IntType::S32, i64::from(i32::MAX), 1),
            i64::from(i32::MIN)
        );
        assert_eq!(RmwOp::Max.apply(IntType::U32, -1, 5), 4_294_967_295);
        assert_eq!(RmwOp::Max.apply(IntType::S32, -1, 5), 5);
    }

    fn program(arrays: Vec<Array>, tys: &[IntType]) -> Program {
        Program {
            arch: Arch::C,
            name: "t".into(),
            description: None,
            locations: tys
                .iter()
                .enumerate()
                .map(|(i, &ty)| Location {
                    name: format!("l{i}"),
                    space: MemorySpace::Global,
                    init: 0,
                    ty,
                    span: None,
                })
                .collect(),
            arrays,
            threads: vec![],
            condition: Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::True,
                span: None,
            },
            extra_observables: vec![],
        }
    }

    #[test]
    fn pointers_name_elements_and_faults_name_the_allocation() {
        // x (one int), a[3] (ints), y (a long long).
        let a = Array {
            name: "a".into(),
            first: LocId(1),
            len: 3,
        };
        let p = program(
            vec![a],
            &[
                IntType::S32,
                IntType::S32,
                IntType::S32,
                IntType::S32,
                IntType::S64,
            ],
        );
        let a0 = p.address_of(LocId(1));
        assert_eq!(p.address_of(LocId(2)), a0 + 4);
        assert_eq!(p.resolve(a0 + 8, IntType::U32), Ok(LocId(3)));
        assert!(p
            .resolve(a0 + 12, IntType::S32)
            .unwrap_err()
            .0
            .contains("out of bounds of `a`"));
        assert!(p
            .resolve(a0 + 2, IntType::S32)
            .unwrap_err()
            .0
            .contains("misaligned"));
        assert!(p
            .resolve(a0, IntType::S64)
            .unwrap_err()
            .0
            .contains("mixed-size"));
        assert_eq!(
            p.resolve(p.address_of(LocId(4)), IntType::S64),
            Ok(LocId(4))
        );
        assert!(p.resolve(0, IntType::S32).unwrap_err().0.contains("null"));
        assert_eq!(p.element(LocId(1), 2), Ok(LocId(3)));
        assert_eq!(p.element(LocId(2), -1), Ok(LocId(1)));
        assert!(p
            .element(LocId(1), 3)
            .unwrap_err()
            .0
            .contains("out of bounds of `a` (3 elements)"));
        assert!(p
            .element(LocId(0), 1)
            .unwrap_err()
            .0
            .contains("holds one value"));
    }
}
