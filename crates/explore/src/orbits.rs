//! Symmetry reduction by orbits of search states (`symmetry` says which threads are
//! interchangeable).
//!
//! A permutation of a class of interchangeable threads maps a search state (the threads' paths,
//! the graph's reads-from, the writes still to offer, the barrier rounds) to a state whose
//! completions are the images of the first one's: the hole search from a state finds every
//! consistent completion of it whatever the order it runs the threads in (docs/explore.md). So
//! a state whose image was explored before is not explored again, and every orbit of leaves
//! the full search reaches is still reached. A leaf is judged once per orbit (an image reached
//! along another path is skipped) and stands for its orbit's size, `Π |class|! / |Aut|`, where
//! `Aut` is the permutations that map the leaf to itself.
//!
//! States are named by a canonical form: each thread's *local signature* (its status, where it
//! stands, and what each of its events is, with the values read and written: the interpreter
//! is deterministic, so this fixes its registers), the threads of each class sorted by it, and,
//! in that order, where each read reads from, by (thread, path index). Within a run of equal
//! signatures, the threads that another thread's read (or a write still to offer, or a barrier
//! round) names are tried in every order (up to [`MAX_TIE_ORDERS`] orders, beyond which one is
//! kept: a form that is not canonical only merges fewer states), and the others follow sorted
//! by where they read from. The memo keeps a 128-bit digest of each form, as the leaf memo of
//! barrier rounds does (`LeavesSeen::first_visit`).

use crate::digest::{digest, Digest, DigestSet};
use crate::interp::Status;
use crate::state::State;
use crate::statics::ThreadStatics;
use crate::trace::{EventKind, PathEnd};

/// The most orders of threads with equal signatures tried for one canonical form, or counted
/// for one leaf's automorphisms (8!: a class of 8 threads that did the same).
const MAX_TIE_ORDERS: usize = 40_320;

/// The symmetry reduction of one search: the classes of interchangeable threads, and the
/// orbits of the states explored and of the leaves judged.
pub(crate) struct Symmetry<'a> {
    /// Classes of interchangeable threads, explored one state per orbit (none: no reduction).
    pub classes: &'a [Vec<usize>],
    statics: &'a [ThreadStatics],
    /// The digests of the states explored, each up to permutations of the classes.
    states_seen: DigestSet,
    /// Of those, the states whose search is over (`subsumed`).
    states_done: DigestSet,
    /// The digests of the leaves judged.
    pub orbits_seen: DigestSet,
    scratch: Scratch,
}

impl<'a> Symmetry<'a> {
    pub fn new(classes: &'a [Vec<usize>], statics: &'a [ThreadStatics]) -> Self {
        Symmetry {
            classes,
            statics,
            states_seen: Default::default(),
            states_done: Default::default(),
            orbits_seen: Default::default(),
            scratch: Default::default(),
        }
    }

    /// Whether there are interchangeable threads.
    pub fn reduces(&self) -> bool {
        !self.classes.is_empty()
    }

    /// The class of thread `t`, if it has one.
    pub fn class_of(&self, t: usize) -> Option<&'a Vec<usize>> {
        self.classes.iter().find(|c| c.contains(&t))
    }

    /// The digest of the orbit of `st` when no image of it was explored before (it is then
    /// marked explored); `None` when one was, or, with `subsume`, when the completions of `st`
    /// are among those of a state whose search is over (`subsumed`).
    pub fn explore(&mut self, st: &State, subsume: bool) -> Option<Digest> {
        let named = Self::referenced(st, self.statics);
        if subsume && self.subsumed(st, &named) {
            return None;
        }
        let digest = self.orbit_digest(st, &Self::all_kept(st), &named);
        self.states_seen.insert(digest).then_some(digest)
    }

    /// Marks the state of orbit `digest` as one whose search is over (and was not stopped).
    pub fn done(&mut self, digest: Digest) {
        self.states_done.insert(digest);
    }

    /// Whether, under symmetry reduction, the completions of `st` are among those of a state
    /// whose search is over: the image of `st` with the threads that wait at a hole they
    /// just made seen as not yet started, where nothing depends on what they did, or else
    /// as not yet at that read (either may make the same choices again, and read the writes
    /// already made as well as those to come; `Symmetry::relaxation`). A thread that waits for
    /// another of its class to write is so seen as the thread that has not run yet
    /// (docs/explore.md, "Symmetry").
    fn subsumed(&mut self, st: &State, named: &[bool]) -> bool {
        let all = Self::all_kept(st);
        let relax: Vec<Option<(usize, usize)>> = (0..st.threads.len())
            .map(|t| Self::relaxation(st, t, named))
            .collect();
        let relaxed = |pick: fn((usize, usize)) -> usize| -> Vec<usize> {
            (0..st.threads.len())
                .map(|t| relax[t].map_or(all[t], pick))
                .collect()
        };
        // Both relax the same threads (those waiting at a hole); from the start is tried first,
        // as it finds a finished image more often (541 against 155 times on the TTAS lock
        // with 5 threads).
        let from_start = relaxed(|r| r.1);
        if from_start == all {
            return false;
        }
        let by_one = relaxed(|r| r.0);
        let digest = self.orbit_digest(st, &from_start, named);
        if self.states_done.contains(&digest) {
            return true;
        }
        by_one != from_start && {
            let digest = self.orbit_digest(st, &by_one, named);
            self.states_done.contains(&digest)
        }
    }
}

