//! Observation order.
//!
//! PTX ISA, "Observation order": a write W precedes a read R in observation order if R and W are
//! morally strong and R reads the value written by W, or, for some atomic operation Z, W precedes
//! Z and Z precedes R in observation order. With an RMW split into a read and a write linked by
//! `rmw`, that is `obs = (rf ∩ ms) ; (rmw ; (rf ∩ ms))*`.

use scopecheck_explore::{Graph, Relation};

pub fn observation(g: &Graph, rf: &Relation, ms: &Relation) -> Relation {
    let strong_rf = rf.intersect(ms);
    let mut obs = strong_rf.clone();
    if g.rmw.is_empty() {
        return obs;
    }
    loop {
        let longer = obs.compose(&g.rmw).compose(&strong_rf);
        let before = obs.clone();
        obs.union_with(&longer);
        if obs == before {
            return obs;
        }
    }
}
