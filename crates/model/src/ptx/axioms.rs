//! The axioms of the PTX memory model (PTX ISA, "Axioms"), each a predicate on relations.

use scopecheck_explore::{Graph, Relation};

use crate::Platform;

pub const COHERENCE: &str = "Coherence";
pub const FENCE_SC: &str = "Fence-SC";
pub const ATOMICITY: &str = "Atomicity";
pub const NO_THIN_AIR: &str = "No-Thin-Air";
pub const SC_PER_LOCATION: &str = "SC-per-location";
pub const CAUSALITY: &str = "Causality";

/// Coherence: writes to one location ordered by causality are ordered so in coherence.
/// Returns the coherence pairs this forces (the initial write first, then causality).
pub fn coherence_forced(g: &Graph, cause: &Relation) -> Relation {
    let mut forced = cause.restrict(&g.writes, &g.writes).intersect(&g.same_loc);
    for (i, e) in g.events.iter().enumerate() {
        if matches!(e.kind, scopecheck_explore::EventKind::Init { .. }) {
            for w in g.writes.iter() {
                if w != i && g.same_loc.contains(i, w) {
                    forced.insert(i, w);
                }
            }
        }
    }
    forced
}

/// Fence-SC: the Fence-SC order does not contradict causality. With the Fence-SC order part of
/// base causality, a contradiction is a causality cycle.
pub fn fence_sc(cause: &Relation) -> bool {
    cause.is_irreflexive()
}

/// Atomicity: for an RMW `(Ar, Aw)` and a write `W` morally strong with it, not both
/// `Ar fr W` (Ar reads a write coherence-before W) and `W co Aw`. A platform without host-native
/// atomics exempts a host write from a device RMW on host memory, and the reverse.
pub fn atomicity(
    g: &Graph,
    ms: &Relation,
    co: &Relation,
    fr: &Relation,
    platform: &Platform,
) -> bool {
    g.rmw.pairs().all(|(ar, aw)| {
        fr.successors(ar).all(|w| {
            w == aw
                || !(co.contains(w, aw) && ms.contains(w, aw))
                || platform.splits_atomicity(g, aw, w)
        })
    })
}

/// No-Thin-Air: `rf ∪ dep` is acyclic.
pub fn no_thin_air(g: &Graph, rf: &Relation) -> bool {
    rf.union(&g.dep).is_acyclic()
}

/// SC-per-location: program order between accesses of one location, together with the morally
/// strong part of communication (`rf ∪ co ∪ fr`), is acyclic.
pub fn sc_per_location(g: &Graph, ms: &Relation, com: &Relation) -> bool {
    let mut r = g.po.intersect(&g.same_loc);
    r.union_with(&com.intersect(ms));
    r.is_acyclic()
}

/// Causality, reads-from half: no read reads a write that causality orders after it.
pub fn causality_rf(rf: &Relation, cause: &Relation) -> bool {
    rf.pairs().all(|(w, r)| !cause.contains(r, w))
}

/// Causality, from-reads half: no read reads a write coherence-before one that causality orders
/// before the read.
pub fn causality_fr(fr: &Relation, cause: &Relation) -> bool {
    fr.pairs().all(|(r, w)| !cause.contains(w, r))
}
