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

use scopecheck_explore::orders::{for_each_order, Pairs};
use scopecheck_explore::{EventSet, Graph, Model, Race, Rejections, Relation, Stop};

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
    /// Besides program order, Atomicity for the new read alone: an RMW may not read a write
    /// another RMW already reads (see [`rmws_read_distinct_writes`]); checked on every read, so
    /// that the explorer drops the branch at once, whatever the graph's size.
    fn may_read_from(&self, g: &Graph, read: usize, write: usize) -> bool {
        if g.po.contains(read, write) {
            return false;
        }
        let Some(w1) = g.rmw.successors(read).next() else {
            return true;
        };
        g.rmw
            .pairs()
            .all(|(r2, w2)| r2 == read || !share_a_write(g, &self.platform, (read, w1), (r2, w2)))
    }

    /// RC11's No-Thin-Air makes `sb ∪ rf` acyclic.
    fn porf_acyclic(&self) -> bool {
        true
    }

    /// What reads-from alone already decides: No-Thin-Air, happens-before acyclic, the
    /// Coherence cases that modification order forced by happens-before settles, and
    /// Atomicity for two RMWs reading one write. Each only gets harder with more events and
    /// reads-from edges.
    fn consistent_so_far(&self, g: &Graph) -> bool {
        let rf = g.rf_relation();
        if !no_thin_air(g, &rf) {
            return false;
        }
        let inclusion = scope::scope_inclusion(g, &self.platform);
        let hb = synchronization::happens_before(g, &rf, &inclusion);
        hb.is_irreflexive()
            && coherence_from_reads_from(g, &rf, &hb)
            && rmws_read_distinct_writes(g, &self.platform)
    }

    /// One happens-before for every write a new read may take. Reading from `w` adds
    /// `w →rf read` and synchronization ending at the read, which nothing follows (nor does
    /// an RMW's write half, which no read reads): No-Thin-Air and an irreflexive
    /// happens-before hold as they did, happens-before between the other events is as it was,
    /// and of Coherence only the read's own case is new (`coherence_of_new_read`). Atomicity
    /// between RMWs is `may_read_from`'s.
    fn readable(&self, g: &Graph, read: usize, writes: &[usize]) -> Option<Vec<bool>> {
        let rf = g.rf_relation();
        let inclusion = scope::scope_inclusion(g, &self.platform);
        let (hb, new_read) =
            synchronization::happens_before_and_new_read(g, &rf, &inclusion, Some(read));
        let new_read = new_read?;
        let consistent = no_thin_air(g, &rf)
            && hb.is_irreflexive()
            && coherence_from_reads_from(g, &rf, &hb)
            && rmws_read_distinct_writes(g, &self.platform);
        if !consistent {
            return Some(vec![false; writes.len()]);
        }
        Some(
            writes
                .iter()
                .map(|&w| {
                    let past = new_read.past(&hb.global, &inclusion, w);
                    coherence_of_new_read(g, &hb.global, &past, w)
                })
                .collect(),
        )
    }

    /// Coherence (`hb ; eco?` irreflexive) forces modification order along happens-before
    /// between writes, after a write a read of it happens before (CoRW), before a write a
    /// read happens after (CoWR), and from the initial write.
    fn coherence_forced(&self, g: &Graph) -> Relation {
        let rf = g.rf_relation();
        let inclusion = scope::scope_inclusion(g, &self.platform);
        let hb = synchronization::happens_before(g, &rf, &inclusion);
        let mut mo = mo_along_happens_before(g, &hb);
        for r in g.reads.iter() {
            let Some(w) = g.rf[r] else { continue };
            let hb = hb.of(g, r);
            for w2 in g.writes.iter() {
                if w2 == w || !g.same_loc.contains(w, w2) {
                    continue;
                }
                if hb.contains(r, w2) {
                    mo.insert(w, w2);
                } else if hb.contains(w2, r) {
                    mo.insert(w2, w);
                }
            }
        }
        mo
    }

    /// Modification order is total per location: the revisiting search places each write.
    fn total_coherence(&self) -> bool {
        true
    }

    /// Atomicity with nothing between, unless the platform lets a write split the RMW.
    fn rmw_write_adjacent(&self, g: &Graph, write: usize) -> bool {
        let loc = g.events[write].kind.loc().expect("a write");
        !self.platform.may_split_rmws(g.program, loc)
    }

    fn consistent_with(&self, g: &Graph, mo: &Relation) -> Result<(), &'static str> {
        let rf = g.rf_relation();
        let inclusion = scope::scope_inclusion(g, &self.platform);
        let hb = synchronization::happens_before(g, &rf, &inclusion);
        if !hb.is_irreflexive() {
            return Err(COHERENCE);
        }
        order_verdict(g, &rf, &hb, &inclusion, mo, &self.platform)
    }

    fn extend_memos(&self, g: &Graph) {
        scope::scope_inclusion(g, &self.platform);
    }

    fn races_with(&self, g: &Graph, _mo: &Relation) -> Vec<Race> {
        let rf = g.rf_relation();
        let inclusion = scope::scope_inclusion(g, &self.platform);
        let hb = synchronization::happens_before(g, &rf, &inclusion);
        races::races(g, &hb, &inclusion)
    }

    /// Synchronizes-with (release sequences through RMWs, fences, scope inclusion).
    fn explain(&self, g: &Graph, _mo: &Relation) -> Vec<(&'static str, Relation)> {
        let rf = g.rf_relation();
        let inclusion = scope::scope_inclusion(g, &self.platform);
        vec![("sw", synchronization::sync_edges(g, &rf, &inclusion))]
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
        let inclusion = scope::scope_inclusion(g, &self.platform);
        let hb = synchronization::happens_before(g, &rf, &inclusion);
        if !hb.is_irreflexive() {
            return rejected.add(COHERENCE);
        }
        if stop.now(0) {
            return;
        }
        // Coherence forces modification order along happens-before; the initial write is
        // first. The other pairs of writes to one location are ordered by the enumeration:
        // `(a, b)`, `a < b`, as a relation (a list of the pairs of one thread's 10,000 stores
        // took 800 MB).
        let mut forced = mo_along_happens_before(g, &hb);
        // The chain the explorer chose among blind updates (`commute`).
        if let Some(fixed) = &g.fixed_co {
            forced.union_with(fixed);
        }
        if stop.now(0) {
            return;
        }
        let writes = EventSet::from_fn(g.len(), |w| {
            g.writes.contains(w) && g.events[w].thread.is_some()
        });
        let mut pairs = g.same_loc.restrict(&writes, &writes);
        pairs.keep_forward();
        let mut any = false;
        // Races depend on happens-before alone: found once, for every order accepted.
        let mut found_races: Option<Vec<Race>> = None;
        // Each order is handed on as it is found: none is held.
        let halt = || stop.step(0);
        for_each_order(&forced, Pairs::Rows(&pairs), &halt, &mut |mo| {
            if g.len() > 4096 && stop.now(0) {
                return;
            }
            any = true;
            match order_verdict(g, &rf, &hb, &inclusion, mo, &self.platform) {
                Err(axiom) => rejected.add(axiom),
                Ok(()) => accept(
                    mo,
                    found_races.get_or_insert_with(|| races::races(g, &hb, &inclusion)),
                ),
            }
        });
        if !any && !halt() {
            rejected.add(COHERENCE);
        }
    }
}

