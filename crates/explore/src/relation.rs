//! Binary relations over the events of one execution graph, as rows of `u64` bit sets.
//!
//! Graphs are small (tens of events), so a dense bit matrix makes composition, closure and
//! cycle checks a handful of word operations per row.

use std::fmt;

/// A set of event indices.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct EventSet {
    words: Vec<u64>,
}

fn words_for(n: usize) -> usize {
    n.div_ceil(64).max(1)
}

impl EventSet {
    pub fn new(n: usize) -> Self {
        EventSet {
            words: vec![0; words_for(n)],
        }
    }

    /// The events of `0..n` that `keep` accepts.
    pub fn from_fn(n: usize, keep: impl Fn(usize) -> bool) -> Self {
        let mut s = EventSet::new(n);
        for i in (0..n).filter(|&i| keep(i)) {
            s.insert(i);
        }
        s
    }

    /// Makes room for `n` events.
    pub fn grow(&mut self, n: usize) {
        let w = words_for(n);
        if w > self.words.len() {
            self.words.resize(w, 0);
        }
    }

    pub fn insert(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    pub fn contains(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        iter_bits(&self.words)
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Adds every event of `other` (on as many events).
    pub fn union_with(&mut self, other: &EventSet) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }
}

fn iter_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(wi, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let b = w.trailing_zeros() as usize;
            w &= w - 1;
            Some(wi * 64 + b)
        })
    })
}

/// A binary relation on `n` events: row `i` holds the set of `j` with `(i, j)` in the relation.
#[derive(PartialEq, Eq, Hash)]
pub struct Relation {
    n: usize,
    stride: usize,
    bits: Vec<u64>,
}

/// A clone keeps the room reserved for events to come (`grow`): a search clones its graph at
/// each choice and then adds events to it.
impl Clone for Relation {
    fn clone(&self) -> Self {
        let mut bits = Vec::with_capacity(self.bits.capacity());
        bits.extend_from_slice(&self.bits);
        Relation {
            n: self.n,
            stride: self.stride,
            bits,
        }
    }
}

impl Relation {
    pub fn new(n: usize) -> Self {
        let stride = words_for(n);
        Relation {
            n,
            stride,
            bits: vec![0; n * stride],
        }
    }

    /// The relation holding exactly the pairs `f` accepts.
    pub fn from_fn(n: usize, mut f: impl FnMut(usize, usize) -> bool) -> Self {
        let mut r = Relation::new(n);
        for i in 0..n {
            for j in 0..n {
                if f(i, j) {
                    r.insert(i, j);
                }
            }
        }
        r
    }

    /// The identity on the events `keep` accepts (`[E]` in the cat notation).
    pub fn identity_where(n: usize, keep: impl Fn(usize) -> bool) -> Self {
        let mut r = Relation::new(n);
        for i in (0..n).filter(|&i| keep(i)) {
            r.insert(i, i);
        }
        r
    }

    pub fn len(&self) -> usize {
        self.n
    }

