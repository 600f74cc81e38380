//! Enumeration of the strict partial orders a model must choose per execution: coherence order
//! over the writes of each location, Fence-SC order over `fence.sc` pairs.
//!
//! Both are "relate every pair in this set one way or the other, keep what is forced, stay
//! acyclic and transitive"; pairs outside the set stay unrelated unless transitivity relates
//! them. Each order is produced once.

use crate::relation::Relation;

/// The pairs an order must relate, in the order the enumeration decides them.
#[derive(Clone, Copy)]
pub enum Pairs<'a> {
    /// As listed.
    List(&'a [(usize, usize)]),
    /// Every pair `(a, b)` of a relation, row by row and, in a row, by `b`: a relation holds
    /// the pairs of n events in n²/8 bytes, where the list of the pairs of one thread's
    /// 10,000 stores took 800 MB and most of the leaf's time to build.
    Rows(&'a Relation),
}

impl Pairs<'_> {
    /// The first pair at or after position `from` that `order` relates neither way, with its
    /// position (the next search starts after it).
    fn next_undecided(&self, order: &Relation, from: usize) -> Option<(usize, (usize, usize))> {
        let undecided = |(a, b): (usize, usize)| !order.contains(a, b) && !order.contains(b, a);
        match *self {
            Pairs::List(pairs) => (from..pairs.len())
                .find(|&i| undecided(pairs[i]))
                .map(|i| (i, pairs[i])),
            Pairs::Rows(rel) => {
                let n = rel.len();
                for a in from / n.max(1)..n {
                    let start = if a == from / n { from % n } else { 0 };
                    let (row, decided) = (rel.row(a), order.row(a));
                    for w in start / 64..row.len() {
                        // Pairs of the row not yet ordered a before b; b before a is a bit of
                        // another row, looked up pair by pair.
                        let mut word = row[w] & !decided[w];
                        if w == start / 64 {
                            word &= !0u64 << (start % 64);
                        }
                        while word != 0 {
                            let b = w * 64 + word.trailing_zeros() as usize;
                            if !order.contains(b, a) {
                                return Some((a * n + b, (a, b)));
                            }
                            word &= word - 1;
                        }
                    }
                }
                None
            }
        }
    }
}

/// Calls `visit` with every strict partial order that contains `forced` and relates each pair in
/// `pairs` in one direction. `forced` need not be closed. Nothing is visited when `forced` is
/// cyclic. The enumeration ends early, at any step, once `stop` says so (a spent budget:
/// the orders number up to n! for n writes).
pub fn for_each_order(
    forced: &Relation,
    pairs: Pairs,
    stop: &dyn Fn() -> bool,
    visit: &mut dyn FnMut(&Relation),
) {
    for_each_order_pruned(forced, pairs, &|_| false, stop, visit)
}

/// As [`for_each_order`], but gives up a partial order as soon as `dead` says no extension of it
/// can be accepted. `dead` must be monotone: once true for an order, true for every larger one
/// (as every axiom that only gets harder with more edges is).
pub fn for_each_order_pruned(
    forced: &Relation,
    pairs: Pairs,
    dead: &dyn Fn(&Relation) -> bool,
    stop: &dyn Fn() -> bool,
    visit: &mut dyn FnMut(&Relation),
) {
    let closed = forced.closure();
    if !closed.is_irreflexive() || dead(&closed) {
        return;
    }
    extend(closed, pairs, dead, stop, visit);
}

/// The orders containing `order` that relate each of `pairs` one way, depth first: the pair's
/// one way and its extensions before its other way's (an explicit stack: `pairs` is as long as
/// the input makes it, a call per pair overflowed the stack).
fn extend(
    order: Relation,
    pairs: Pairs,
    dead: &dyn Fn(&Relation) -> bool,
    stop: &dyn Fn() -> bool,
    visit: &mut dyn FnMut(&Relation),
) {
    enum Todo {
        /// Relate the pairs from this index on.
        Extend(Relation, usize),
        /// Relate pair `(a, b)`, at position `i`, the other way, then those after it.
        Other(Relation, usize, (usize, usize)),
    }
    let mut todo = vec![Todo::Extend(order, 0)];
    while let Some(next) = todo.pop() {
        if stop() {
            return;
        }
        match next {
            Todo::Extend(order, from) => {
                // Skip pairs already decided by what was chosen before.
                let Some((i, (a, b))) = pairs.next_undecided(&order, from) else {
                    visit(&order);
                    continue;
                };
                let mut one = order.clone();
                todo.push(Todo::Other(order, i, (a, b)));
                if one.insert_closed(a, b) && !dead(&one) {
                    todo.push(Todo::Extend(one, i + 1));
                }
            }
            Todo::Other(mut other, i, (a, b)) => {
                if other.insert_closed(b, a) && !dead(&other) {
                    todo.push(Todo::Extend(other, i + 1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_mutually_related_elements_have_six_orders() {
        let pairs = [(0, 1), (0, 2), (1, 2)];
        let mut n = 0;
        for_each_order(
            &Relation::new(3),
            Pairs::List(&pairs),
            &|| false,
            &mut |o| {
                assert!(o.is_irreflexive());
                n += 1;
            },
        );
        assert_eq!(n, 6);
    }

    #[test]
    fn forced_pairs_prune_orders() {
        // 0 before 1 is forced: of the 6 total orders of three, 3 remain.
        let mut forced = Relation::new(3);
        forced.insert(0, 1);
        let pairs = [(0, 1), (0, 2), (1, 2)];
        let mut n = 0;
        for_each_order(&forced, Pairs::List(&pairs), &|| false, &mut |_| n += 1);
        assert_eq!(n, 3);
    }

    #[test]
    fn unrelated_pairs_stay_unrelated() {
        // Only (0, 1) must be related; 2 stays apart: two orders, neither relating 2.
        let mut seen = vec![];
        for_each_order(
            &Relation::new(3),
            Pairs::List(&[(0, 1)]),
            &|| false,
            &mut |o| {
                assert!(!o.contains(0, 2) && !o.contains(2, 0));
                seen.push(o.clone());
            },
        );
        assert_eq!(seen.len(), 2);
    }

    /// The pairs of a relation, row by row, give the orders the same list gives, in the same
    /// order: 5 elements, pairs chosen by a fixed pattern, some forced.
    #[test]
    fn pairs_as_rows_enumerate_as_the_list() {
        let n = 5;
        let list: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| (a * 7 + b * 3) % 4 != 0)
            .collect();
        let rows = Relation::from_fn(n, |a, b| list.contains(&(a, b)));
        let mut forced = Relation::new(n);
        forced.insert(3, 1);
        let collect = |pairs: Pairs| {
            let mut seen = vec![];
            for_each_order(&forced, pairs, &|| false, &mut |o| seen.push(o.clone()));
            seen
        };
        let from_list = collect(Pairs::List(&list));
        assert!(from_list.len() > 2, "{}", from_list.len());
        assert_eq!(collect(Pairs::Rows(&rows)), from_list);
    }

    #[test]
    fn a_stop_ends_the_enumeration() {
        // 4 elements, all pairs: 24 orders; a stop that says yes from its 5th question on
        // ends it after at most 4 orders.
        let pairs: Vec<(usize, usize)> = (0..4)
            .flat_map(|a| (a + 1..4).map(move |b| (a, b)))
            .collect();
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > 4
        };
        let mut n = 0;
        for_each_order(&Relation::new(4), Pairs::List(&pairs), &stop, &mut |_| {
            n += 1
        });
        assert!(n <= 4, "{n} of the 24 orders");
    }
}
