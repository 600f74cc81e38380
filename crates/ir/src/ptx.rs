//! The PTX instruction table: the opcodes and qualifiers both PTX readers decode (the litmus
//! dialect's, `scopecheck_litmus`, and PTX modules', `scopecheck_ptx`), with their spelling and
//! what they mean in the IR. A new instruction or qualifier is added here once; each reader
//! then says which of them it accepts and lowers them (the compiler finds the `match`es).
//!
//! Spellings and defaults follow the PTX ISA (8.x): "Memory Consistency Model" for the
//! semantics and scopes, "membar/fence", "ld", "st", "atom", "red", "bar/barrier".
//! What a reader does with a qualifier it does not accept (its error message) stays the
//! reader's own: the litmus dialect names the one qualifier at fault by its column, a module
//! names the instruction.

use crate::{BarrierRedOp, BinOp, FenceOrder, IntType, Order, Scope};

/// The opcodes the readers know, by their PTX spelling (without qualifiers). The litmus
/// dialect adds `beq`, `bne` and `goto`, which are not PTX and stay in its reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    // Memory and synchronization.
    Ld,
    Ldu,
    St,
    Atom,
    Red,
    Fence,
    Membar,
    Bar,
    Barrier,
    // Moves and integer arithmetic.
    Mov,
    Add,
    Sub,
    Mul,
    Mad,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Neg,
    Abs,
    Min,
    Max,
    Bfi,
    Popc,
    Clz,
    Brev,
    Bfind,
    Setp,
    Selp,
    Cvt,
    Cvta,
    // Control.
    Bra,
    Call,
    Ret,
    Exit,
    Trap,
    // Warp collectives.
    Shfl,
    Vote,
    Activemask,
    Match,
    Redux,
    Elect,
    // No effect on memory: `nanosleep` only delays a thread, prefetches only warm caches.
    Nanosleep,
    Prefetch,
    Prefetchu,
}

impl Opcode {
    /// Every opcode with its spelling.
    pub const NAMES: [(&'static str, Opcode); 50] = [
        ("ld", Opcode::Ld),
        ("ldu", Opcode::Ldu),
        ("st", Opcode::St),
        ("atom", Opcode::Atom),
        ("red", Opcode::Red),
        ("fence", Opcode::Fence),
        ("membar", Opcode::Membar),
        ("bar", Opcode::Bar),
        ("barrier", Opcode::Barrier),
        ("mov", Opcode::Mov),
        ("add", Opcode::Add),
        ("sub", Opcode::Sub),
        ("mul", Opcode::Mul),
        ("mad", Opcode::Mad),
        ("div", Opcode::Div),
        ("rem", Opcode::Rem),
        ("shl", Opcode::Shl),
        ("shr", Opcode::Shr),
        ("and", Opcode::And),
        ("or", Opcode::Or),
        ("xor", Opcode::Xor),
        ("not", Opcode::Not),
        ("cnot", Opcode::Cnot),
        ("neg", Opcode::Neg),
        ("abs", Opcode::Abs),
        ("min", Opcode::Min),
        ("max", Opcode::Max),
        ("bfi", Opcode::Bfi),
        ("popc", Opcode::Popc),
        ("clz", Opcode::Clz),
        ("brev", Opcode::Brev),
        ("bfind", Opcode::Bfind),
        ("setp", Opcode::Setp),
        ("selp", Opcode::Selp),
        ("cvt", Opcode::Cvt),
        ("cvta", Opcode::Cvta),
        ("bra", Opcode::Bra),
        ("call", Opcode::Call),
        ("ret", Opcode::Ret),
        ("exit", Opcode::Exit),
        ("trap", Opcode::Trap),
        ("shfl", Opcode::Shfl),
        ("vote", Opcode::Vote),
        ("activemask", Opcode::Activemask),
        ("match", Opcode::Match),
        ("redux", Opcode::Redux),
        ("elect", Opcode::Elect),
        ("nanosleep", Opcode::Nanosleep),
        ("prefetch", Opcode::Prefetch),
        ("prefetchu", Opcode::Prefetchu),
    ];

    /// The opcode spelled `name` (`ld`, not `ld.global`).
    pub fn from_name(name: &str) -> Option<Opcode> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
    }

