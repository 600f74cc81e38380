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

use std::fmt;

/// A value held in a register or a memory location. Litmus tests use small integers;
/// arithmetic wraps.
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
    pub init: Value,
    pub span: Option<Span>,
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

/// A memory address: a location plus an optional register offset. The offset exists to express
/// address dependencies (`[x+r1]` with `r1` computed from a loaded value); a run-time offset
/// other than zero leaves the location and is an error in the test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Address {
    pub loc: LocId,
    pub offset: Option<RegId>,
}

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
    /// The value an RMW writes, given the value it read and its operand.
    pub fn apply(self, old: Value, v: Value) -> Value {
        match self {
            RmwOp::Add => old.wrapping_add(v),
            RmwOp::Sub => old.wrapping_sub(v),
            RmwOp::Inc => {
                if old >= v {
                    0
                } else {
                    old.wrapping_add(1)
                }
            }
            RmwOp::Dec => {
                if old == 0 || old > v {
                    v
                } else {
                    old.wrapping_sub(1)
                }
            }
            RmwOp::Exch => v,
            RmwOp::And => old & v,
            RmwOp::Or => old | v,
            RmwOp::Xor => old ^ v,
            RmwOp::Min => old.min(v),
            RmwOp::Max => old.max(v),
        }
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

/// Register arithmetic. The comparisons give 1 or 0 (signed), as C's do. Division and
/// remainder truncate toward zero, shifts are arithmetic; a division by zero or a shift by a
/// negative amount or by 64 or more is undefined, and the explorer reports it as a fault of the
/// test before applying the operation ([`BinOp::undefined`]).
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
}

impl BinOp {
    /// Why `a op b` has no defined value, if it has none.
    pub fn undefined(self, b: Value) -> Option<&'static str> {
        match self {
            BinOp::Div | BinOp::Rem if b == 0 => Some("division by zero"),
            BinOp::Shl | BinOp::Shr if !(0..64).contains(&b) => {
                Some("shift by a negative amount or by 64 or more")
            }
            _ => None,
        }
    }

    /// The result; for an undefined operation (see [`BinOp::undefined`]) 0.
    pub fn apply(self, a: Value, b: Value) -> Value {
        if self.undefined(b).is_some() {
            return 0;
        }
        match self {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => a.wrapping_div(b),
            BinOp::Rem => a.wrapping_rem(b),
            BinOp::Shl => a.wrapping_shl(b as u32),
            BinOp::Shr => a.wrapping_shr(b as u32),
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Eq => Value::from(a == b),
            BinOp::Ne => Value::from(a != b),
            BinOp::Lt => Value::from(a < b),
            BinOp::Le => Value::from(a <= b),
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

/// One instruction of a thread. The exhaustive list of what a thread can do: every consumer
/// matches on it, so adding a kind shows every place that must handle it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstrKind {
    Load {
        dst: RegId,
        addr: Address,
        order: Order,
        scope: Scope,
    },
    Store {
        addr: Address,
        value: Operand,
        order: Order,
        scope: Scope,
    },
    /// `atom` (with `dst`) or `red` (without).
    Rmw {
        dst: Option<RegId>,
        addr: Address,
        kind: RmwKind,
        order: Order,
        scope: Scope,
    },
    Fence {
        order: FenceOrder,
        scope: Scope,
        spaces: FenceSpaces,
    },
    /// A CTA barrier. `count` is the number of threads expected; `None` means every thread of
    /// the test in the CTA.
    Barrier {
        id: u32,
        kind: BarrierKind,
        count: Option<u32>,
    },
    Mov {
        dst: RegId,
        src: Operand,
    },
    Binary {
        dst: RegId,
        op: BinOp,
        a: Operand,
        b: Operand,
    },
    /// Jump to instruction index `target` (which may equal the code length: the end) when
    /// `cond` holds.
    Branch {
        cond: BranchCond,
        target: usize,
    },
}

/// An instruction with its source span and the source text it was written as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    pub kind: InstrKind,
    pub span: Span,
    pub text: String,
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

impl Prop {
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
    C,
}

/// A whole test: threads, locations, condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub arch: Arch,
    pub name: String,
    pub description: Option<String>,
    pub locations: Vec<Location>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
    /// Extra observables listed by a `locations [...]` line, printed with the final states.
    pub extra_observables: Vec<Observable>,
}

impl Program {
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

    #[test]
    fn ptx_inc_and_dec_wrap_at_their_operand() {
        assert_eq!(RmwOp::Inc.apply(0, 1), 1);
        assert_eq!(RmwOp::Inc.apply(1, 1), 0);
        assert_eq!(RmwOp::Dec.apply(0, 5), 5);
        assert_eq!(RmwOp::Dec.apply(7, 5), 5);
        assert_eq!(RmwOp::Dec.apply(3, 5), 2);
    }
}

#[cfg(test)]
mod arithmetic_tests {
    use super::*;

    #[test]
    fn division_truncates_and_undefined_cases_are_named() {
        assert_eq!(BinOp::Div.apply(-7, 2), -3);
        assert_eq!(BinOp::Rem.apply(-7, 2), -1);
        assert_eq!(BinOp::Shl.apply(1, 4), 16);
        assert_eq!(BinOp::Shr.apply(-16, 2), -4);
        assert_eq!(BinOp::Div.undefined(0), Some("division by zero"));
        assert!(BinOp::Shl.undefined(64).is_some());
        assert!(BinOp::Add.undefined(0).is_none());
    }
}
