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

use scopecheck_explore::orders::{for_each_order, for_each_order_pruned, Pairs};
use scopecheck_explore::{Graph, Model, Race, Rejections, Relation, Stop};

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
        stop: &dyn Stop,
        accept: &mut dyn FnMut(&Relation, &[Race]),
    ) {
        // Each step below is work on relations of the whole graph (milliseconds each on
        // thousands of events): the budget is asked between them, reading the clock (`now`).
        let rf = g.rf_relation();
        if !no_thin_air(g, &rf) {
            return rejected.add(NO_THIN_AIR);
        }
        if stop.now(0) {
            return;
        }
        let ms = strength::morally_strong(g, &self.platform);
        // Morally strong reads-from and program order alone already decide some cycles.
        if !sc_per_location(g, &ms, &rf) {
            return rejected.add(SC_PER_LOCATION);
        }
        if stop.now(0) {
            return;
        }
        let obs = observation::observation(g, &rf, &ms);
        if stop.now(0) {
            return;
        }
        let sync = synchronization::release_acquire_sync(g, &obs, &ms);
        let (sc_pairs, sc_forced) = synchronization::fence_sc_pairs(g, &ms);
        let write_pairs = coherence_pairs(g, &ms);

        // Each coherence order once, with the races of every Fence-SC order that allows it.
        let mut found: Vec<(Relation, Vec<Race>)> = Vec::new();
        let mut index: std::collections::HashMap<Relation, usize> = Default::default();
        // The executions found and held, for the budget (they are handed on at the end).
        let held = std::cell::Cell::new(0u128);
        let halt = || stop.step(held.get());
        // Inside the enumerations, the clock is read at each piece of work only where the
        // pieces are long (relations past 4,096 events: 2 MB each, a millisecond's work).
        let halt_now = || {
            if g.len() > 4096 {
                stop.now(held.get())
            } else {
                stop.step(held.get())
            }
        };
        for_each_order(&sc_forced, Pairs::List(&sc_pairs), &halt, &mut |sc| {
            if halt_now() {
                return;
            }
            let base = causality::base_causality(g, &[&sync, sc]);
            if halt_now() {
                return;
            }
            let cause = causality::causality(&base, &obs);
            if halt_now() {
                return;
            }
            if !fence_sc(&cause) {
                return rejected.add(FENCE_SC);
            }
            if !causality_rf(&rf, &cause) {
                return rejected.add(CAUSALITY);
            }
            if halt_now() {
                return;
            }
            let mut forced = coherence_forced(g, &cause);
            // The chain the explorer chose among blind updates (`commute`).
            if let Some(fixed) = &g.fixed_co {
                forced.union_with(fixed);
            }
            let mut any = false;
            // Data races depend on causality alone: found once per Fence-SC order.
            let mut sc_races: Option<Vec<Race>> = None;
            // Atomicity, SC-per-location and the from-reads half of Causality only get harder
            // with more coherence edges: a partial order failing one has no good extension.
            // A check the budget cut short says dead: nothing more is looked at (the
            // enumeration asks the budget next and stops).
            let dead = |co: &Relation| {
                let fr = g.fr_relation(co);
                halt_now()
                    || !atomicity(g, &ms, co, &fr, &self.platform)
                    || halt_now()
                    || !sc_per_location(g, &ms, &rf.union(co).union(&fr))
                    || halt_now()
                    || !causality_fr(&fr, &cause)
            };
            for_each_order_pruned(
                &forced,
                Pairs::Rows(&write_pairs),
                &dead,
                &halt,
                &mut |co| {
                    any = true;
                    let fr = g.fr_relation(co);
                    let verdict = if !atomicity(g, &ms, co, &fr, &self.platform) {
                        Err(ATOMICITY)
                    } else if halt_now() {
                        return;
                    } else if !sc_per_location(g, &ms, &rf.union(co).union(&fr)) {
                        Err(SC_PER_LOCATION)
                    } else if halt_now() {
                        return;
                    } else if !causality_fr(&fr, &cause) {
                        Err(CAUSALITY)
                    } else {
                        Ok(())
                    };
                    if halt_now() {
                        return;
                    }
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
                },
            );
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

/// Pairs `(a, b)`, `a < b`, of writes (initial writes aside) that coherence must relate: the
/// morally strong ones. A relation, a row per write and a word per 64 events, where a list
/// of the pairs took 16 bytes each (50 million of them for one thread of 10,000 stores).
fn coherence_pairs(g: &Graph, ms: &Relation) -> Relation {
    let writes = scopecheck_explore::EventSet::from_fn(g.len(), |w| {
        g.writes.contains(w) && g.events[w].thread.is_some()
    });
    let mut pairs = ms.restrict(&writes, &writes);
    pairs.keep_forward();
    pairs
}
