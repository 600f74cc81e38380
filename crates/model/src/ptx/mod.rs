//! The PTX memory consistency model (sm_70 and later), as in the PTX ISA manual's chapter
//! "Memory Consistency Model" and its formalisation by Lustig, Sahasrabuddhe and Giroux
//! (ASPLOS 2019). `docs/ptx-model.md` gives the whole model in one page.
//!
//! Per execution (paths and reads-from fixed by the explorer) the model quantifies over the
//! Fence-SC order and the coherence order, and accepts each coherence order for which some
//! Fence-SC order satisfies every axiom. Coherence is partial: only morally strong or
//! causality-ordered writes are related, and we build the least such order, since every axiom
//! only gets harder to satisfy with more coherence edges.

pub mod axioms;
pub mod causality;
pub mod mapping;
pub mod observation;
pub mod races;
pub mod strength;
pub mod synchronization;

use scopecheck_explore::orders::{for_each_order, for_each_order_pruned};
use scopecheck_explore::{Graph, Model, Race, Rejections, Relation};

use axioms::*;

use crate::Platform;

/// The PTX model, on a platform (which decides whether host and device accesses to host
/// memory can be morally strong and atomic together).
#[derive(Clone, Debug)]
pub struct Ptx {
    pub platform: Platform,
}

impl Default for Ptx {
    fn default() -> Self {
        Ptx {
            platform: Platform::ideal(),
        }
    }
}

impl Model for Ptx {
    fn name(&self) -> &'static str {
        "ptx"
    }

    /// A read never reads a write of its own thread that comes later in program order: program
    /// order and reads-from between them would close an SC-per-location cycle.
    fn may_read_from(&self, g: &Graph, read: usize, write: usize) -> bool {
        !g.po.contains(read, write)
    }

    /// No-Thin-Air, SC-per-location and the reads-from half of Causality on the reads-from
    /// chosen so far (causality without the Fence-SC order, a part of every choice of it), then
    /// SC-per-location, Atomicity and the from-reads half of Causality against the coherence
    /// edges every consistent coherence order contains (the initial write first, writes in
    /// causality order: Coherence). All only get harder with more events and edges.
    fn consistent_so_far(&self, g: &Graph) -> bool {
        let rf = g.rf_relation();
        if !no_thin_air(g, &rf) {
            return false;
        }
        let ms = strength::morally_strong(g, &self.platform);
        if !sc_per_location(g, &ms, &rf) || !rmws_read_distinct_writes(g, &ms) {
            return false;
        }
        let cause = causality_without_fence_sc(g, &rf, &ms);
        if !cause.is_irreflexive() || !causality_rf(&rf, &cause) {
            return false;
        }
        let co = coherence_forced(g, &cause).closure();
        let fr = g.fr_relation(&co);
        co.is_irreflexive()
            && sc_per_location(g, &ms, &rf.union(&co).union(&fr))
            && atomicity(g, &ms, &co, &fr, &self.platform)
            && causality_fr(&fr, &cause)
    }

    fn extend_memos(&self, g: &Graph) {
        strength::morally_strong(g, &self.platform);
    }

    /// Coherence: the initial write first, then writes in causality order, for causality
    /// without the Fence-SC order (a part of every choice of it).
    fn coherence_forced(&self, g: &Graph) -> Relation {
        let ms = strength::morally_strong(g, &self.platform);
        coherence_forced(g, &causality_without_fence_sc(g, &g.rf_relation(), &ms))
    }

    /// Synchronization by release and acquire patterns (PTX ISA, "Synchronizes-with").
    /// Fence-SC synchronization is left out: its order is chosen per execution and not kept.
    fn explain(&self, g: &Graph, _co: &Relation) -> Vec<(&'static str, Relation)> {
        let rf = g.rf_relation();
        let ms = strength::morally_strong(g, &self.platform);
        let obs = observation::observation(g, &rf, &ms);
        vec![("sw", synchronization::release_acquire_sync(g, &obs, &ms))]
    }

    fn executions(
        &self,
        g: &Graph,
        rejected: &mut Rejections,
        stop: &dyn Fn(u128) -> bool,
        accept: &mut dyn FnMut(&Relation, &[Race]),
    ) {
        let rf = g.rf_relation();
        if !no_thin_air(g, &rf) {
            return rejected.add(NO_THIN_AIR);
        }
        let ms = strength::morally_strong(g, &self.platform);
        // Morally strong reads-from and program order alone already decide some cycles.
        if !sc_per_location(g, &ms, &rf) {
            return rejected.add(SC_PER_LOCATION);
        }
        let obs = observation::observation(g, &rf, &ms);
        let sync = synchronization::release_acquire_sync(g, &obs, &ms);
        let (sc_pairs, sc_forced) = synchronization::fence_sc_pairs(g, &ms);
        let write_pairs = coherence_pairs(g, &ms);

        // Each coherence order once, with the races of every Fence-SC order that allows it.
        let mut found: Vec<(Relation, Vec<Race>)> = Vec::new();
        let mut index: std::collections::HashMap<Relation, usize> = Default::default();
        // The executions found and held, for the budget (they are handed on at the end).
        let held = std::cell::Cell::new(0u128);
        let halt = || stop(held.get());
        for_each_order(&sc_forced, &sc_pairs, &halt, &mut |sc| {
            let base = causality::base_causality(g, &[&sync, sc]);
            let cause = causality::causality(&base, &obs);
            if !fence_sc(&cause) {
                return rejected.add(FENCE_SC);
            }
            if !causality_rf(&rf, &cause) {
                return rejected.add(CAUSALITY);
            }
            let forced = coherence_forced(g, &cause);
            let mut any = false;
            // Data races depend on causality alone: found once per Fence-SC order.
            let mut sc_races: Option<Vec<Race>> = None;
            // Atomicity, SC-per-location and the from-reads half of Causality only get harder
            // with more coherence edges: a partial order failing one has no good extension.
            let dead = |co: &Relation| {
                let fr = g.fr_relation(co);
                !atomicity(g, &ms, co, &fr, &self.platform)
                    || !sc_per_location(g, &ms, &rf.union(co).union(&fr))
                    || !causality_fr(&fr, &cause)
            };
            for_each_order_pruned(&forced, &write_pairs, &dead, &halt, &mut |co| {
                any = true;
                let fr = g.fr_relation(co);
                let verdict = if !atomicity(g, &ms, co, &fr, &self.platform) {
                    Err(ATOMICITY)
                } else if !sc_per_location(g, &ms, &rf.union(co).union(&fr)) {
                    Err(SC_PER_LOCATION)
                } else if !causality_fr(&fr, &cause) {
                    Err(CAUSALITY)
                } else {
                    Ok(())
                };
                match verdict {
                    Err(axiom) => rejected.add(axiom),
                    // Different Fence-SC orders may allow the same coherence order: one execution.
                    Ok(()) => {
                        let races =
                            sc_races.get_or_insert_with(|| races::data_races(g, &ms, &cause));
                        match index.get(co) {
                            Some(&k) => {
                                let known = &mut found[k].1;
                                for r in races.iter() {
                                    if !known.contains(r) {
                                        known.push(*r);
                                    }
                                }
                            }
                            None => {
                                index.insert(co.clone(), found.len());
                                found.push((co.clone(), races.clone()));
                                held.set(held.get() + 1);
                            }
                        }
                    }
                }
            });
            // An enumeration the budget ended found nothing because it stopped.
            if !any && !halt() {
                rejected.add(COHERENCE);
            }
        });
        for (co, races) in &found {
            accept(co, races);
        }
    }
}