    /// The opcode's spelling.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, op)| *op == self)
            .map(|(n, _)| *n)
            .expect("every opcode is in NAMES")
    }

    /// The IR operation of a two-operand integer instruction (`add d, a, b`): the instructions
    /// both readers lower to one `Binary`. `mul` is `mul.lo` here (the litmus dialect's only
    /// form); a module's `mul.hi`/`mul.wide` are lowered apart.
    pub fn binary(self) -> Option<BinOp> {
        Some(match self {
            Opcode::Add => BinOp::Add,
            Opcode::Sub => BinOp::Sub,
            Opcode::Mul => BinOp::Mul,
            Opcode::Div => BinOp::Div,
            Opcode::Rem => BinOp::Rem,
            Opcode::Shl => BinOp::Shl,
            Opcode::Shr => BinOp::Shr,
            Opcode::And => BinOp::And,
            Opcode::Or => BinOp::Or,
            Opcode::Xor => BinOp::Xor,
            _ => return None,
        })
    }
}

/// The semantics qualifier of a memory operation or fence (`.relaxed`, `.acquire`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sem {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
    /// `.volatile`: `.relaxed.sys` (PTX ISA, "Volatile Operations").
    Volatile,
    /// `.mmio`: an access to memory-mapped I/O; neither reader lowers it.
    Mmio,
}

impl Sem {
    /// Every semantics, in the order messages list them.
    pub const ALL: [Sem; 8] = [
        Sem::Weak,
        Sem::Relaxed,
        Sem::Acquire,
        Sem::Release,
        Sem::AcqRel,
        Sem::Sc,
        Sem::Volatile,
        Sem::Mmio,
    ];

    /// The qualifier's spelling, without the dot.
    pub fn name(self) -> &'static str {
        match self {
            Sem::Weak => "weak",
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
            Sem::Sc => "sc",
            Sem::Volatile => "volatile",
            Sem::Mmio => "mmio",
        }
    }

    /// The semantics spelled `name` (without the dot).
    pub fn from_name(name: &str) -> Option<Sem> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The order of an access with these semantics (`.volatile` is relaxed; `.mmio` is
    /// relaxed too, PTX ISA "ld": `.mmio` requires `.relaxed.sys`).
    pub fn order(self) -> Order {
        match self {
            Sem::Weak => Order::Weak,
            Sem::Relaxed | Sem::Volatile | Sem::Mmio => Order::Relaxed,
            Sem::Acquire => Order::Acquire,
            Sem::Release => Order::Release,
            Sem::AcqRel => Order::AcqRel,
            Sem::Sc => Order::SeqCst,
        }
    }

    /// The order of a `fence` with these semantics: `.sc` and `.acq_rel` only.
    pub fn fence_order(self) -> Option<FenceOrder> {
        match self {
            Sem::Sc => Some(FenceOrder::Sc),
            Sem::AcqRel => Some(FenceOrder::AcqRel),
            _ => None,
        }
    }
}

/// The scope qualifiers of memory operations and fences, in the order messages list them.
pub const SCOPES: [(&str, Scope); 4] = [
    ("cta", Scope::Cta),
    ("cluster", Scope::Cluster),
    ("gpu", Scope::Gpu),
    ("sys", Scope::Sys),
];

/// [`SCOPES`] as a message lists them.
pub const SCOPE_LIST: &str = ".cta, .cluster, .gpu, .sys";

