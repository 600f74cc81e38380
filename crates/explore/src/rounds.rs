//! Rounds of CTA barriers as the PTX ISA defines them (`barrier{.cta}`): a round completes once
//! its thread count of threads has arrived (every thread of the CTA when no count is given),
//! releases its waiters, and the barrier starts the next round with the arrivals that follow.
//!
//! Which arrivals fill a round is the execution's choice: in time, the first `count` to arrive,
//! whichever threads make them (a thread that arrives twice with `bar.arrive` counts twice, as
//! the barrier's counter does). The search makes that choice explicitly. Whenever a barrier has
//! at least `count` arrivals not yet in a round, it branches over the sets of `count` of them
//! that are closed under the causal order among them (an arrival that must have happened before
//! a member is a member too: it came first; a thread's own arrivals in program order among
//! them), and over *deferring*: leaving the round to arrivals still to come, if some thread of
//! the CTA may still arrive. A deferred barrier forms its next round only with at
//! least one arrival it did not have when it deferred, so that no round is formed at two points
//! of one path; a path that ends with a deferral pending is no execution (its round would have
//! completed) and is dropped. Rounds that complete in another order in time can give the same
//! execution graph, so leaves reached after a choice are compared ([`LeavesSeen::first_visit`]).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::digest::DigestSet;
use crate::graph::{barrier_group, barrier_members, BarrierGroup};
use crate::interp::Status;
use crate::state::{Context, State};
use crate::trace::{BarrierName, EventKind, PathEnd};

/// One round of a CTA barrier: the arrivals (thread, path index) that filled it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Round {
    pub group: BarrierGroup,
    pub id: u32,
    pub arrivals: Vec<(usize, usize)>,
}

/// An arrival: (thread, path index).
type Arrival = (usize, usize);

/// The rounds an execution has formed so far, and the choices still open.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rounds {
    pub formed: Vec<Round>,
    /// Barriers whose next round must hold an arrival other than these.
    deferred: Vec<(BarrierGroup, u32, Vec<Arrival>)>,
    /// A round was chosen among several ways along this path.
    pub chosen: bool,
}

impl Rounds {
    /// The round that arrival `k` of thread `t` is in.
    pub fn round_of(&self, t: usize, k: usize) -> Option<&Round> {
        self.formed.iter().find(|r| r.arrivals.contains(&(t, k)))
    }

    /// Whether a deferred round is still waiting for an arrival that never came.
    pub fn deferral_pending(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// The deferred barriers: each one's id and the arrivals it had when it deferred.
    pub fn deferred(&self) -> impl Iterator<Item = (u32, &[Arrival])> + '_ {
        self.deferred.iter().map(|d| (d.1, d.2.as_slice()))
    }

    /// What is left after a revisit cut each thread `u` back to `kept(u)` events: the rounds
    /// whose arrivals are all kept (a kept wait's round always is); the others' arrivals are
    /// pending again, and choices made after the cut are open again.
    pub fn cut(&mut self, kept: impl Fn(usize) -> usize) {
        self.formed
            .retain(|r| r.arrivals.iter().all(|&(u, k)| k < kept(u)));
        self.deferred.clear();
    }
}

/// The branches of a barrier's next round still to explore (`Branches::next`).
pub(crate) struct Branches<'p> {
    st: State<'p>,
    f: Formable,
    sets: std::vec::IntoIter<Vec<(usize, usize)>>,
}

/// A barrier whose next round can be formed now.
struct Formable {
    group: BarrierGroup,
    id: u32,
    count: usize,
    /// The arrivals in no round yet, with whether the barrier's deferral (if any) did not have
    /// it.
    eligible: Vec<((usize, usize), bool)>,
    /// Some thread of the CTA without an eligible arrival may still arrive.
    may_defer: bool,
}

