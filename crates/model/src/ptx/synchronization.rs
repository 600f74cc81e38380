//! Release and acquire patterns, and the synchronization they establish.
//!
//! PTX ISA, "Release and Acquire Patterns" and "Synchronizes-with": a release pattern X
//! synchronizes with an acquire pattern Y if a write in X precedes a read in Y in observation
//! order, and the first operation of X and the last operation of Y are morally strong.
//! `fence.sc` operations synchronize through the Fence-SC order (chosen per execution in
//! `super`), and CTA barriers through their matching (computed by the explorer).

use scopecheck_explore::{Event, EventKind, Graph, Relation};
use scopecheck_ir::FenceOrder;

/// A fence that can start a release pattern: `fence.sc`, `fence.acq_rel`, and a barrier wait.
fn is_release_fence(e: &Event) -> bool {
    match e.kind {
        EventKind::Fence { order, .. } => {
            matches!(
                order,
                FenceOrder::Release | FenceOrder::AcqRel | FenceOrder::Sc
            )
        }
        // A shuffle's or a vote's wait orders no memory.
        EventKind::Wait { barrier, .. } => barrier.orders_memory(),
        _ => false,
    }
}

/// A fence that can end an acquire pattern.
fn is_acquire_fence(e: &Event) -> bool {
    match e.kind {
        EventKind::Fence { order, .. } => {
            matches!(
                order,
                FenceOrder::Acquire | FenceOrder::AcqRel | FenceOrder::Sc
            )
        }
        EventKind::Wait { barrier, .. } => barrier.orders_memory(),
        _ => false,
    }
}

fn is_strong_write(e: &Event) -> bool {
    matches!(e.kind, EventKind::Write { order, .. } if order.is_strong())
}

/// A strong read that may start an acquire pattern: not the read of a `red` (PTX ISA,
/// "Reductions Do Not Form Acquire Patterns").
fn is_acquire_pattern_read(e: &Event) -> bool {
    matches!(e.kind, EventKind::Read { order, reduction: false, .. } if order.is_strong())
}

/// From the first operation of each release pattern to the writes of that pattern:
/// a release write `W` (`W → W`, and `W → W'` for a strong write `W'` to the same location
/// po-after it), or a release fence `F` po-before a strong write `W'` (`F → W'`).
pub fn release_patterns(g: &Graph) -> Relation {
    let mut r = Relation::new(g.len());
    for (i, e) in g.events.iter().enumerate() {
        let release_write = matches!(e.kind, EventKind::Write { order, .. } if order.is_release());
        if !release_write && !is_release_fence(e) {
            continue;
        }
        if release_write {
            r.insert(i, i);
        }
        for j in g.po.successors(i) {
            if is_strong_write(&g.events[j]) && (!release_write || g.same_loc.contains(i, j)) {
                r.insert(i, j);
            }
        }
    }
    r
}

/// From the reads of each acquire pattern to its last operation: an acquire read `R` (`R → R`,
/// and `R' → R` for a strong read `R'` of the same location po-before it), or a strong read `R'`
/// po-before an acquire fence `F` (`R' → F`).
pub fn acquire_patterns(g: &Graph) -> Relation {
    let mut r = Relation::new(g.len());
    for (j, e) in g.events.iter().enumerate() {
        let acquire_read =
            matches!(e.kind, EventKind::Read { order, reduction: false, .. } if order.is_acquire());
        if !acquire_read && !is_acquire_fence(e) {
            continue;
        }
        if acquire_read {
            r.insert(j, j);
        }
        for i in 0..j {
            if g.po.contains(i, j)
                && is_acquire_pattern_read(&g.events[i])
                && (!acquire_read || g.same_loc.contains(i, j))
            {
                r.insert(i, j);
            }
        }
    }
    r
}

/// Synchronization by release and acquire patterns: `(release ; obs ; acquire) ∩ ms`.
pub fn release_acquire_sync(g: &Graph, obs: &Relation, ms: &Relation) -> Relation {
    release_patterns(g)
        .compose(obs)
        .compose(&acquire_patterns(g))
        .intersect(ms)
}

pub fn is_fence_sc(e: &Event) -> bool {
    matches!(
        e.kind,
        EventKind::Fence {
            order: FenceOrder::Sc,
            ..
        }
    )
}

/// The pairs of `fence.sc` in different threads that the Fence-SC order must relate (those that
/// are morally strong), and the pairs program order already orders.
pub fn fence_sc_pairs(g: &Graph, ms: &Relation) -> (Vec<(usize, usize)>, Relation) {
    let fences: Vec<usize> = (0..g.len())
        .filter(|&i| is_fence_sc(&g.events[i]))
        .collect();
    let mut pairs = Vec::new();
    let mut forced = Relation::new(g.len());
    for (k, &a) in fences.iter().enumerate() {
        for &b in &fences[k + 1..] {
            if g.po.contains(a, b) {
                forced.insert(a, b);
            } else if ms.contains(a, b) {
                pairs.push((a, b));
            }
        }
    }
    (pairs, forced)
}
