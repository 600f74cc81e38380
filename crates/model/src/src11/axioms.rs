//! The axioms of scoped RC11 (Lahav et al. PLDI 2017; scopes as in Lustig et al. ASPLOS 2019).

use scopecheck_explore::{Graph, Relation};

use super::synchronization::HappensBefore;
use crate::Platform;

pub const COHERENCE: &str = "Coherence";
pub const ATOMICITY: &str = "Atomicity";
pub const SC: &str = "SC";
pub const NO_THIN_AIR: &str = "No-Thin-Air";

/// No-Thin-Air (RC11): `sb ∪ rf` is acyclic: no load buffering at all.
pub fn no_thin_air(g: &Graph, rf: &Relation) -> bool {
    g.po.union(rf).is_acyclic()
}

/// Coherence: `hb ; eco?` is irreflexive, per location, with the happens-before of the
/// location's memory space.
pub fn coherence(g: &Graph, hb: &HappensBefore, eco: &Relation) -> bool {
    (0..g.len()).all(|i| {
        let hb = hb.of(g, i);
        !hb.contains(i, i)
            && !hb
                .successors(i)
                .any(|j| eco.contains(j, i) && g.same_loc.contains(i, j))
    })
}

/// Atomicity: `rmw ∩ (rb ; mo)` is empty: nothing comes between an RMW's read and its write,
/// except, on a platform without host-native atomics, a write from the other side (host or
/// device) of a word of host memory.
pub fn atomicity(g: &Graph, rb: &Relation, mo: &Relation, platform: &Platform) -> bool {
    g.rmw.pairs().all(|(r, w)| {
        !rb.successors(r)
            .any(|x| mo.contains(x, w) && !platform.splits_atomicity(g, w, x))
    })
}

/// SC: the scoped partial SC order is acyclic.
pub fn sc(psc: &Relation, inclusion: &Relation) -> bool {
    psc.intersect(inclusion).is_acyclic()
}
