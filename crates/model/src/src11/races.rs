//! Races in scoped C11: two conflicting accesses (same location, at least one writes, different
//! threads) unordered by happens-before race. A race involving a non-atomic access is a data
//! race; a race between atomics that fail scope inclusion is a heterogeneous race (Hower et al.,
//! ASPLOS 2014). Either makes the program's behaviour undefined.

use scopecheck_explore::{Graph, Race, RaceKind, Relation};

use super::scope::is_atomic;
use super::synchronization::HappensBefore;

pub fn races(g: &Graph, hb: &HappensBefore, inclusion: &Relation) -> Vec<Race> {
    let mut out = Vec::new();
    for a in 0..g.len() {
        let ea = &g.events[a];
        if ea.thread.is_none() || !ea.kind.is_memory() {
            continue;
        }
        let hb = hb.of(g, a);
        for b in a + 1..g.len() {
            let eb = &g.events[b];
            if eb.thread.is_none()
                || eb.thread == ea.thread
                || !g.same_loc.contains(a, b)
                || !(ea.kind.is_write() || eb.kind.is_write())
                || hb.contains(a, b)
                || hb.contains(b, a)
            {
                continue;
            }
            let kind = if !is_atomic(ea) || !is_atomic(eb) {
                RaceKind::Data
            } else if !inclusion.contains(a, b) {
                RaceKind::Heterogeneous
            } else {
                continue;
            };
            out.push(Race {
                first: a,
                second: b,
                kind,
            });
        }
    }
    out
}
