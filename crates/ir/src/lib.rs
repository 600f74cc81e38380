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

mod arith;
pub mod cursor;
pub mod diagnostic;
pub mod float;
pub mod ptx;
pub mod weaken;
pub use arith::{Arithmetic, BinOp, IntType, RmwKind, RmwOp};
pub use diagnostic::{Diagnostic, DiagnosticFields, Failure, Severity};
pub use float::{FloatCmp, FloatMode, FloatOp, Rounding};
use std::fmt;

/// A value held in a register or a memory location: an integer of some [`IntType`], held in
/// its canonical form (see [`IntType::wrap`]): a signed value sign-extended, an unsigned one
/// zero-extended, a `u64` above `i64::MAX` as the `i64` with the same bits. A float or a
/// double is its IEEE-754 bit pattern, zero-extended ([`float`]).
pub type Value = i64;

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
