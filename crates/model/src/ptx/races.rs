//! Data races in PTX.
//!
//! The PTX manual defines no undefined behaviour for races, but calls two overlapping memory
//! operations a *data race* when they conflict (at least one writes), are not morally strong
//! relative to each other, and are not ordered by causality: their outcome is then only
//! constrained by the weak rules (no coherence order between racing writes, no atomicity).

use scopecheck_explore::{Graph, Race, RaceKind, Relation};

/// Every racing pair of `g` under causality `cause`, each once, in event order.
pub fn data_races(g: &Graph, ms: &Relation, cause: &Relation) -> Vec<Race> {
    let mut out = Vec::new();
    for a in 0..g.len() {
        let ea = &g.events[a];
        if ea.thread.is_none() || !ea.kind.is_memory() {
            continue;
        }
        for b in a + 1..g.len() {
            let eb = &g.events[b];
            if eb.thread.is_none()
                || eb.thread == ea.thread
                || !g.same_loc.contains(a, b)
                || !(ea.kind.is_write() || eb.kind.is_write())
            {
                continue;
            }
            if !ms.contains(a, b) && !cause.contains(a, b) && !cause.contains(b, a) {
                out.push(Race {
                    first: a,
                    second: b,
                    kind: RaceKind::Data,
                });
            }
        }
    }
    out
}
