//! Strength, scope and the *morally strong* relation.
//!
//! PTX ISA, Memory Consistency Model, "Morally strong operations": two operations are morally
//! strong relative to each other if they are related in program order, or each is strong and
//! specifies a scope that includes the thread executing the other; and, when both are memory
//! operations, they overlap completely (here: the same location).

use scopecheck_explore::{Event, EventKind, Graph, Relation};
use scopecheck_ir::Scope;

use crate::Platform;

/// The scope of a strong operation; `None` for weak accesses and initial writes.
///
/// Barrier halves count as CTA-scoped: a `bar.sync` orders memory among the CTA's threads (the
/// formal PTX model treats the wait as an acquire-release fence).
pub fn strong_scope(e: &Event) -> Option<Scope> {
    match e.kind {
        EventKind::Read { order, scope, .. } | EventKind::Write { order, scope, .. } => {
            order.is_strong().then_some(scope)
        }
        EventKind::Fence { scope, .. } => Some(scope),
        EventKind::Arrive { .. } | EventKind::Wait { .. } => Some(Scope::Cta),
        EventKind::Init { .. } => None,
    }
}

/// The `ms` relation over all events of `g` (extended as the graph grows). A platform without
/// coherent host memory keeps host and device accesses to it apart.
pub fn morally_strong(g: &Graph, platform: &Platform) -> std::sync::Arc<Relation> {
    g.memo_pairwise("ptx.morally_strong", |i, j| pair(g, platform, i, j))
}

fn pair(g: &Graph, platform: &Platform, i: usize, j: usize) -> bool {
    {
        if i == j {
            return false;
        }
        let (a, b) = (&g.events[i], &g.events[j]);
        if a.kind.is_memory() && b.kind.is_memory() && !g.same_loc.contains(i, j) {
            return false;
        }
        if a.thread.is_some() && a.thread == b.thread {
            return true;
        }
        if platform.separates(g, i, j) {
            return false;
        }
        match (
            strong_scope(a),
            strong_scope(b),
            g.placement(i),
            g.placement(j),
        ) {
            (Some(sa), Some(sb), Some(pa), Some(pb)) => {
                pa.scope_includes(sa, pb) && pb.scope_includes(sb, pa)
            }
            _ => false,
        }
    }
}
