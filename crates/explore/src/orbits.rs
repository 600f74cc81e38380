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
//! barrier rounds does (`Search::first_visit`).

use std::hash::{BuildHasherDefault, Hasher};

use crate::interp::Status;
use crate::search::{Search, State};
use crate::trace::{EventKind, PathEnd};

/// The most orders of threads with equal signatures tried for one canonical form, or counted
/// for one leaf's automorphisms (8!: a class of 8 threads that did the same).
const MAX_TIE_ORDERS: usize = 40_320;

/// A digest of a canonical form.
pub(crate) type Digest = u128;

impl<'p> Search<'_, '_, 'p> {
    /// The local signature of thread `t`: everything about it that does not name another
    /// thread.
    /// When it keeps fewer than all its events (`kept`, [`Search::relaxation`]), as if only
    /// those were made: ready where the last of them left it.
    /// Appended to `s`.
    fn signature(st: &State, t: usize, kept: usize, s: &mut Vec<i64>) {
        let th = &st.threads[t];
        let relaxed = kept < th.trace.events.len();
        if relaxed {
            let pc = kept
                .checked_sub(1)
                .map_or(0, |k| th.trace.events[k].instr + 1);
            s.extend([pc as i64, 0, 0, kept as i64]);
            Self::event_signatures(th, kept, s);
            return;
        }
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
    /// (`Search::subsumed`), when `t` waits at one hole, its last event, with nothing computed
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
    /// to `f`.
    fn push_sources(st: &State, t: usize, name: &[usize], kept: &[usize], f: &mut Vec<i64>) {
        let g = &st.graph;
        let events = &g.thread_events[t];
        for &x in &events[..kept[t]] {
            if !g.events[x].kind.is_read() {
                continue;
            }
            let (a, b) = match g.rf[x] {
                None => (-2, 0),
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
    /// Written to `f`.
    fn renamed_form(st: &State, sigs: &Rows, name: &[usize], kept: &[usize], f: &mut Vec<i64>) {
        let n = st.threads.len();
        let mut of_name = vec![0; n];
        for (t, &k) in name.iter().enumerate() {
            of_name[k] = t;
        }
        f.clear();
        f.reserve(sigs.buf.len() + 3 * sigs.buf.len() / 4 + 8);
        for &t in &of_name {
            f.extend_from_slice(sigs.row(t));
            f.push(i64::MIN);
            Self::push_sources(st, t, name, kept, f);
        }
        f.push(i64::MIN);
        f.extend(
            renamed(&st.fresh, name)
                .into_iter()
                .flat_map(|(a, b)| [a, b]),
        );
        // The rounds formed and the deferred barriers, each tagged with its kind and id and
        // followed by its arrivals, in sorted order.
        let rounds = st.rounds.formed.iter().map(|r| (-3, r.id, &r.arrivals[..]));
        let deferred = st.rounds.deferred().map(|(id, have)| (-4, id, have));
        let mut groups: Vec<Vec<(i64, i64)>> = rounds
            .chain(deferred)
            .map(|(kind, id, arrivals)| {
                let mut a = renamed(arrivals, name);
                a.insert(0, (kind, i64::from(id)));
                a
            })
            .collect();
        groups.sort_unstable();
        f.push(i64::MIN);
        f.extend(groups.into_iter().flatten().flat_map(|(a, b)| [a, b]));
    }

    /// Which threads another thread's read, a write still to offer or a barrier round names.
    pub(crate) fn referenced(st: &State) -> Vec<bool> {
        let g = &st.graph;
        let mut r = vec![false; st.threads.len()];
        for x in g.reads.iter() {
            if let (Some(w), Some(reader)) = (g.rf[x], g.events[x].thread) {
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

    /// The signatures, and the renamings that sort each class by signature: within a run of
    /// equal signatures the threads some other names come first, in every order (all of them
    /// when `all`, else up to [`MAX_TIE_ORDERS`]), then the others sorted by where they read
    /// from (nothing names them, so no other order can give a smaller form). With each
    /// renaming, how many orders of the unnamed threads give the same form. `None` when `all`
    /// and there are more orders.
    #[allow(clippy::type_complexity)]
    fn renamings(
        &self,
        st: &State,
        all: bool,
        kept: &[usize],
    ) -> Option<(Rows, Vec<(Vec<usize>, u64)>)> {
        let n = st.threads.len();
        // At most 6 words per event and 8 per thread (`signature`), reserved at once: growing
        // word by word cost a third of the digests.
        let events: usize = st.threads.iter().map(|th| th.trace.events.len()).sum();
        let mut sigs = Rows::with_capacity(n, 8 * n + 6 * events);
        for (t, &k) in kept.iter().enumerate() {
            Self::signature(st, t, k, &mut sigs.buf);
            sigs.end_row();
        }
        let named = Self::referenced(st);
        // Per class, per run: the named members and the unnamed ones.
        let mut layout: Vec<(&Vec<usize>, Vec<(Vec<usize>, Vec<usize>)>)> = vec![];
        let mut orders = 1usize;
        for class in self.classes {
            let mut sorted = class.clone();
            sorted.sort_by(|&a, &b| sigs.row(a).cmp(sigs.row(b)));
            let mut runs: Vec<(Vec<usize>, Vec<usize>)> = vec![];
            let mut last: Option<usize> = None;
            for &t in &sorted {
                if last.is_none_or(|l| sigs.row(l) != sigs.row(t)) {
                    runs.push((vec![], vec![]));
                }
                last = Some(t);
                let run = runs.last_mut().expect("a run");
                if named[t] {
                    run.0.push(t);
                } else {
                    run.1.push(t);
                }
            }
            for run in &runs {
                orders = orders.saturating_mul(factorial(run.0.len()) as usize);
            }
            layout.push((class, runs));
        }
        if orders > MAX_TIE_ORDERS && all {
            return None;
        }
        // The orders of each run's named members; a choice takes one order per run (a
        // mixed-radix number over the runs).
        let perms: Vec<Vec<Vec<usize>>> = layout
            .iter()
            .flat_map(|(_, runs)| runs.iter())
            .map(|run| {
                if orders > MAX_TIE_ORDERS || run.0.len() <= 1 {
                    vec![run.0.clone()]
                } else {
                    permutations(&run.0)
                }
            })
            .collect();
        let choices: usize = perms.iter().map(Vec::len).product();
        let mut out = vec![];
        for choice in 0..choices {
            let mut name: Vec<usize> = (0..n).collect();
            // First the named members, so that the unnamed ones can be sorted by their
            // sources under those names.
            let mut k = 0;
            let mut rest = choice;
            let mut slots: Vec<(&Vec<usize>, usize, &Vec<usize>)> = vec![];
            for (class, runs) in &layout {
                let mut pos = 0;
                for run in runs {
                    let order = &perms[k][rest % perms[k].len()];
                    rest /= perms[k].len();
                    k += 1;
                    for (i, &t) in order.iter().enumerate() {
                        name[t] = class[pos + i];
                    }
                    slots.push((class, pos + order.len(), &run.1));
                    pos += order.len() + run.1.len();
                }
            }
            let mut same = 1u64;
            for (class, start, unnamed) in slots {
                let mut sources = Rows::with_capacity(unnamed.len(), 2 * events);
                for &t in unnamed {
                    Self::push_sources(st, t, &name, kept, &mut sources.buf);
                    sources.end_row();
                }
                let mut order: Vec<usize> = (0..unnamed.len()).collect();
                order.sort_by(|&a, &b| sources.row(a).cmp(sources.row(b)));
                for run in order.chunk_by(|&a, &b| sources.row(a) == sources.row(b)) {
                    same = same.saturating_mul(factorial(run.len()));
                }
                for (i, &k) in order.iter().enumerate() {
                    name[unnamed[k]] = class[start + i];
                }
            }
            out.push((name, same));
        }
        Some((sigs, out))
    }

    /// The digest of the canonical form of `st`, with each thread `t` seen as having made only
    /// its first `kept[t]` events ([`Search::relaxation`]).
    pub(crate) fn orbit_digest(&self, st: &State, kept: &[usize]) -> Digest {
        let (sigs, names) = self.renamings(st, false, kept).expect("bounded orders");
        let (mut least, mut form) = (vec![], vec![]);
        for (i, (name, _)) in names.iter().enumerate() {
            Self::renamed_form(st, &sigs, name, kept, &mut form);
            if i == 0 || form < least {
                std::mem::swap(&mut least, &mut form);
            }
        }
        digest(&least)
    }

    /// For a leaf: its canonical digest and the size of its orbit (how many executions it
    /// stands for); `None` when its automorphisms are too many to count.
    pub(crate) fn leaf_orbit(&self, st: &State) -> Option<(Digest, u64)> {
        let unrelaxed = Self::all_kept(st);
        let (sigs, names) = self.renamings(st, true, &unrelaxed)?;
        let forms: Vec<(Vec<i64>, u64)> = names
            .iter()
            .map(|(n, same)| {
                let mut form = vec![];
                Self::renamed_form(st, &sigs, n, &unrelaxed, &mut form);
                (form, *same)
            })
            .collect();
        let least = &forms
            .iter()
            .min_by(|a, b| a.0.cmp(&b.0))
            .expect("a renaming")
            .0;
        // The renamings that give the least form differ by an automorphism of the leaf, and
        // so do the orders of unnamed threads that read alike.
        let aut: u64 = forms.iter().filter(|f| &f.0 == least).map(|f| f.1).sum();
        let all: u64 = self
            .classes
            .iter()
            .fold(1u64, |w, c| w.saturating_mul(factorial(c.len())));
        Some((digest(least), all / aut))
    }
}

/// Words per thread, end to end (one allocation for all threads): thread `t`'s are
/// `buf[at[t]..at[t + 1]]`.
struct Rows {
    buf: Vec<i64>,
    at: Vec<usize>,
}

impl Rows {
    fn with_capacity(rows: usize, words: usize) -> Self {
        let mut at = Vec::with_capacity(rows + 1);
        at.push(0);
        Rows {
            buf: Vec::with_capacity(words),
            at,
        }
    }

    /// Ends the row being written to `buf`.
    fn end_row(&mut self) {
        self.at.push(self.buf.len());
    }

    fn row(&self, t: usize) -> &[i64] {
        &self.buf[self.at[t]..self.at[t + 1]]
    }
}

/// (thread, path index) pairs with the threads renamed by `name`, sorted.
fn renamed(pairs: &[(usize, usize)], name: &[usize]) -> Vec<(i64, i64)> {
    let mut r: Vec<(i64, i64)> = pairs
        .iter()
        .map(|&(t, k)| (name[t] as i64, k as i64))
        .collect();
    r.sort_unstable();
    r
}

/// A 128-bit digest of `form`: two lanes, each a bijection of its state per word (so two
/// forms of one length that differ in one word never collide), with a final avalanche.
/// SipHash, which the standard hasher uses, cost 7% of a symmetric search.
fn digest(form: &[i64]) -> Digest {
    let (mut a, mut b) = (0x243F_6A88_85A3_08D3u64, 0x1319_8A2E_0370_7344u64);
    for &x in form {
        let x = x as u64;
        a = (a ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        a ^= a >> 29;
        b = (b.rotate_left(23) ^ x).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        b ^= b >> 32;
    }
    let n = form.len() as u64;
    (u128::from(avalanche(a ^ n)) << 64) | u128::from(avalanche(b.wrapping_add(n)))
}

/// MurmurHash3's 64-bit finalizer.
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// A set of digests, hashed by their low bits (a digest is already uniformly spread).
pub(crate) type DigestSet = std::collections::HashSet<Digest, BuildHasherDefault<DigestHasher>>;

#[derive(Default)]
pub(crate) struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u128(&mut self, d: u128) {
        self.0 = d as u64;
    }
}

/// `n!`, saturating.
fn factorial(n: usize) -> u64 {
    (1..=n as u64).fold(1u64, |f, k| f.saturating_mul(k))
}

/// Every order of `items`.
fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = vec![];
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_of_forms_one_word_apart_differ() {
        let base: Vec<i64> = (0..40).collect();
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(digest(&base)));
        for k in 0..base.len() {
            for d in [1, -1, 1 << 40] {
                let mut f = base.clone();
                f[k] += d;
                assert!(seen.insert(digest(&f)), "word {k} changed by {d}");
            }
        }
        assert!(seen.insert(digest(&base[..39])));
        assert!(seen.insert(digest(&[])));
    }

    #[test]
    fn permutations_are_every_order() {
        assert_eq!(permutations(&[1, 2, 3]).len(), 6);
        assert_eq!(permutations(&[4]), vec![vec![4]]);
        assert_eq!(factorial(5), 120);
    }
}