impl Symmetry<'_> {
    /// The local signature of thread `t` (everything about it that does not name another
    /// thread), as a digest, appended to `s` as two words. When it keeps fewer than all its
    /// events (`kept`, [`Symmetry::relaxation`]), as if only those were made: ready where the
    /// last of them left it. A thread's own digest is computed once per run (`Threads`).
    fn signature(st: &State, t: usize, kept: usize, s: &mut Vec<i64>) {
        let th = &st.threads[t];
        let d = if kept < th.trace.events.len() {
            let pc = kept
                .checked_sub(1)
                .map_or(0, |k| th.trace.events[k].instr + 1);
            let mut words = vec![pc as i64, 0, 0, kept as i64];
            Self::event_signatures(th, kept, &mut words);
            digest(&words)
        } else {
            st.threads.signature(t, |th| {
                let mut words = Vec::with_capacity(8 + 6 * th.trace.events.len());
                Self::local_signature(th, &mut words);
                digest(&words)
            })
        };
        s.extend([(d >> 64) as i64, d as i64]);
    }

    /// The local signature of a thread with all its events. Ready after its events and not
    /// ended, it reads as the same thread relaxed to them (`signature`).
    fn local_signature(th: &crate::interp::ThreadRun, s: &mut Vec<i64>) {
        s.push(th.pc() as i64);
        match &th.status {
            Status::Ready => s.push(0),
            Status::Reads(r) => s.extend([1, r.instr as i64, i64::from(r.loc.0)]),
            Status::Suspended => s.push(2),
            Status::Waiting(w) => s.extend([3, w.instr as i64, i64::from(w.round)]),
            Status::Stopped => s.push(4),
            Status::Converges { instr, .. } => s.extend([5, *instr as i64]),
        }
        match &th.trace.end {
            PathEnd::Finished => s.push(0),
            PathEnd::Cut { instr } => s.extend([1, *instr as i64]),
            PathEnd::Blocked { instr, iteration } => {
                s.extend([2, *instr as i64, *iteration as i64])
            }
            PathEnd::Starved => s.push(3),
            PathEnd::AtBarrier { instr } => s.extend([4, *instr as i64]),
            PathEnd::Fault { instr, .. } => s.extend([5, *instr as i64]),
        }
        s.push(th.trace.events.len() as i64);
        Self::event_signatures(th, th.trace.events.len(), s);
    }

    /// What each of the first `kept` events of a thread is, with the values read and written.
    fn event_signatures(th: &crate::interp::ThreadRun, kept: usize, s: &mut Vec<i64>) {
        for (i, e) in th.trace.events[..kept].iter().enumerate() {
            s.push(e.instr as i64);
            match e.kind {
                EventKind::Read { loc, value, .. } => {
                    let hole = th.holes.iter().any(|h| h.0 == i);
                    s.extend([10 + i64::from(hole), i64::from(loc.0), value]);
                }
                EventKind::Write { loc, value, .. } => {
                    let hole = th.value_holes.contains(&i);
                    s.extend([12 + i64::from(hole), i64::from(loc.0), value]);
                }
                EventKind::Arrive { pred, .. } => s.extend([14, pred.unwrap_or(i64::MIN)]),
                EventKind::Wait { red, received, .. } => {
                    let (a, b) = received.unwrap_or((i64::MIN, i64::MIN));
                    s.extend([15, red.map_or(i64::MIN, |r| r.1), a, b]);
                }
                EventKind::Fence { .. } => s.push(16),
                EventKind::Init { .. } => s.push(17),
            }
        }
    }

    /// Every thread with all its events: the state itself.
    pub(crate) fn all_kept(st: &State) -> Vec<usize> {
        st.threads.iter().map(|th| th.trace.events.len()).collect()
    }

    /// How many of thread `t`'s events a state whose completions include those of `st` keeps
    /// (`Symmetry::subsumed`), when `t` waits at one hole, its last event, with nothing computed
    /// from it: first, the same thread not yet at that read, which may read the writes already
    /// made too; second, where nothing `named` it (`referenced`: no other thread read a write
    /// of `t`'s, none is still to offer) and `t` took part in no barrier, `t` not yet started,
    /// which may make the same choices again, since its events constrain the others only
    /// through what they read and the barriers; else the first again.
    pub(crate) fn relaxation(st: &State, t: usize, named: &[bool]) -> Option<(usize, usize)> {
        let th = &st.threads[t];
        let n = th.trace.events.len();
        let waits = th.status == Status::Suspended
            && th.value_holes.is_empty()
            && matches!(&th.holes[..], [(k, _)] if k + 1 == n);
        if !waits {
            return None;
        }
        let synchronizes = th
            .trace
            .events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Arrive { .. } | EventKind::Wait { .. }));
        let from_start = if named[t] || synchronizes { n - 1 } else { 0 };
        Some((n - 1, from_start))
    }

    /// Where thread `t`'s reads among its first `kept[t]` events read from, with the writing
    /// threads renamed by `name` (its own writes and the initial ones need no name), appended
    /// to `f`. A read of a blind update (`commute`) reads the location's final value, and
    /// names no thread: which update is last is the representative order the reduction chose
    /// for the whole class of orders it counts, not part of the execution class, so naming
    /// its thread would tell apart leaves that stand for the same executions
    /// (docs/explore.md, "Symmetry and commuting atomics").
    fn push_sources(
        st: &State,
        statics: &[ThreadStatics],
        t: usize,
        name: &[usize],
        kept: &[usize],
        f: &mut Vec<i64>,
    ) {
        let g = &st.graph;
        let events = &g.thread_events[t];
        for &x in &events[..kept[t]] {
            if !g.events[x].kind.is_read() {
                continue;
            }
            let (a, b) = match g.rf[x] {
                None => (-2, 0),
                Some(w) if crate::commute::is_update(g, statics, w) => {
                    (-6, g.events[w].kind.loc().map_or(-1, |l| i64::from(l.0)))
                }
                Some(w) => match g.events[w].thread {
                    None => (-1, w as i64),
                    Some(u) if u.0 as usize == t => (-5, g.path_index(t, w) as i64),
                    Some(u) => {
                        let u = u.0 as usize;
                        (name[u] as i64, g.path_index(u, w) as i64)
                    }
                },
            };
            f.extend([a, b]);
        }
    }

    /// The form of `st` with the threads renamed by `name` (thread → its name): per name in
    /// order, the signature of the thread of that name and the sources of its reads; then the
    /// writes still to offer and the barrier rounds.
    /// Written to `sc.form`.
    fn renamed_form(
        st: &State,
        statics: &[ThreadStatics],
        sc: &mut Scratch,
        name: &[usize],
        kept: &[usize],
    ) {
        let n = st.threads.len();
        let (of_name, f) = (&mut sc.of_name, &mut sc.form);
        of_name.clear();
        of_name.resize(n, 0);
        for (t, &k) in name.iter().enumerate() {
            of_name[k] = t;
        }
        f.clear();
        // Per thread its signature, a separator and two words per read; then the writes to
        // offer (the rounds may take more).
        f.reserve(sc.sigs.buf.len() + n + 2 * kept.iter().sum::<usize>() + 2 * st.fresh.len() + 8);
        for &t in of_name.iter() {
            f.extend_from_slice(sc.sigs.row(t));
            f.push(i64::MIN);
            Self::push_sources(st, statics, t, name, kept, f);
        }
        f.push(i64::MIN);
        let fresh = &mut sc.pairs;
        fresh.clear();
        push_renamed(&st.fresh, name, fresh);
        f.extend(fresh.iter().flat_map(|&(a, b)| [a, b]));
        f.push(i64::MIN);
        if st.rounds.formed.is_empty() && st.rounds.deferred().next().is_none() {
            return;
        }
        // The rounds formed and the deferred barriers, each tagged with its kind and id and
        // followed by its arrivals, in sorted order.
        let rounds = st.rounds.formed.iter().map(|r| (-3, r.id, &r.arrivals[..]));
        let deferred = st.rounds.deferred().map(|(id, have)| (-4, id, have));
        let mut groups: Vec<Vec<(i64, i64)>> = rounds
            .chain(deferred)
            .map(|(kind, id, arrivals)| {
                let mut a = vec![(kind, i64::from(id))];
                push_renamed(arrivals, name, &mut a);
                a
            })
            .collect();
        groups.sort_unstable();
        f.extend(groups.into_iter().flatten().flat_map(|(a, b)| [a, b]));
    }

    /// Which threads another thread's read, a write still to offer or a barrier round names
    /// (a read of a blind update names none: `push_sources`).
    pub(crate) fn referenced(st: &State, statics: &[ThreadStatics]) -> Vec<bool> {
        let g = &st.graph;
        let mut r = vec![false; st.threads.len()];
        for x in g.reads.iter() {
            if let (Some(w), Some(reader)) = (g.rf[x], g.events[x].thread) {
                if crate::commute::is_update(g, statics, w) {
                    continue;
                }
                if let Some(u) = g.events[w].thread {
                    if u != reader {
                        r[u.0 as usize] = true;
                    }
                }
            }
        }
        for &(t, _) in &st.fresh {
            r[t] = true;
        }
        for round in &st.rounds.formed {
            for &(t, _) in &round.arrivals {
                r[t] = true;
            }
        }
        for (_, have) in st.rounds.deferred() {
            for &(t, _) in have {
                r[t] = true;
            }
        }
        r
    }

    /// The signatures (`sc.sigs`), and the renamings that sort each class by signature
    /// (`sc.names`, `n` names per renaming): within a run of equal signatures the threads some
    /// other names (`named`, [`Symmetry::referenced`]) come first, in every order (all of them
    /// when `all`, else up to [`MAX_TIE_ORDERS`]), then the others sorted by where they read
    /// from (nothing names them, so no other order can give a smaller form). With each
    /// renaming (`sc.same`), the groups of unnamed threads whose orders all give the same form. False
    /// when `all` and there are more orders.
    fn renamings(
        classes: &[Vec<usize>],
        st: &State,
        statics: &[ThreadStatics],
        all: bool,
        kept: &[usize],
        named: &[bool],
        sc: &mut Scratch,
    ) -> bool {
        let n = st.threads.len();
        sc.sigs.clear();
        for (t, &k) in kept.iter().enumerate() {
            Self::signature(st, t, k, &mut sc.sigs.buf);
            sc.sigs.end_row();
        }
        // Each class sorted by signature, the named members of a run first (in class order,
        // as the others).
        sc.sorted.clear();
        sc.runs.clear();
        let mut orders = 1usize;
        for (c, class) in classes.iter().enumerate() {
            let base = sc.sorted.len();
            sc.sorted.extend_from_slice(class);
            let sigs = &sc.sigs;
            sc.sorted[base..]
                .sort_by(|&a, &b| sigs.row(a).cmp(sigs.row(b)).then(named[b].cmp(&named[a])));
            let mut at = base;
            while at < sc.sorted.len() {
                let first = sigs.row(sc.sorted[at]);
                let len = sc.sorted[at..]
                    .iter()
                    .take_while(|&&u| sigs.row(u) == first)
                    .count();
                let named_members = sc.sorted[at..at + len]
                    .iter()
                    .filter(|&&u| named[u])
                    .count();
                orders = orders.saturating_mul(factorial(named_members) as usize);
                sc.runs.push(Run {
                    class: c,
                    at,
                    slot: at - base,
                    named: named_members,
                    len,
                });
                at += len;
            }
        }
        if orders > MAX_TIE_ORDERS && all {
            return false;
        }
        // A choice takes one order of each run's named members (a mixed-radix number over the
        // runs); beyond the bound, only the first.
        let choices = if orders > MAX_TIE_ORDERS { 1 } else { orders };
        sc.names.clear();
        sc.same.clear();
        sc.same_at.clear();
        sc.same_at.push(0);
        for choice in 0..choices {
            let name = sc.names.len()..sc.names.len() + n;
            sc.names.extend(0..n);
            // First the named members, so that the unnamed ones can be sorted by their
            // sources under those names.
            let mut rest = choice;
            for run in &sc.runs {
                let orders = factorial(run.named) as usize;
                let pick = if choices == 1 { 0 } else { rest % orders };
                rest /= orders.max(1);
                nth_order(&sc.sorted[run.at..run.at + run.named], pick, &mut sc.order);
                let class = &classes[run.class];
                for (i, &t) in sc.order.iter().enumerate() {
                    sc.names[name.start + t] = class[run.slot + i];
                }
            }
            for run in &sc.runs {
                let unnamed = &sc.sorted[run.at + run.named..run.at + run.len];
                if unnamed.is_empty() {
                    continue;
                }
                sc.sources.clear();
                for &t in unnamed {
                    let names = &sc.names[name.clone()];
                    Self::push_sources(st, statics, t, names, kept, &mut sc.sources.buf);
                    sc.sources.end_row();
                }
                let sources = &sc.sources;
                sc.by_sources.clear();
                sc.by_sources.extend(0..unnamed.len());
                sc.by_sources
                    .sort_by(|&a, &b| sources.row(a).cmp(sources.row(b)));
                for alike in sc
                    .by_sources
                    .chunk_by(|&a, &b| sources.row(a) == sources.row(b))
                {
                    if alike.len() > 1 {
                        sc.same.push(alike.len());
                    }
                }
                let class = &classes[run.class];
                for (i, &k) in sc.by_sources.iter().enumerate() {
                    sc.names[name.start + unnamed[k]] = class[run.slot + run.named + i];
                }
            }
            sc.same_at.push(sc.same.len());
        }
        true
    }

    /// The digest of the canonical form of `st`, with each thread `t` seen as having made only
    /// its first `kept[t]` events ([`Symmetry::relaxation`]); `named` is [`Symmetry::referenced`].
    pub(crate) fn orbit_digest(&mut self, st: &State, kept: &[usize], named: &[bool]) -> Digest {
        let sc = &mut self.scratch;
        Self::renamings(self.classes, st, self.statics, false, kept, named, sc);
        let n = st.threads.len().max(1);
        let mut names = std::mem::take(&mut sc.names);
        for (i, name) in names.chunks(n).enumerate() {
            Self::renamed_form(st, self.statics, sc, name, kept);
            if i == 0 || sc.form < sc.least {
                std::mem::swap(&mut sc.least, &mut sc.form);
            }
        }
        std::mem::swap(&mut sc.names, &mut names);
        digest(&sc.least)
    }

    /// For a leaf: its canonical digest and the size of its orbit (how many executions it
    /// stands for); `None` when its automorphisms are too many to count.
    pub(crate) fn leaf_orbit(&mut self, st: &State) -> Option<(Digest, crate::count::Count)> {
        let unrelaxed = Self::all_kept(st);
        let named = Self::referenced(st, self.statics);
        let sc = &mut self.scratch;
        if !Self::renamings(self.classes, st, self.statics, true, &unrelaxed, &named, sc) {
            return None;
        }
        let n = st.threads.len().max(1);
        let names = std::mem::take(&mut sc.names);
        let forms: Vec<Vec<i64>> = names
            .chunks(n)
            .map(|name| {
                Self::renamed_form(st, self.statics, sc, name, &unrelaxed);
                sc.form.clone()
            })
            .collect();
        sc.names = names;
        let least = forms.iter().min().expect("a renaming");
        // The renamings that give the least form differ by an automorphism of the leaf, and
        // so do the orders of unnamed threads that read alike: the automorphisms number the
        // sum, over those renamings, of the products of the factorials of the alike groups.
        let alike = |i: usize| &sc.same[sc.same_at[i]..sc.same_at[i + 1]];
        let terms = (0..forms.len()).filter(|&i| &forms[i] == least).map(alike);
        let sizes: Vec<usize> = self.classes.iter().map(Vec::len).collect();
        Some((digest(least), crate::count::orbit_size(&sizes, terms)))
    }
}

