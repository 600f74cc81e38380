//! Causality order.
//!
//! PTX ISA, "Causality order": base causality order is the transitive closure of program order
//! and synchronization (release/acquire patterns, Fence-SC order, barriers); causality order
//! adds observation at the front: `cause = base ∪ (obs ; base)`. The formal model writes
//! `obs ; (po_loc ∪ base)` without program order in `base`; every axiom compares events of one
//! location, on which the two agree.

use scopecheck_explore::{Graph, Relation};

/// `(po ∪ sync)+` for the given synchronization edges, with barriers and launch order (a thread
/// that starts after another finished sees everything it did).
pub fn base_causality(g: &Graph, syncs: &[&Relation]) -> Relation {
    let mut base = g.po.clone();
    base.union_with(&g.barrier_sync);
    base.union_with(&g.launch);
    for s in syncs {
        base.union_with(s);
    }
    base.close();
    base
}

pub fn causality(base: &Relation, obs: &Relation) -> Relation {
    base.union(&obs.compose(base))
}
