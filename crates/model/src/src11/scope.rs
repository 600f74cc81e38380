//! Atomicity, orders and scope inclusion in the scoped C11 model.
//!
//! Lustig, Sahasrabuddhe, Giroux (ASPLOS 2019), "scoped C++": every atomic carries a scope; two
//! operations interact as atomics only when each one's scope includes the other's thread
//! ("scope inclusion"); non-atomic accesses have the thread scope, so they interact with other
//! threads only through happens-before. Hower et al. (ASPLOS 2014) call a conflict between
//! atomics that fail scope inclusion a heterogeneous race.
//!
//! OpenCL (`Arch::OpenCl`) asks more: two actions have an *inclusive scope* when they have the
//! same scope and both work-items lie in it (OpenCL 2.x API specification, §3.3.4 and the
//! glossary). An atomic on local memory ignores a scope wider than the work-group (OpenCL C
//! 2.0, §6.13.11.4): its scope is at most the work-group.

use scopecheck_explore::{Event, EventKind, Graph, Relation};
use scopecheck_ir::{Arch, FenceOrder, MemorySpace, Order, Scope};

use crate::Platform;

/// An atomic access or a fence (non-atomic: plain and `volatile` accesses, initial writes).
pub fn is_atomic(e: &Event) -> bool {
    match e.kind {
        EventKind::Read { order, .. } | EventKind::Write { order, .. } => order.is_atomic(),
        EventKind::Fence { .. } | EventKind::Arrive { .. } | EventKind::Wait { .. } => true,
        EventKind::Init { .. } => false,
    }
}

fn scope_of(e: &Event) -> Option<Scope> {
    match e.kind {
        EventKind::Read { scope, .. }
        | EventKind::Write { scope, .. }
        | EventKind::Fence { scope, .. } => Some(scope),
        EventKind::Arrive { .. } | EventKind::Wait { .. } => Some(Scope::Cta),
        EventKind::Init { .. } => None,
    }
}

/// `strong_r`: same thread, or both atomic and each one's scope including the other's thread
/// (extended as the graph grows).
pub fn scope_inclusion(g: &Graph, platform: &Platform) -> std::sync::Arc<Relation> {
    g.memo_pairwise("src11.scope_inclusion", |i, j| pair(g, platform, i, j))
}

fn pair(g: &Graph, platform: &Platform, i: usize, j: usize) -> bool {
    {
        if i == j {
            return false;
        }
        let (a, b) = (&g.events[i], &g.events[j]);
        if a.thread.is_some() && a.thread == b.thread {
            return true;
        }
        if !is_atomic(a) || !is_atomic(b) || platform.separates(g, i, j) {
            return false;
        }
        let opencl = g.program.arch == Arch::OpenCl;
        let scope = |e: &Event| {
            let s = scope_of(e)?;
            let local = e
                .kind
                .loc()
                .is_some_and(|l| g.program.location(l).space == MemorySpace::Shared);
            Some(if opencl && local {
                s.min(Scope::Cta)
            } else {
                s
            })
        };
        match (scope(a), scope(b), g.placement(i), g.placement(j)) {
            (Some(sa), Some(sb), Some(pa), Some(pb)) => {
                (!opencl || sa == sb) && pa.scope_includes(sa, pb) && pb.scope_includes(sb, pa)
            }
            _ => false,
        }
    }
}

/// Events at least as strong as release: release, acq_rel and seq_cst writes and fences.
pub fn is_release(e: &Event) -> bool {
    match e.kind {
        EventKind::Write { order, .. } => order.is_release(),
        EventKind::Fence { order, .. } => matches!(
            order,
            FenceOrder::Release | FenceOrder::AcqRel | FenceOrder::Sc
        ),
        _ => false,
    }
}

/// Events at least as strong as acquire: acquire, acq_rel and seq_cst reads and fences.
pub fn is_acquire(e: &Event) -> bool {
    match e.kind {
        EventKind::Read { order, .. } => order.is_acquire(),
        EventKind::Fence { order, .. } => matches!(
            order,
            FenceOrder::Acquire | FenceOrder::AcqRel | FenceOrder::Sc
        ),
        _ => false,
    }
}

/// Sequentially consistent accesses and fences.
pub fn is_seq_cst(e: &Event) -> bool {
    match e.kind {
        EventKind::Read { order, .. } | EventKind::Write { order, .. } => order == Order::SeqCst,
        EventKind::Fence { order, .. } => order == FenceOrder::Sc,
        _ => false,
    }
}

pub fn is_fence(e: &Event) -> bool {
    matches!(e.kind, EventKind::Fence { .. })
}