/// Causality order from release/acquire synchronization alone, a part of causality for every
/// choice of the Fence-SC order: what the partial graph's checks may rely on.
fn causality_without_fence_sc(g: &Graph, rf: &Relation, ms: &Relation) -> Relation {
    let obs = observation::observation(g, rf, ms);
    let sync = synchronization::release_acquire_sync(g, &obs, ms);
    causality::causality(&causality::base_causality(g, &[&sync]), &obs)
}

/// Atomicity, seen from reads-from alone: two morally strong RMWs never read the same write `W`
/// when `W` is the initial write or morally strong with both. Both RMW writes then follow `W` in
/// coherence (initial writes come first; otherwise SC-per-location orders `W` before an RMW
/// write whose read reads it), and they are ordered with each other, so the later one would read
/// a write coherence-before the earlier one's write.
fn rmws_read_distinct_writes(g: &Graph, ms: &Relation) -> bool {
    let rmws: Vec<(usize, usize)> = g.rmw.pairs().collect();
    let before = |w: usize, r: usize| g.events[w].thread.is_none() || ms.contains(w, r);
    rmws.iter().enumerate().all(|(k, &(r1, w1))| {
        rmws[k + 1..]
            .iter()
            .all(|&(r2, w2)| match (g.rf[r1], g.rf[r2]) {
                (Some(a), Some(b)) if a == b => {
                    !(ms.contains(w1, w2) && before(a, r1) && before(a, r2))
                }
                _ => true,
            })
    })
}

/// Pairs of writes to one location (initial writes aside) that coherence must relate: the
/// morally strong ones.
fn coherence_pairs(g: &Graph, ms: &Relation) -> Vec<(usize, usize)> {
    let writes: Vec<usize> = g
        .writes
        .iter()
        .filter(|&w| g.events[w].thread.is_some())
        .collect();
    let mut pairs = Vec::new();
    for (k, &a) in writes.iter().enumerate() {
        for &b in &writes[k + 1..] {
            if ms.contains(a, b) {
                pairs.push((a, b));
            }
        }
    }
    pairs
}
