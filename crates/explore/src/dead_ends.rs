//! The hole search's completeness gate (docs/explore.md, "Completeness of the hole search"):
//! at a dead end (threads that wait at holes no thread can fill now), whether the threads
//! that wait on each other could hide an execution that no axiom forbids. The static rules
//! come first (`statics::after_holes`, cached per thread, instruction and unknown
//! registers); where they cannot rule a cycle out, what each thread may still do from where
//! it stands (`gate::from_here`).

use std::collections::HashMap;

use scopecheck_ir::LocId;

use crate::graph::cta_key;
use crate::interp::Status;
use crate::state::{Context, State};
use crate::statics::AfterRead;

/// Why the search cannot vouch for its own completeness on this program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateFailure(pub String);

/// The gate of one search: its failure, once a dead end failed it, and the static facts it
/// asked for.
#[derive(Default)]
pub(crate) struct Gate {
    /// Why the search cannot vouch for its completeness.
    pub failure: Option<GateFailure>,
    /// What each thread could do from where it waits (by thread, instruction, unknown
    /// registers).
    after: HashMap<(usize, usize, Vec<usize>), AfterRead>,
}

impl Gate {
    /// The gate's rules for the threads `waiting` that hold holes and cannot go on: first on
    /// the static facts of each thread (`statics`); where those cannot rule out a cycle of
    /// waiting that no axiom forbids, on what the threads may still do from where they stand
    /// (`waiting_cycle`).
    pub fn check(&mut self, cx: &Context, st: &State, waiting: &[usize]) {
        if self.static_gate(cx, st, waiting) {
            if let Some(why) = cx.waiting_cycle(st, waiting) {
                self.failure = Some(GateFailure(why));
            }
        }
    }

    /// The gate on static facts: whether some rule may hold for some thread of `waiting`
    /// (docs/explore.md). Cheap, and cached per thread and instruction: most dead ends pass
    /// here.
    fn static_gate(&mut self, cx: &Context, st: &State, waiting: &[usize]) -> bool {
        let waits_on = |loc: LocId, me: usize| {
            st.threads
                .iter()
                .enumerate()
                .any(|(v, th)| v != me && th.holes.iter().any(|h| h.1.loc == loc))
        };
        for &u in waiting {
            let th = &st.threads[u];
            let key = (u, th.pc(), th.unknown_registers().collect::<Vec<_>>());
            let after = match self.after.get(&key) {
                Some(a) => a.clone(),
                None => {
                    let a = crate::statics::after_holes(
                        cx.program,
                        &cx.program.threads[u],
                        key.1,
                        &key.2,
                    );
                    self.after.insert(key, a.clone());
                    a
                }
            };
            if after.reaches_arrive && cx.barrier_waits(st, u) {
                return true;
            }
            if cx.successors[u]
                .iter()
                .any(|&s| cx.statics[s].writes.iter().any(|&l| waits_on(l, u)))
            {
                return true;
            }
            if !cx.model.porf_acyclic() && after.independent_writes.iter().any(|&l| waits_on(l, u))
            {
                return true;
            }
        }
        false
    }
}