/// What forming the rounds that leave no choice came to.
pub(crate) enum Formed<'p> {
    /// The state to go on with.
    Go(State<'p>),
    /// A choice of rounds to branch over.
    Branch(Branches<'p>),
}

impl<'p> Branches<'p> {
    /// The next branch: the state with the next set of arrivals formed into the round, then
    /// the state with the round deferred; with it, the branches left, if any.
    pub fn next(mut self) -> Option<(State<'p>, Option<Self>)> {
        if let Some(set) = self.sets.next() {
            let mut next = self.st.clone();
            form(&mut next, &self.f, set);
            next.rounds.chosen = true;
            let more = self.sets.len() > 0 || self.f.may_defer;
            Some((next, more.then_some(self)))
        } else if self.f.may_defer {
            let f = self.f;
            let mut next = self.st;
            next.rounds
                .deferred
                .retain(|d| (d.0, d.1) != (f.group, f.id));
            let have = f.eligible.iter().map(|e| e.0).collect();
            next.rounds.deferred.push((f.group, f.id, have));
            next.rounds.chosen = true;
            Some((next, None))
        } else {
            None
        }
    }
}

/// Forms the next round of `f`'s barrier with `arrivals`.
fn form(st: &mut State, f: &Formable, arrivals: Vec<(usize, usize)>) {
    st.rounds.deferred.retain(|d| (d.0, d.1) != (f.group, f.id));
    st.rounds.formed.push(Round {
        group: f.group,
        id: f.id,
        arrivals,
    });
}

/// The digests of the leaves reached after a choice of barrier rounds (`Rounds::chosen`).
#[derive(Default)]
pub(crate) struct LeavesSeen(DigestSet);

impl LeavesSeen {
    /// Whether this leaf, reached after a choice of rounds, is an execution not reached
    /// before (the same graph can come from rounds completed in another order).
    pub fn first_visit(&mut self, st: &State) -> bool {
        if !st.rounds.chosen {
            return true;
        }
        let g = &st.graph;
        // Graph indices depend on the order events were added: name events by thread and
        // path position instead.
        let name = |x: usize| -> (usize, usize) {
            match g.events[x].thread {
                Some(t) => (t.0 as usize, g.path_index(t.0 as usize, x)),
                None => (usize::MAX, x),
            }
        };
        let mut key = String::new();
        for th in st.threads.iter() {
            key.push_str(&format!(
                "{:?}{:?}|",
                th.trace.events.iter().map(|e| e.kind).collect::<Vec<_>>(),
                th.trace.end
            ));
        }
        let mut rf: Vec<_> = g
            .reads
            .iter()
            .map(|x| (name(x), g.rf[x].map(name)))
            .collect();
        rf.sort_unstable();
        key.push_str(&format!("{rf:?}"));
        let mut sync: Vec<_> = g
            .barrier_sync
            .pairs()
            .map(|(a, b)| (name(a), name(b)))
            .collect();
        sync.sort_unstable();
        key.push_str(&format!("{sync:?}"));
        for order in &st.co {
            key.push_str(&format!(
                "{:?}",
                order.iter().map(|&x| name(x)).collect::<Vec<_>>()
            ));
        }
        let mut h1 = DefaultHasher::new();
        key.hash(&mut h1);
        let mut h2 = DefaultHasher::new();
        (key.len(), &key, 0x5c0_9ec4u32).hash(&mut h2);
        let digest = (u128::from(h1.finish()) << 64) | u128::from(h2.finish());
        self.0.insert(digest)
    }
}

/// The thread count a CTA barrier arrival asks for: its own, or every thread of the CTA.
fn round_size(count: Option<u32>, members: usize) -> usize {
    count.map_or(members, |c| c as usize)
}

impl<'p> Context<'_, 'p> {
    /// Forms every round of `st` whose arrivals leave no choice: the state to go on with, or
    /// the branches of the first choice.
    pub fn form_rounds(&self, mut st: State<'p>) -> Formed<'p> {
        loop {
            let Some(f) = self.formable(&st) else {
                return Formed::Go(st);
            };
            let sets = self.round_sets(&st, &f);
            if sets.len() == 1 && !f.may_defer {
                let set = sets.into_iter().next().expect("one set");
                form(&mut st, &f, set);
                continue;
            }
            return Formed::Branch(Branches {
                st,
                f,
                sets: sets.into_iter(),
            });
        }
    }

    /// The first barrier (in thread and path order of its arrivals) whose next round can be
    /// formed now.
    fn formable(&self, st: &State) -> Option<Formable> {
        let mut seen: Vec<(BarrierGroup, u32)> = Vec::new();
        for (t, th) in st.threads.iter().enumerate() {
            for e in &th.trace.events {
                let EventKind::Arrive {
                    barrier: b @ BarrierName::Cta(id),
                    ..
                } = e.kind
                else {
                    continue;
                };
                let group = barrier_group(self.program, t, b);
                if seen.contains(&(group, id)) {
                    continue;
                }
                seen.push((group, id));
                if let Some(f) = self.formable_at(st, t, group, id) {
                    return Some(f);
                }
            }
        }
        None
    }

    fn formable_at(&self, st: &State, t: usize, group: BarrierGroup, id: u32) -> Option<Formable> {
        let barrier = BarrierName::Cta(id);
        let members = barrier_members(self.program, t, barrier);
        let mut eligible = Vec::new();
        let mut count = None;
        for &u in &members {
            let th = &st.threads[u];
            // A thread that faulted ends its execution's judgement; its arrivals fill nothing.
            if matches!(th.trace.end, PathEnd::Fault { .. }) {
                continue;
            }
            for (k, e) in th.trace.events.iter().enumerate() {
                if let EventKind::Arrive {
                    barrier: b,
                    count: c,
                    ..
                } = e.kind
                {
                    if b == barrier && st.rounds.round_of(u, k).is_none() {
                        count.get_or_insert(round_size(c, members.len()));
                        eligible.push((u, k));
                    }
                }
            }
        }
        let count = count?;
        if eligible.len() < count {
            return None;
        }
        let deferral = st
            .rounds
            .deferred
            .iter()
            .find(|d| (d.0, d.1) == (group, id));
        let eligible: Vec<((usize, usize), bool)> = eligible
            .into_iter()
            .map(|a| (a, deferral.is_none_or(|d| !d.2.contains(&a))))
            .collect();
        if deferral.is_some() && !eligible.iter().any(|e| e.1) {
            return None;
        }
        // A thread that waits at this barrier arrives again only after its round.
        let may_defer = members.iter().any(|&u| match &st.threads[u].status {
            Status::Stopped => false,
            Status::Waiting(w) => w.barrier != barrier,
            _ => true,
        });
        Some(Formable {
            group,
            id,
            count,
            eligible,
            may_defer,
        })
    }

    /// The sets of `f.count` eligible arrivals that may fill the next round: closed under the
    /// causal order among the eligible ones, and holding an arrival the barrier's deferral did
    /// not have.
    fn round_sets(&self, st: &State, f: &Formable) -> Vec<Vec<(usize, usize)>> {
        let g = &st.graph;
        let event = |&(u, k): &(usize, usize)| g.thread_events[u][k];
        let prefixes: Vec<_> = f
            .eligible
            .iter()
            .map(|e| g.causal_prefix(event(&e.0)))
            .collect();
        let n = f.eligible.len();
        let mut out = Vec::new();
        combinations(n, f.count, &mut |set| {
            if !set.iter().any(|&i| f.eligible[i].1) {
                return;
            }
            let closed = set.iter().all(|&i| {
                (0..n)
                    .filter(|j| !set.contains(j))
                    .all(|j| !prefixes[i].contains(event(&f.eligible[j].0)))
            });
            if closed {
                out.push(set.iter().map(|&i| f.eligible[i].0).collect());
            }
        });
        out
    }

    /// When thread `t`'s last event is an arrival at a CTA barrier whose thread count differs
    /// from that of another arrival at the same barrier of its CTA: why that is an error of
    /// the test.
    pub fn mixed_count(&self, st: &State, t: usize) -> Option<String> {
        let last = st.threads[t].trace.events.last()?;
        let EventKind::Arrive {
            barrier: barrier @ BarrierName::Cta(id),
            count,
            ..
        } = last.kind
        else {
            return None;
        };
        let members = barrier_members(self.program, t, barrier);
        let mine = round_size(count, members.len());
        for &u in &members {
            for e in &st.threads[u].trace.events {
                if let EventKind::Arrive {
                    barrier: b, count, ..
                } = e.kind
                {
                    let theirs = round_size(count, members.len());
                    if b == barrier && theirs != mine {
                        let th = &self.program.threads[u];
                        return Some(format!(
                            "barrier {id} is used with a thread count of {mine} here and of \
                             {theirs} by {} at line {}: one barrier of a CTA takes one count",
                            th.name, th.code[e.instr].span.line
                        ));
                    }
                }
            }
        }
        None
    }
}

/// Calls `each` with every increasing choice of `k` indices of `0..n`, in lexicographic order
/// (iteratively: `k` is a barrier's thread count, as large as the input makes it).
fn combinations(n: usize, k: usize, each: &mut dyn FnMut(&[usize])) {
    if k > n {
        return;
    }
    let mut pick: Vec<usize> = (0..k).collect();
    loop {
        each(&pick);
        // The rightmost index that can still grow; those after it restart right behind it.
        let Some(j) = (0..k).rev().find(|&j| pick[j] < n - k + j) else {
            return;
        };
        pick[j] += 1;
        for m in j + 1..k {
            pick[m] = pick[m - 1] + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::combinations;

    fn all(n: usize, k: usize) -> Vec<Vec<usize>> {
        let mut out = vec![];
        combinations(n, k, &mut |p| out.push(p.to_vec()));
        out
    }

    /// The 4-choose-2 = 6 pairs, each increasing, in lexicographic order.
    #[test]
    fn combinations_come_in_lexicographic_order() {
        let pairs = all(4, 2);
        let want = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
        assert_eq!(pairs, want.map(|p| p.to_vec()).to_vec());
    }

    /// Choosing none is one choice; choosing more than there are is none; choosing all is one.
    #[test]
    fn combinations_at_the_edges() {
        assert_eq!(all(3, 0), vec![Vec::<usize>::new()]);
        assert!(all(2, 3).is_empty());
        assert_eq!(all(3, 3), vec![vec![0, 1, 2]]);
        // 5000 choose 4999 = 5000 choices, each leaving one index out: the first leaves out
        // 4999, the last 0 (a pick as long as a barrier's count may be).
        let mut left_out = vec![];
        combinations(5000, 4999, &mut |p| {
            left_out.push((0..5000).find(|i| p.get(*i) != Some(i)).unwrap())
        });
        assert_eq!(left_out.len(), 5000);
        assert_eq!((left_out[0], left_out[4999]), (4999, 0));
    }
}