/// The modification order Coherence forces whatever reads-from is: the initial write before
/// every other write of its location, and writes ordered by happens-before.
fn mo_along_happens_before(g: &Graph, hb: &synchronization::HappensBefore) -> Relation {
    let mut mo = Relation::new(g.len());
    for w in g.writes.iter() {
        let hb = hb.of(g, w);
        let init = g.events[w].thread.is_none();
        for w2 in g.writes.iter() {
            if w2 != w && g.same_loc.contains(w, w2) && (init || hb.contains(w, w2)) {
                mo.insert(w, w2);
            }
        }
    }
    mo
}

/// The axioms that need modification order `mo`: Coherence, Atomicity and SC (No-Thin-Air and
/// an irreflexive happens-before are checked before).
fn order_verdict(
    g: &Graph,
    rf: &Relation,
    hb: &synchronization::HappensBefore,
    inclusion: &Relation,
    mo: &Relation,
    platform: &Platform,
) -> Result<(), &'static str> {
    let rb = g.fr_relation(mo);
    // `eco = (rf ∪ mo ∪ rb)+` is `rf ∪ mo ∪ rb ∪ (mo ∪ rb) ; rf` when mo is a strict total
    // order per location (Lahav et al. 2017, §3): rf;rb and rb;mo fall in mo and rb, and no
    // other composition of two steps is non-empty. No closure needed.
    let mut eco = mo.union(&rb);
    let then_read = eco.compose(rf);
    eco.union_with(&then_read);
    eco.union_with(rf);
    if !coherence(g, hb, &eco) {
        Err(COHERENCE)
    } else if !atomicity(g, &rb, mo, platform) {
        Err(ATOMICITY)
    } else if !axioms::sc(&sc::psc(g, &hb.global, mo, &rb, &eco), inclusion) {
        Err(SC)
    } else {
        Ok(())
    }
}

