//! Enumeration of the strict partial orders a model must choose per execution: coherence order
//! over the writes of each location, Fence-SC order over `fence.sc` pairs.
//!
//! Both are "relate every pair in this set one way or the other, keep what is forced, stay
//! acyclic and transitive"; pairs outside the set stay unrelated unless transitivity relates
//! them. Each order is produced once.

use crate::relation::Relation;

/// Calls `visit` with every strict partial order that contains `forced` and relates each pair in
/// `pairs` in one direction. `forced` need not be closed. Nothing is visited when `forced` is
/// cyclic. The enumeration ends early, at any step, once `stop` says so (a spent budget:
/// the orders number up to n! for n writes).
pub fn for_each_order(
    forced: &Relation,
    pairs: &[(usize, usize)],
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
    pairs: &[(usize, usize)],
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
    pairs: &[(usize, usize)],
    dead: &dyn Fn(&Relation) -> bool,
    stop: &dyn Fn() -> bool,
    visit: &mut dyn FnMut(&Relation),
) {
    enum Todo {
        /// Relate the pairs from this index on.
        Extend(Relation, usize),
        /// Relate pair `pairs[i]` the other way, then those after it.
        Other(Relation, usize),
    }
    let mut todo = vec![Todo::Extend(order, 0)];
    while let Some(next) = todo.pop() {
        if stop() {
            return;
        }
        match next {
            Todo::Extend(order, from) => {
                // Skip pairs already decided by what was chosen before.
                let Some(i) = (from..pairs.len()).find(|&i| {
                    let (a, b) = pairs[i];
                    !order.contains(a, b) && !order.contains(b, a)
                }) else {
                    visit(&order);
                    continue;
                };
                let (a, b) = pairs[i];
                let mut one = order.clone();
                todo.push(Todo::Other(order, i));
                if one.insert_closed(a, b) && !dead(&one) {
                    todo.push(Todo::Extend(one, i + 1));
                }
            }
            Todo::Other(mut other, i) => {
                let (a, b) = pairs[i];
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
        for_each_order(&Relation::new(3), &pairs, &|| false, &mut |o| {
            assert!(o.is_irreflexive());
            n += 1;
        });
        assert_eq!(n, 6);
    }

    #[test]
    fn forced_pairs_prune_orders() {
        // 0 before 1 is forced: of the 6 total orders of three, 3 remain.
        let mut forced = Relation::new(3);
        forced.insert(0, 1);
        let pairs = [(0, 1), (0, 2), (1, 2)];
        let mut n = 0;
        for_each_order(&forced, &pairs, &|| false, &mut |_| n += 1);
        assert_eq!(n, 3);
    }

    #[test]
    fn unrelated_pairs_stay_unrelated() {
        // Only (0, 1) must be related; 2 stays apart: two orders, neither relating 2.
        let mut seen = vec![];
        for_each_order(&Relation::new(3), &[(0, 1)], &|| false, &mut |o| {
            assert!(!o.contains(0, 2) && !o.contains(2, 0));
            seen.push(o.clone());
        });
        assert_eq!(seen.len(), 2);
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
        for_each_order(&Relation::new(4), &pairs, &stop, &mut |_| n += 1);
        assert!(n < 24 && n <= 4, "{n} orders");
    }
}
