//! The synchronization vocabulary of the source languages (CUDA, libcu++, OpenCL 2.0, C++
//! `std::atomic`): names of memory orders, scopes and atomic operations, and what they mean.
//! Shared by the C litmus dialect and the CUDA/OpenCL source front-end, so that a call means the
//! same thing in both.

use scopecheck_ir::{BinOp, IntType, Operand, Order, RmwOp, Scope};

/// The OpenCL memory orders, for error messages.
pub const ORDERS: &[&str] = &[
    "memory_order_relaxed",
    "memory_order_acquire",
    "memory_order_release",
    "memory_order_acq_rel",
    "memory_order_seq_cst",
];

/// The OpenCL memory scopes, for error messages.
pub const CL_SCOPES: &[&str] = &[
    "memory_scope_work_item",
    "memory_scope_sub_group",
    "memory_scope_work_group",
    "memory_scope_device",
    "memory_scope_all_svm_devices",
];

/// A memory order written in C, C++ or libcu++ (`memory_order_acquire`,
/// `cuda::std::memory_order_acquire`, `std::memory_order::acquire`).
pub fn order_name(w: &str) -> Option<Order> {
    let w = ["cuda::std::", "cuda::", "std::"]
        .iter()
        .find_map(|p| w.strip_prefix(p))
        .unwrap_or(w);
    let o = w
        .strip_prefix("memory_order_")
        .or_else(|| w.strip_prefix("memory_order::"))?;
    Some(match o {
        "relaxed" => Order::Relaxed,
        // Every implementation promotes consume to acquire.
        "consume" | "acquire" => Order::Acquire,
        "release" => Order::Release,
        "acq_rel" => Order::AcqRel,
        "seq_cst" => Order::SeqCst,
        _ => return None,
    })
}

/// A libcu++ thread scope (`cuda::thread_scope_block`, ...).
pub fn thread_scope(w: &str) -> Option<Scope> {
    let w = w
        .strip_prefix("cuda::std::")
        .or_else(|| w.strip_prefix("cuda::"))
        .unwrap_or(w);
    Some(match w {
        "thread_scope_thread" => Scope::Thread,
        "thread_scope_block" => Scope::Cta,
        "thread_scope_cluster" => Scope::Cluster,
        "thread_scope_device" => Scope::Gpu,
        "thread_scope_system" => Scope::Sys,
        _ => return None,
    })
}

/// An OpenCL memory scope (`memory_scope_work_group`, ...), or a libcu++ thread scope.
pub fn cl_scope(w: &str) -> Option<Scope> {
    Some(match w {
        "memory_scope_work_item" => Scope::Thread,
        "memory_scope_sub_group" => Scope::Warp,
        "memory_scope_work_group" => Scope::Cta,
        "memory_scope_device" => Scope::Gpu,
        "memory_scope_all_svm_devices" | "memory_scope_all_devices" => Scope::Sys,
        _ => return thread_scope(w),
    })
}

/// The RMW members of `std::atomic` / `cuda::atomic` / `cuda::atomic_ref`.
pub const RMW_MEMBERS: &[(&str, RmwOp)] = &[
    ("exchange", RmwOp::Exch),
    ("fetch_add", RmwOp::Add),
    ("fetch_sub", RmwOp::Sub),
    ("fetch_and", RmwOp::And),
    ("fetch_or", RmwOp::Or),
    ("fetch_xor", RmwOp::Xor),
    ("fetch_min", RmwOp::Min),
    ("fetch_max", RmwOp::Max),
];

/// The legacy CUDA atomics (relaxed, device scope; `_block` and `_system` forms).
pub const CUDA_RMW: &[(&str, RmwOp)] = &[
    ("atomicAdd", RmwOp::Add),
    ("atomicSub", RmwOp::Sub),
    ("atomicExch", RmwOp::Exch),
    ("atomicMin", RmwOp::Min),
    ("atomicMax", RmwOp::Max),
    ("atomicInc", RmwOp::Inc),
    ("atomicDec", RmwOp::Dec),
    ("atomicAnd", RmwOp::And),
    ("atomicOr", RmwOp::Or),
    ("atomicXor", RmwOp::Xor),
];

/// Cache-hinted loads and stores: weak accesses (a cache hint orders nothing).
pub const HINT_LOADS: &[&str] = &["__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"];
pub const HINT_STORES: &[&str] = &["__stcg", "__stwb", "__stcs", "__stwt"];

/// A legacy CUDA atomic's base name and scope (`atomicAdd` → gpu, `atomicAdd_block` → cta,
/// `atomicCAS_system` → sys).
pub fn cuda_atomic(name: &str) -> Option<(&'static str, Scope)> {
    let known = CUDA_RMW.iter().map(|(n, _)| *n).chain(["atomicCAS"]);
    for n in known {
        if let Some(rest) = name.strip_prefix(n) {
            match rest {
                "" => return Some((n, Scope::Gpu)),
                "_block" => return Some((n, Scope::Cta)),
                "_system" => return Some((n, Scope::Sys)),
                _ => {}
            }
        }
    }
    None
}

/// C's integer promotion: types narrower than `int` compute as `int`.
pub fn promote(t: IntType) -> IntType {
    if t.bits < 32 {
        IntType::S32
    } else {
        t
    }
}

/// The usual arithmetic conversions of C for two operands: with a floating operand, the wider
/// floating type (`double` over `float`, either over any integer); else C's integer rules.
pub fn common_type(a: IntType, b: IntType) -> IntType {
    if a.float || b.float {
        let wide = |t: IntType| if t.float { t.bits } else { 0 };
        return IntType::float(wide(a).max(wide(b)));
    }
    let (a, b) = (promote(a), promote(b));
    if a.signed == b.signed {
        return if a.bits >= b.bits { a } else { b };
    }
    let (s, u) = if a.signed { (a, b) } else { (b, a) };
    if u.bits >= s.bits {
        u
    } else {
        // The signed type is wider and holds every value of the unsigned one.
        s
    }
}

/// The type C's `op` computes in for operands of types `ta` and `tb` (a shift has its promoted
/// left operand's type, the others the common type), and the type of its result (`int` for a
/// comparison).
pub fn op_types(op: BinOp, ta: IntType, tb: IntType) -> (IntType, IntType) {
    let ty = match op {
        BinOp::Shl | BinOp::Shr => promote(ta),
        _ => common_type(ta, tb),
    };
    let result = match op {
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le => IntType::S32,
        _ => ty,
    };
    (ty, result)
}

/// Whether a branch may compare `a` (of C type `ta`) with `b` (of type `tb`) as the raw values
/// they hold: both of one type, or a constant that the register's type holds unchanged.
/// Otherwise they must first be compared in their common type.
pub fn compares_raw(a: Operand, ta: IntType, b: Operand, tb: IntType) -> bool {
    // Floats compare as values: -0.0 equals +0.0 and a NaN nothing, whatever the bits.
    if ta.float || tb.float {
        return false;
    }
    match (a, b) {
        (Operand::Reg(_), Operand::Imm(y)) => ta.holds(tb.exact(y)),
        (Operand::Imm(x), Operand::Reg(_)) => tb.holds(ta.exact(x)),
        _ => ta == tb,
    }
}

/// The precedence of a C binary operator (1: `||`, the loosest, to 10: `* / %`), shared by
/// every C expression parser (litmus C dialect, the CUDA preprocessor's `#if`).
pub fn binary_precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | "<=" | ">" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}