impl Context<'_, '_> {
    /// When some hole can never be filled (no thread that may still write its location can
    /// still run), the threads with holes that cannot run: they wait on each other in a
    /// cycle, or on threads that stopped. Threads that can run are the least set holding every thread not suspended
    /// and not stopped, and every suspended thread with a hole some thread of the set may fill;
    /// the others wait on each other in a cycle, or on threads that stopped.
    pub fn unfillable_hole(&self, st: &State) -> Option<Vec<usize>> {
        if st.threads.iter().all(|t| t.holes.is_empty()) {
            return None;
        }
        let n = st.threads.len();
        let mut live: Vec<bool> = st
            .threads
            .iter()
            .map(|t| !matches!(t.status, Status::Suspended | Status::Stopped))
            .collect();
        // Whether `w` may still make a write of `loc` that thread `t` can read.
        let may_fill = |live: &[bool], w: usize, t: usize, loc: LocId| {
            w != t
                && live[w]
                && !self.successors[t].contains(&w)
                && self.still_writes(st, w).binary_search(&loc).is_ok()
        };
        loop {
            let mut grew = false;
            for t in 0..n {
                if live[t] || st.threads[t].status != Status::Suspended {
                    continue;
                }
                let fillable = st.threads[t]
                    .holes
                    .iter()
                    .any(|h| (0..n).any(|w| may_fill(&live, w, t, h.1.loc)));
                if fillable {
                    live[t] = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let unfillable = st.threads.iter().enumerate().any(|(t, th)| {
            th.holes
                .iter()
                .any(|h| !(0..n).any(|w| may_fill(&live, w, t, h.1.loc)))
        });
        if !unfillable {
            return None;
        }
        // Of the threads that cannot run, those in a cycle: a hole of one that another of them
        // could fill, were it running. A hole whose writers all stopped is dead, no cycle.
        let blocked = |t: usize| !live[t] && st.threads[t].status == Status::Suspended;
        let everyone = vec![true; n];
        let mut cycle: Vec<usize> = Vec::new();
        for t in (0..n).filter(|&t| blocked(t)) {
            for w in (0..n).filter(|&w| blocked(w)) {
                let feeds = st.threads[t]
                    .holes
                    .iter()
                    .any(|h| may_fill(&everyone, w, t, h.1.loc));
                if feeds {
                    cycle.extend([t, w]);
                }
            }
        }
        cycle.sort_unstable();
        cycle.dedup();
        Some(cycle)
    }

    /// Whether some thread of `u`'s CTA waits at a barrier or collective.
    fn barrier_waits(&self, st: &State, u: usize) -> bool {
        let cta = cta_key(&self.program.threads[u].placement, u);
        (0..st.threads.len()).any(|w| {
            matches!(st.threads[w].status, Status::Waiting(_))
                && cta_key(&self.program.threads[w].placement, w) == cta
        })
    }

    /// The precise gate, where the static one failed: the threads of `waiting`
    /// are linked `u -> v` when `u`, stuck, may hold up a write that a hole of `v` waits for:
    /// a write `u` may still make from where it stands (which depends on `u`'s holes, unless
    /// it is among its independent writes), a write of a thread held at a barrier or
    /// collective `u` may still reach, or a write of a thread launched after `u`. Along a
    /// consistent execution's path, a dead end needs a cycle of such links, each one real;
    /// a cycle of dependent writes alone is an `rf ∪ dep` cycle, which No-Thin-Air forbids.
    /// So the gate fails only for a cycle through a link of another kind (with its reason).
    fn waiting_cycle(&self, st: &State, waiting: &[usize]) -> Option<String> {
        let k = waiting.len();
        let holes: Vec<Vec<LocId>> = waiting
            .iter()
            .map(|&v| st.threads[v].holes.iter().map(|h| h.1.loc).collect())
            .collect();
        // The threads of `waiting` (by index) other than `writer` with a hole `locs` may fill.
        let fed = |locs: &[LocId], writer: usize| -> Vec<usize> {
            (0..k)
                .filter(|&j| waiting[j] != writer && holes[j].iter().any(|l| locs.contains(l)))
                .collect()
        };
        // What each thread held at a barrier may write once released: from where it waits,
        // and through the threads launched after it. A thread released by an arrival of a
        // stuck thread `u` is one of `u`'s CTA; whatever it then does that another of the
        // CTA waits for at a barrier or collective is covered too, since those wait here as
        // well.
        let held: Vec<(usize, Vec<LocId>)> = (0..st.threads.len())
            .filter(|&w| matches!(st.threads[w].status, Status::Waiting(_)))
            .map(|w| {
                let mut writes = self.may_still_do(st, w).writes;
                for &s in &self.successors[w] {
                    writes.extend_from_slice(&self.statics[s].writes);
                }
                (w, writes)
            })
            .collect();
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); k];
        // (from, to, why) of the links no axiom rules out by themselves
        let mut risky: Vec<(usize, usize, String)> = Vec::new();
        for (i, &u) in waiting.iter().enumerate() {
            let name = &self.program.threads[u].name;
            let here = self.may_still_do(st, u);
            edges[i].extend(fed(&here.writes, u));
            if !self.model.porf_acyclic() {
                for j in fed(&here.independent_writes, u) {
                    risky.push((i, j, format!(
                        "{name} could write, without the value it waits for, what another thread waits for"
                    )));
                }
            }
            for &s in &self.successors[u] {
                for j in fed(&self.statics[s].writes, u) {
                    risky.push((i, j, format!(
                        "{name} waits for a value before threads launched after it write what others wait for"
                    )));
                }
            }
            if here.reaches_arrive && self.barrier_waits(st, u) {
                // Only the rounds of its own CTA (its barriers, its warp's collectives) wait
                // for its arrival: threads held elsewhere wait for someone else.
                let cta = cta_key(&self.program.threads[u].placement, u);
                let mates = held
                    .iter()
                    .filter(|(w, _)| cta_key(&self.program.threads[*w].placement, *w) == cta);
                for (w, writes) in mates {
                    for j in fed(writes, *w) {
                        risky.push((
                            i,
                            j,
                            format!("{name} waits for a value before a barrier others wait at"),
                        ));
                    }
                }
            }
        }
        for &(i, j, _) in &risky {
            edges[i].push(j);
        }
        // A risky link `i -> j` closes a cycle when `j` reaches `i`.
        let reaches = |from: usize, to: usize| {
            let mut seen = vec![false; k];
            let mut stack = vec![from];
            while let Some(x) = stack.pop() {
                if x == to {
                    return true;
                }
                if !std::mem::replace(&mut seen[x], true) {
                    stack.extend(edges[x].iter().copied());
                }
            }
            false
        };
        risky
            .into_iter()
            .find(|&(i, j, _)| reaches(j, i))
            .map(|(_, _, why)| why)
    }

    /// What thread `t` may still do from where it stands (`gate::from_here`), with what a
    /// barrier or collective it waits at will give as values to come.
    fn may_still_do(&self, st: &State, t: usize) -> crate::gate::FromHere {
        let th = &st.threads[t];
        // Stores it made with a value still to come from a hole: writes it may still make
        // readable, each depending on the hole.
        let made: Vec<LocId> = th
            .value_holes
            .iter()
            .filter_map(|&w| th.trace.events[w].kind.loc())
            .collect();
        let (values, windows, unknown) = th.registers();
        let mut fresh = Vec::new();
        if let Status::Waiting(w) = &th.status {
            fresh.extend(w.red.map(|r| r.1));
            if let Some(ww) = w.warp {
                fresh.extend(ww.dst);
                fresh.extend(ww.pred_dst);
            }
        }
        let mut here = crate::gate::from_here(
            self.program,
            &self.program.threads[t],
            th.pc(),
            crate::gate::Registers {
                values,
                windows,
                unknown,
                fresh: &fresh,
            },
        );
        here.writes.extend(made);
        here.writes.sort_unstable();
        here.writes.dedup();
        here
    }
}