    /// Extends the relation to `n` events (the new ones unrelated).
    pub fn grow(&mut self, n: usize) {
        if n <= self.n {
            return;
        }
        let stride = words_for(n);
        if stride == self.stride {
            // Room for every event the row width holds, at once.
            let most = 64 * stride * stride;
            if n * stride > self.bits.capacity() {
                self.bits.reserve_exact(most - self.bits.len());
            }
            self.bits.resize(n * stride, 0);
        } else {
            let mut bits = vec![0; n * stride];
            for i in 0..self.n {
                bits[i * stride..i * stride + self.stride]
                    .copy_from_slice(&self.bits[i * self.stride..(i + 1) * self.stride]);
            }
            self.bits = bits;
            self.stride = stride;
        }
        self.n = n;
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    pub fn insert(&mut self, i: usize, j: usize) {
        self.bits[i * self.stride + j / 64] |= 1 << (j % 64);
    }

    pub fn contains(&self, i: usize, j: usize) -> bool {
        self.bits[i * self.stride + j / 64] >> (j % 64) & 1 == 1
    }

    /// Adds `(i, j)` for every `j` in `lo..hi`, a word at a time.
    pub fn insert_range(&mut self, i: usize, lo: usize, hi: usize) {
        let row = &mut self.bits[i * self.stride..(i + 1) * self.stride];
        let mut j = lo;
        while j < hi {
            let (w, b) = (j / 64, j % 64);
            let take = (64 - b).min(hi - j);
            let mask = if take == 64 {
                u64::MAX
            } else {
                ((1u64 << take) - 1) << b
            };
            row[w] |= mask;
            j += take;
        }
    }

    /// Adds `(i, j)` for every `j` in `set`.
    pub fn insert_set(&mut self, i: usize, set: &EventSet) {
        for (a, b) in self.row_mut(i).iter_mut().zip(set.words()) {
            *a |= b;
        }
    }

    /// Adds `(i, j)` for every `j` that row `k` of `other` holds (`other` of the same size).
    pub fn insert_row_of(&mut self, i: usize, other: &Relation, k: usize) {
        let stride = self.stride;
        for (a, b) in self.bits[i * stride..(i + 1) * stride]
            .iter_mut()
            .zip(other.row(k))
        {
            *a |= b;
        }
    }

    /// Keeps only the pairs whose second element is in `set`: `R ; [set]`.
    pub fn keep_columns(&mut self, set: &EventSet) {
        let stride = self.stride;
        for row in self.bits.chunks_mut(stride.max(1)) {
            for (a, b) in row.iter_mut().zip(set.words()) {
                *a &= b;
            }
        }
    }

    pub fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.stride..(i + 1) * self.stride]
    }

    fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.bits[i * self.stride..(i + 1) * self.stride]
    }

    /// The predecessors of `j`: column `j`.
    pub fn column(&self, j: usize) -> EventSet {
        let (word, bit) = (j / 64, j % 64);
        let mut s = EventSet::new(self.n);
        for i in 0..self.n {
            if self.bits[i * self.stride + word] >> bit & 1 == 1 {
                s.insert(i);
            }
        }
        s
    }

    /// The successors of `i`.
    pub fn successors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        iter_bits(self.row(i))
    }

    /// Whether `i` has any successor in `set`.
    pub fn row_meets(&self, i: usize, set: &EventSet) -> bool {
        self.row(i).iter().zip(set.words()).any(|(a, b)| a & b != 0)
    }

    /// Whether `i` has any successor.
    pub fn row_is_empty(&self, i: usize) -> bool {
        self.row(i).iter().all(|w| *w == 0)
    }

    /// All pairs.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.n).flat_map(move |i| self.successors(i).map(move |j| (i, j)))
    }

    pub fn union_with(&mut self, other: &Relation) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
    }

    pub fn union(&self, other: &Relation) -> Relation {
        let mut r = self.clone();
        r.union_with(other);
        r
    }

    pub fn intersect_with(&mut self, other: &Relation) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a &= b;
        }
    }

    pub fn intersect(&self, other: &Relation) -> Relation {
        let mut r = self.clone();
        r.intersect_with(other);
        r
    }

    /// Relational composition `self ; other`.
    pub fn compose(&self, other: &Relation) -> Relation {
        let mut r = Relation::new(self.n);
        let s = self.stride;
        if s == 1 {
            // Up to 64 events (nearly every graph): one word per row.
            for (out, &row) in r.bits.iter_mut().zip(&self.bits) {
                let (mut row, mut acc) = (row, 0);
                while row != 0 {
                    acc |= other.bits[row.trailing_zeros() as usize];
                    row &= row - 1;
                }
                *out = acc;
            }
            return r;
        }
        for i in 0..self.n {
            for k in iter_bits(self.row(i)) {
                for w in 0..s {
                    r.bits[i * s + w] |= other.bits[k * s + w];
                }
            }
        }
        r
    }

    pub fn inverse(&self) -> Relation {
        let mut r = Relation::new(self.n);
        for (i, j) in self.pairs() {
            r.insert(j, i);
        }
        r
    }

    /// Keeps only the pairs whose source is in `domain` and whose target is in `range`.
    pub fn restrict(&self, domain: &EventSet, range: &EventSet) -> Relation {
        let mut r = self.clone();
        for i in 0..self.n {
            let row = r.row_mut(i);
            if !domain.contains(i) {
                row.iter_mut().for_each(|w| *w = 0);
            } else {
                for (a, b) in row.iter_mut().zip(range.words()) {
                    *a &= b;
                }
            }
        }
        r
    }

    /// Keeps only the pairs `(i, j)` with `i < j`.
    pub fn keep_forward(&mut self) {
        let s = self.stride;
        for i in 0..self.n {
            let row = &mut self.bits[i * s..(i + 1) * s];
            // Words wholly at or below `i`, then the bits up to `i` of its own word.
            row[..i / 64].iter_mut().for_each(|w| *w = 0);
            row[i / 64] &= !0u64 << (i % 64) << 1;
        }
    }

    /// Transitive closure, in place (Warshall's algorithm on bit rows).
    pub fn close(&mut self) {
        let s = self.stride;
        if s == 1 {
            let bits = &mut self.bits;
            for k in 0..self.n {
                let (kb, v) = (1u64 << k, bits[k]);
                for row in bits.iter_mut() {
                    if *row & kb != 0 {
                        *row |= v;
                    }
                }
            }
            return;
        }
        if let Some(order) = self.postorder() {
            self.close_in_order(&order);
            return;
        }
        // A cyclic relation: Warshall. A step `k` adds nothing when `k` has no predecessor (no row holds bit `k`: closing
        // adds an edge into `k` only from a predecessor of a predecessor) or, at that step, no
        // successor. Initial writes are the first kind: without these skips a graph of many
        // locations (a harness of 400 allocations: 6,400 initial writes) paid n^2 bit tests
        // per closure for nothing.
        let mut has_pred = vec![0u64; s];
        for row in self.bits.chunks(s) {
            for (h, &w) in has_pred.iter_mut().zip(row) {
                *h |= w;
            }
        }
        for k in 0..self.n {
            let (kw, kb) = (k / 64, 1u64 << (k % 64));
            if has_pred[kw] & kb == 0 || self.bits[k * s..(k + 1) * s].iter().all(|&w| w == 0) {
                continue;
            }
            for i in 0..self.n {
                if self.bits[i * s + kw] & kb != 0 && i != k {
                    for w in 0..s {
                        let v = self.bits[k * s + w];
                        self.bits[i * s + w] |= v;
                    }
                }
            }
        }
    }

    /// Closes an acyclic relation, given its events successors first (`order`): each row
    /// becomes its direct successors and their rows, already closed. A successor already
    /// reached through another one adds nothing and is skipped, so a closed chain costs a row
    /// per event, not Warshall's row per pair (one thread of 10,000 stores took seconds).
    fn close_in_order(&mut self, order: &[usize]) {
        let s = self.stride;
        let mut direct = vec![0u64; s];
        let mut reached = vec![0u64; s];
        for &v in order {
            direct.copy_from_slice(self.row(v));
            reached.iter_mut().for_each(|w| *w = 0);
            for u in iter_bits(&direct) {
                if reached[u / 64] & (1 << (u % 64)) != 0 {
                    continue;
                }
                for (r, &w) in reached.iter_mut().zip(&self.bits[u * s..(u + 1) * s]) {
                    *r |= w;
                }
            }
            for (r, &d) in self.row_mut(v).iter_mut().zip(&direct) {
                *r = d;
            }
            for (r, &w) in self.row_mut(v).iter_mut().zip(&reached) {
                *r |= w;
            }
        }
    }

    pub fn closure(&self) -> Relation {
        let mut r = self.clone();
        r.close();
        r
    }

    /// Whether no event is related to itself.
    pub fn is_irreflexive(&self) -> bool {
        (0..self.n).all(|i| !self.contains(i, i))
    }

    /// Whether the relation has no cycle. Up to 64 events: peel off, round by round, the events
    /// with no successor left (a cycle is what can never be peeled; each round is a few word
    /// operations); beyond, a depth-first search.
    pub fn is_acyclic(&self) -> bool {
        let s = self.stride;
        if s == 1 {
            let mut remaining: u64 = if self.n == 64 {
                !0
            } else {
                (1u64 << self.n) - 1
            };
            loop {
                let mut next = remaining;
                let mut rest = remaining;
                while rest != 0 {
                    let i = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    if self.bits[i] & remaining == 0 {
                        next &= !(1u64 << i);
                    }
                }
                if next == 0 {
                    return true;
                }
                if next == remaining {
                    return false;
                }
                remaining = next;
            }
        }
        self.is_acyclic_by_search()
    }

    /// [`Relation::is_acyclic`] for more than 64 events.
    fn is_acyclic_by_search(&self) -> bool {
        self.postorder().is_some()
    }

    /// The events, each after all its successors (a depth-first search's finishing order), or
    /// `None` when the relation has a cycle. The search runs on a stack of its own and meets
    /// a cycle as an edge back to an event still on the stack; each row is scanned once,
    /// resuming where it stopped, so the cost is the rows' words plus the edges (peeling sinks
    /// round by round cost a round per event on a long chain).
    fn postorder(&self) -> Option<Vec<usize>> {
        const NEW: u8 = 0;
        const ON_STACK: u8 = 1;
        const DONE: u8 = 2;
        let s = self.stride;
        let mut mark = vec![NEW; self.n];
        // The finished events as bits, skipped while scanning rows: on a closed relation most
        // successors are finished, and skipping them a word at a time keeps the scan linear.
        let mut done = vec![0u64; s];
        let mut order = Vec::with_capacity(self.n);
        // (event, the next bit of its row to look at)
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..self.n {
            if mark[root] != NEW {
                continue;
            }
            mark[root] = ON_STACK;
            stack.push((root, 0));
            while let Some(top) = stack.last_mut() {
                let (v, from) = *top;
                match self.next_in_row(v * s, from, &done) {
                    Some(u) => {
                        top.1 = u + 1;
                        match mark[u] {
                            ON_STACK => return None,
                            NEW => {
                                mark[u] = ON_STACK;
                                stack.push((u, 0));
                            }
                            _ => {}
                        }
                    }
                    None => {
                        mark[v] = DONE;
                        done[v / 64] |= 1 << (v % 64);
                        order.push(v);
                        stack.pop();
                    }
                }
            }
        }
        Some(order)
    }

    /// The first bit at or after `from` in the row starting at word `start`, and not in `skip`.
    fn next_in_row(&self, start: usize, from: usize, skip: &[u64]) -> Option<usize> {
        let row = &self.bits[start..start + self.stride];
        let mut w = from / 64;
        if w >= row.len() {
            return None;
        }
        let mut word = row[w] & !skip[w] & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            if w == row.len() {
                return None;
            }
            word = row[w] & !skip[w];
        }
    }

    /// Adds `(a, b)` to a transitively closed relation and keeps it closed: every event that
    /// reaches `a` (and `a`) now reaches `b` and everything `b` reaches. Returns false, leaving
    /// the relation cyclic, when the new pair closes a cycle.
    pub fn insert_closed(&mut self, a: usize, b: usize) -> bool {
        let mut succ = self.row(b).to_vec();
        succ[b / 64] |= 1 << (b % 64);
        for i in 0..self.n {
            if i == a || self.contains(i, a) {
                for (x, y) in self.row_mut(i).iter_mut().zip(&succ) {
                    *x |= y;
                }
            }
        }
        !self.contains(a, a)
    }
}