/// Buffers the canonical forms are built in, kept by each search from state to state: built
/// in fresh vectors, a form spent half its time allocating them.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Each thread's signature digest (`Symmetry::signature`).
    sigs: Rows,
    /// The members of each class, sorted by signature, and their runs of equal signatures.
    sorted: Vec<usize>,
    runs: Vec<Run>,
    /// One order of a run's named members.
    order: Vec<usize>,
    /// The renamings (`n` names each) and, for each, the sizes (more than one) of the groups
    /// of unnamed threads that read alike, whose orders all give its form: renaming `i`'s are
    /// `same[same_at[i]..same_at[i + 1]]`.
    names: Vec<usize>,
    same: Vec<usize>,
    same_at: Vec<usize>,
    /// The sources of a run's unnamed members, and those members in order of them.
    sources: Rows,
    by_sources: Vec<usize>,
    /// The threads by name, the writes to offer renamed, and the forms.
    of_name: Vec<usize>,
    pairs: Vec<(i64, i64)>,
    form: Vec<i64>,
    least: Vec<i64>,
}

/// A run of threads of one class with equal signatures.
struct Run {
    class: usize,
    /// Where it starts in `Scratch::sorted`, and in its class.
    at: usize,
    slot: usize,
    /// How many of its members are named (they come first), and how many it has.
    named: usize,
    len: usize,
}