/// Coherence (`hb ; eco?` irreflexive) on what reads-from decides. Modification order contains
/// happens-before between writes and starts at the initial write, so a read `r` of `w` is
/// incoherent when `r` happens before `w`, or when a write `w'` that `mo` must put after `w`
/// happens before `r` or is read by a read happening before `r` (`r` then reads from before
/// `w'`, which `r` already saw).
fn coherence_from_reads_from(
    g: &Graph,
    rf: &Relation,
    hb: &synchronization::HappensBefore,
) -> bool {
    // `seen(w', r)`: `w'` happens before `r`, or a read of it does (`hb ∪ rf ; hb`), for the
    // happens-before of each memory space, computed when a read of that space needs it.
    let seen_in = |hb: &Relation| hb.union(&rf.compose(hb));
    let (mut global, mut shared) = (None, None);
    g.reads.iter().all(|r| {
        let Some(w) = g.rf[r] else { return true };
        let local = !std::ptr::eq(hb.of(g, r), &hb.global);
        let hb = hb.of(g, r);
        if hb.contains(r, w) {
            return false;
        }
        let seen = if local { &mut shared } else { &mut global };
        let seen: &Relation = seen.get_or_insert_with(|| seen_in(hb));
        nothing_seen_after(g, hb, w, |w2| seen.contains(w2, r))
    })
}

/// Whether no write that modification order must put after `w` (every other write of its
/// location when `w` is the initial write, else those `w` happens before) is `seen` by the
/// read of `w`: the per-read case of coherence.
fn nothing_seen_after(g: &Graph, hb: &Relation, w: usize, seen: impl Fn(usize) -> bool) -> bool {
    let w_init = g.events[w].thread.is_none();
    g.writes.iter().all(|w2| {
        w2 == w || !g.same_loc.contains(w, w2) || !(w_init || hb.contains(w, w2)) || !seen(w2)
    })
}

/// Coherence, as [`coherence_from_reads_from`] has it, for a read that reads from `w` and that
/// nothing follows: `past` is what happens before it. No write that modification order must
/// put after `w` happens before it or is read by a read that does.
fn coherence_of_new_read(g: &Graph, hb: &Relation, past: &EventSet, w: usize) -> bool {
    let mut seen = past.clone();
    for r in past.iter() {
        if let Some(w2) = g.rf[r] {
            seen.insert(w2);
        }
    }
    nothing_seen_after(g, hb, w, |w2| seen.contains(w2))
}

/// Atomicity on what reads-from decides: two RMWs that read the same write would each need the
/// other's write between that write and their own (modification order is total), unless the
/// platform lets one of them split.
fn rmws_read_distinct_writes(g: &Graph, platform: &Platform) -> bool {
    let rmws: Vec<(usize, usize)> = g.rmw.pairs().collect();
    rmws.iter().enumerate().all(|(k, &a)| {
        rmws[k + 1..]
            .iter()
            .all(|&b| !share_a_write(g, platform, a, b))
    })
}

/// Whether two RMWs (read, write) read the same write without the platform letting either
/// split: what [`rmws_read_distinct_writes`] forbids.
fn share_a_write(
    g: &Graph,
    platform: &Platform,
    (r1, w1): (usize, usize),
    (r2, w2): (usize, usize),
) -> bool {
    g.rf[r1].is_some()
        && g.rf[r1] == g.rf[r2]
        && !platform.splits_atomicity(g, w1, w2)
        && !platform.splits_atomicity(g, w2, w1)
}
