//! Scoped C11: the model of CUDA C++ (libcu++) and OpenCL 2.0 atomics. RC11 (Lahav et al.,
//! PLDI 2017) with scopes and scope inclusion (Lustig, Sahasrabuddhe, Giroux, ASPLOS 2019), the
//! OpenCL distinction between global and local fences, and race detection (data races and
//! heterogeneous races, Hower et al. ASPLOS 2014).
//!
//! Modification order is total over the writes of each location; the explorer's order
//! enumeration chooses it, with happens-before between writes forced (Coherence).

pub mod axioms;
pub mod races;
pub mod sc;
pub mod scope;
pub mod synchronization;

use scopecheck_explore::orders::for_each_order;
use scopecheck_explore::{Graph, Model, Race, Rejections, Relation};

use axioms::*;

use crate::Platform;

/// The scoped C11 model (`--model src11`), on a platform.
#[derive(Clone, Debug)]
pub struct ScopedC11 {
    pub platform: Platform,
}

impl Default for ScopedC11 {
    fn default() -> Self {
        ScopedC11 {
            platform: Platform::ideal(),
        }
    }
}

impl Model for ScopedC11 {
    fn name(&self) -> &'static str {
        "src11"
    }

    /// `sb ∪ rf` must be acyclic: a read never reads a write program-order after it.
    fn may_read_from(&self, g: &Graph, read: usize, write: usize) -> bool {
        !g.po.contains(read, write)
    }

    fn executions(
        &self,
        g: &Graph,
        rejected: &mut Rejections,
        accept: &mut dyn FnMut(&Relation, &[Race]),
    ) {
        let rf = g.rf_relation();
        if !no_thin_air(g, &rf) {
            return rejected.add(NO_THIN_AIR);
        }
        let inclusion = scope::scope_inclusion(g, &self.platform);
        let hb = synchronization::happens_before(g, &rf, &inclusion);
        if !hb.is_irreflexive() {
            return rejected.add(COHERENCE);
        }
        // Coherence forces modification order along happens-before; the initial write is first.
        let mut forced = Relation::new(g.len());
        let writes: Vec<usize> = g.writes.iter().collect();
        let mut pairs = Vec::new();
        for (k, &a) in writes.iter().enumerate() {
            for &b in &writes[k + 1..] {
                if !g.same_loc.contains(a, b) {
                    continue;
                }
                let (ia, ib) = (g.events[a].thread.is_none(), g.events[b].thread.is_none());
                if ia || ib {
                    let (first, second) = if ia { (a, b) } else { (b, a) };
                    forced.insert(first, second);
                } else {
                    if hb.of(g, a).contains(a, b) {
                        forced.insert(a, b);
                    } else if hb.of(g, a).contains(b, a) {
                        forced.insert(b, a);
                    }
                    pairs.push((a, b));
                }
            }
        }
        let mut any = false;
        for_each_order(&forced, &pairs, &mut |mo| {
            any = true;
            let rb = g.fr_relation(mo);
            let mut eco = rf.union(mo);
            eco.union_with(&rb);
            eco.close();
            let verdict = if !coherence(g, &hb, &eco) {
                Err(COHERENCE)
            } else if !atomicity(g, &rb, mo, &self.platform) {
                Err(ATOMICITY)
            } else if !axioms::sc(&sc::psc(g, &hb.global, mo, &rb, &eco), &inclusion) {
                Err(SC)
            } else {
                Ok(())
            };
            match verdict {
                Err(axiom) => rejected.add(axiom),
                Ok(()) => accept(mo, &races::races(g, &hb, &inclusion)),
            }
        });
        if !any {
            rejected.add(COHERENCE);
        }
    }
}