impl fmt::Debug for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.pairs()).finish()
    }
}

impl fmt::Debug for EventSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-word fast paths (up to 64 events) and the general ones agree with the
    /// definitions on pseudo-random relations of 1 to 90 events.
    #[test]
    fn word_rows_agree_with_the_definitions() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [1, 2, 5, 31, 63, 64, 65, 90] {
            for density in [3u64, 10, 40] {
                let a = Relation::from_fn(n, |_, _| next() % 100 < density);
                let b = Relation::from_fn(n, |_, _| next() % 100 < density);
                let composed = Relation::from_fn(n, |i, j| {
                    (0..n).any(|k| a.contains(i, k) && b.contains(k, j))
                });
                assert_eq!(a.compose(&b), composed, "n={n}");
                // The closure is the least transitive relation containing `a`.
                let mut reach = a.clone();
                loop {
                    let more = reach.union(&reach.compose(&reach));
                    if more == reach {
                        break;
                    }
                    reach = more;
                }
                assert_eq!(a.closure(), reach, "n={n}");
                assert_eq!(a.is_acyclic(), reach.is_irreflexive(), "n={n}");
            }
        }
    }

    #[test]
    fn closure_and_cycles() {
        // 0 -> 1 -> 2 is acyclic; adding 2 -> 0 closes a cycle.
        let mut r = Relation::new(3);
        r.insert(0, 1);
        r.insert(1, 2);
        let c = r.closure();
        assert!(c.contains(0, 2));
        assert!(c.is_irreflexive());
        r.insert(2, 0);
        assert!(!r.is_acyclic());
    }

    #[test]
    fn acyclicity_by_peeling_matches_the_closure() {
        // A self-loop, a long cycle across a word boundary, and a diamond (acyclic).
        let mut self_loop = Relation::new(2);
        self_loop.insert(1, 1);
        assert!(!self_loop.is_acyclic());
        let mut ring = Relation::new(70);
        for i in 0..70 {
            ring.insert(i, (i + 1) % 70);
        }
        assert!(!ring.is_acyclic());
        let mut diamond = Relation::new(4);
        for (a, b) in [(0, 1), (0, 2), (1, 3), (2, 3)] {
            diamond.insert(a, b);
        }
        assert!(diamond.is_acyclic());
        assert_eq!(diamond.is_acyclic(), diamond.closure().is_irreflexive());
    }

    #[test]
    fn a_long_chain_is_acyclic_and_one_edge_back_closes_a_cycle() {
        // One thread's program order over 10,000 events: acyclic (each event reaches only later
        // ones); an edge from the last event to the 5,000th makes 4999 -> ... -> 9999 -> 4999
        // a cycle. The search scans each row once, so this is quick, where peeling took a round
        // per event.
        let n = 10_000;
        let mut r = Relation::new(n);
        for i in 0..n - 1 {
            r.insert(i, i + 1);
        }
        assert!(r.is_acyclic());
        r.insert(n - 1, n / 2);
        assert!(!r.is_acyclic());
    }

    #[test]
    fn closure_across_word_boundaries() {
        // A chain through indices on both sides of 64 must close into one reachability row.
        let n = 130;
        let mut r = Relation::new(n);
        for i in 0..n - 1 {
            r.insert(i, i + 1);
        }
        let c = r.closure();
        assert!(c.contains(0, 129));
        assert!(!c.contains(129, 0));
        assert!(c.is_irreflexive());
    }

    #[test]
    fn closure_matches_reachability_on_random_relations() {
        // Sparse random relations over 150 elements (three words per row, many elements
        // without predecessors or successors, as initial writes are, and cycles): the closure
        // relates exactly the pairs a depth-first search reaches in one step or more.
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..20 {
            let n = 150;
            let mut r = Relation::new(n);
            for _ in 0..(40 + round * 10) {
                let (a, b) = ((next() % n as u64) as usize, (next() % n as u64) as usize);
                r.insert(a, b);
            }
            let c = r.closure();
            for a in 0..n {
                let mut seen = vec![false; n];
                let mut stack: Vec<usize> = r.successors(a).collect();
                while let Some(x) = stack.pop() {
                    if !std::mem::replace(&mut seen[x], true) {
                        stack.extend(r.successors(x));
                    }
                }
                for (b, &reached) in seen.iter().enumerate() {
                    assert_eq!(c.contains(a, b), reached, "round {round}: {a} -> {b}");
                }
            }
        }
    }

    #[test]
    fn insert_closed_keeps_transitivity_and_detects_cycles() {
        let mut r = Relation::new(4);
        assert!(r.insert_closed(0, 1));
        assert!(r.insert_closed(2, 3));
        assert!(r.insert_closed(1, 2));
        assert!(r.contains(0, 3));
        assert_eq!(r, r.closure());
        assert!(!r.insert_closed(3, 0));
    }

    #[test]
    fn ranges_cross_word_boundaries() {
        let mut r = Relation::new(200);
        r.insert_range(3, 60, 130);
        assert!(!r.contains(3, 59) && r.contains(3, 60) && r.contains(3, 64) && r.contains(3, 129));
        assert!(!r.contains(3, 130));
        assert_eq!(r.successors(3).count(), 70);
        r.insert_range(4, 0, 64);
        assert_eq!(r.successors(4).count(), 64);
    }

    #[test]
    fn keep_forward_keeps_pairs_to_later_events() {
        for n in [3, 64, 65, 130] {
            let mut r = Relation::from_fn(n, |_, _| true);
            r.keep_forward();
            assert!(r.pairs().all(|(i, j)| i < j));
            assert_eq!(r.pairs().count(), n * (n - 1) / 2, "{n} events");
        }
    }

    #[test]
    fn compose_and_inverse() {
        let mut a = Relation::new(3);
        a.insert(0, 1);
        let mut b = Relation::new(3);
        b.insert(1, 2);
        let c = a.compose(&b);
        assert_eq!(c.pairs().collect::<Vec<_>>(), vec![(0, 2)]);
        assert_eq!(c.inverse().pairs().collect::<Vec<_>>(), vec![(2, 0)]);
    }
}