/// Words per thread, end to end (one allocation for all threads): thread `t`'s are
/// `buf[at[t]..at[t + 1]]`.
#[derive(Default)]
struct Rows {
    buf: Vec<i64>,
    at: Vec<usize>,
}

impl Rows {
    fn clear(&mut self) {
        self.buf.clear();
        self.at.clear();
        self.at.push(0);
    }

    /// Ends the row being written to `buf`.
    fn end_row(&mut self) {
        self.at.push(self.buf.len());
    }

    fn row(&self, t: usize) -> &[i64] {
        &self.buf[self.at[t]..self.at[t + 1]]
    }
}

/// (thread, path index) pairs with the threads renamed by `name`, sorted, appended to `out`.
fn push_renamed(pairs: &[(usize, usize)], name: &[usize], out: &mut Vec<(i64, i64)>) {
    let from = out.len();
    out.extend(pairs.iter().map(|&(t, k)| (name[t] as i64, k as i64)));
    out[from..].sort_unstable();
}

/// `n!`, saturating.
fn factorial(n: usize) -> u64 {
    (1..=n as u64).fold(1u64, |f, k| f.saturating_mul(k))
}

/// The `k`-th order of `items` (`k < items.len()!`; the 0th is `items` as they are), in `out`.
fn nth_order(items: &[usize], mut k: usize, out: &mut Vec<usize>) {
    out.clear();
    out.extend_from_slice(items);
    let n = out.len();
    for i in 0..n {
        let f = factorial(n - 1 - i) as usize;
        let j = i + k / f;
        k %= f;
        out[i..=j].rotate_right(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nth_orders_are_every_order() {
        // The k-th orders of 4 items for k < 4! are 24 distinct orders of those items, the
        // 0th the items as given.
        let items = [3, 5, 7, 9];
        let mut seen = std::collections::HashSet::new();
        let mut out = vec![];
        for k in 0..24 {
            nth_order(&items, k, &mut out);
            let mut sorted = out.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, items);
            assert!(seen.insert(out.clone()), "order {k} repeats");
        }
        nth_order(&items, 0, &mut out);
        assert_eq!(out, items);
        nth_order(&[4], 0, &mut out);
        assert_eq!(out, [4]);
        nth_order(&[], 0, &mut out);
        assert!(out.is_empty());
        assert_eq!(factorial(5), 120);
    }
}