/// The scope spelled `name` (without the dot).
pub fn scope(name: &str) -> Option<Scope> {
    SCOPES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The levels of `membar` (a `fence.sc` of that scope; PTX ISA, "membar/fence").
pub const MEMBAR_LEVELS: [(&str, Scope); 3] =
    [("cta", Scope::Cta), ("gl", Scope::Gpu), ("sys", Scope::Sys)];

/// The scope of the `membar` level spelled `name` (without the dot).
pub fn membar_level(name: &str) -> Option<Scope> {
    MEMBAR_LEVELS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
}

/// The default semantics and scope of `atom` and `red` (PTX ISA, "atom": "the default is
/// .relaxed ... .gpu").
pub const RMW_DEFAULT: (Sem, Scope) = (Sem::Relaxed, Scope::Gpu);

/// The order of `fence` without semantics (PTX ISA, "membar/fence": `.acq_rel`).
pub const FENCE_DEFAULT: FenceOrder = FenceOrder::AcqRel;

/// What a `bar`/`barrier` does (PTX ISA, "bar/barrier"): wait for the others, arrive only,
/// or wait and reduce a predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierMode {
    Sync,
    Arrive,
    Red,
}

impl BarrierMode {
    /// The mode spelled `name` (without the dot).
    pub fn from_name(name: &str) -> Option<BarrierMode> {
        Some(match name {
            "sync" => BarrierMode::Sync,
            "arrive" => BarrierMode::Arrive,
            "red" => BarrierMode::Red,
            _ => return None,
        })
    }
}

/// The reductions of `bar.red`.
pub const BARRIER_REDUCTIONS: [(&str, BarrierRedOp); 3] = [
    ("popc", BarrierRedOp::Popc),
    ("and", BarrierRedOp::And),
    ("or", BarrierRedOp::Or),
];

/// The `bar.red` reduction spelled `name` (without the dot).
pub fn barrier_reduction(name: &str) -> Option<BarrierRedOp> {
    BARRIER_REDUCTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, op)| *op)
}

/// The integer type suffixes and `.pred`, in the order messages list them.
pub const INTEGER_TYPES: [&str; 13] = [
    "u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b32", "u64", "s64", "b64", "pred",
];

/// The IR type of an integer type suffix: `.b` types are untyped bits, unsigned here; `None`
/// for `.pred` and for anything not in [`INTEGER_TYPES`].
pub fn integer_type(name: &str) -> Option<IntType> {
    if !INTEGER_TYPES.contains(&name) || name == "pred" {
        return None;
    }
    let bits: u8 = name.get(1..)?.parse().ok()?;
    Some(IntType::new(bits, name.starts_with('s')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_spelling_round_trips() {
        // NAMES lists each opcode once, so name() and from_name() are inverse; a duplicate
        // spelling or opcode would make one of them find the other entry.
        for (n, op) in Opcode::NAMES {
            assert_eq!(Opcode::from_name(n), Some(op), "{n}");
            assert_eq!(op.name(), n);
        }
        assert_eq!(Opcode::from_name(""), None);
        assert_eq!(Opcode::from_name("ld.global"), None);
    }

    #[test]
    fn qualifiers_mean_what_the_isa_says() {
        for s in Sem::ALL {
            assert_eq!(Sem::from_name(s.name()), Some(s));
        }
        assert_eq!(Sem::Volatile.order(), Order::Relaxed);
        assert_eq!(scope("gpu"), Some(Scope::Gpu));
        assert_eq!(scope("gl"), None, "`.gl` is a membar level, not a scope");
        assert_eq!(membar_level("gl"), Some(Scope::Gpu));
        assert_eq!(SCOPE_LIST, SCOPES.map(|(n, _)| format!(".{n}")).join(", "));
        // `.b` types are unsigned bits; `.pred` has no integer type.
        assert_eq!(integer_type("b16"), Some(IntType::new(16, false)));
        assert_eq!(integer_type("s64"), Some(IntType::new(64, true)));
        assert_eq!(integer_type("pred"), None);
        assert_eq!(integer_type("f32"), None);
        assert_eq!(integer_type("u128"), None);
    }
}
