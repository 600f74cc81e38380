//! Symmetry reduction: threads that are interchangeable are explored in one order only.
//!
//! Threads are *interchangeable* when swapping any two of them maps the program to itself: the
//! same code and registers, placements that every other thread sees alike (each alone in its
//! CTA and cluster, on one GPU, no warp), no launch order, no shared-memory location, and a
//! condition and report that name no register of theirs. A permutation of such a class then
//! maps every consistent execution to a consistent execution with the same final state.
//!
//! In each orbit the search keeps the executions in which the class's *read sequences* (the
//! values each thread read, in program order) are sorted by thread number, and prunes a partial
//! graph as soon as two neighbours are definitely out of order. A sorted member exists in every
//! orbit; the sorted members are the images under permutations within groups of threads with
//! equal sequences, so each stands for `|class|! / Π k!` executions (`k`: the sizes of those
//! groups), whatever the execution's own symmetries.
//!
//! Races and hangs name threads; a search that finds one hands over to the full search, which
//! reports every image exactly.

use scopecheck_ir::{MemorySpace, Observable, Placement, Program, ThreadId};

/// The classes of interchangeable threads (two or more each), by thread index; `starvable`:
/// the scheduler may starve some thread (`Scheduler::starvation_candidates` offers more than
/// the empty set).
pub fn classes(program: &Program, starvable: bool) -> Vec<Vec<usize>> {
    // Starvation names blocks; only a scheduler that starves no one is blind to them.
    if starvable {
        return vec![];
    }
    let observed: Vec<usize> = program
        .observables()
        .into_iter()
        .filter_map(|o| match o {
            Observable::Reg(t, _) => Some(t.0 as usize),
            Observable::Loc(_) => None,
        })
        .collect();
    let shared: Vec<bool> = program
        .locations
        .iter()
        .map(|l| l.space == MemorySpace::Shared)
        .collect();
    let alone = |t: usize| {
        let Placement::Device(d) = program.threads[t].placement else {
            return false;
        };
        d.warp.is_none()
            && program.threads.iter().enumerate().all(|(u, o)| {
                u == t
                    || match o.placement {
                        Placement::Device(e) => e.gpu != d.gpu || e.cluster != d.cluster,
                        Placement::Host => true,
                    }
            })
    };
    let eligible = |t: usize| {
        let th = &program.threads[t];
        th.after.is_empty()
            && !program
                .threads
                .iter()
                .any(|o| o.after.contains(&ThreadId(t as u32)))
            && !observed.contains(&t)
            && alone(t)
            && th.code.iter().all(|i| match &i.kind {
                scopecheck_ir::InstrKind::Load { addr, .. }
                | scopecheck_ir::InstrKind::Store { addr, .. }
                | scopecheck_ir::InstrKind::Rmw { addr, .. } => program
                    .possible_locations(addr)
                    .iter()
                    .all(|l| !shared[l.0 as usize]),
                _ => true,
            })
    };
    let same = |a: usize, b: usize| {
        let (x, y) = (&program.threads[a], &program.threads[b]);
        let gpu = |p: &Placement| match p {
            Placement::Device(d) => Some(d.gpu),
            Placement::Host => None,
        };
        x.registers == y.registers
            && x.init_regs == y.init_regs
            && gpu(&x.placement) == gpu(&y.placement)
            && x.code.len() == y.code.len()
            && x.code.iter().zip(&y.code).all(|(i, j)| i.kind == j.kind)
    };
    let mut out: Vec<Vec<usize>> = Vec::new();
    for t in (0..program.threads.len()).filter(|&t| eligible(t)) {
        match out.iter_mut().find(|c| same(c[0], t)) {
            Some(c) => c.push(t),
            None => out.push(vec![t]),
        }
    }
    out.retain(|c| c.len() > 1);
    out
}

/// How two read sequences compare where both are known: `Less`/`Greater` when they differ at
/// a known position or one is a finished prefix of the other, `None` while undecided. A
/// sequence is given as its known values up to its first unknown one (`None` ends it), and
/// whether it is complete (the thread will read no more).
pub fn order(
    a: &[Option<i64>],
    a_done: bool,
    b: &[Option<i64>],
    b_done: bool,
) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering::*;
    for (x, y) in a.iter().zip(b) {
        match (x, y) {
            (Some(x), Some(y)) if x != y => return Some(x.cmp(y)),
            (Some(_), Some(_)) => {}
            _ => return None,
        }
    }
    match a.len().cmp(&b.len()) {
        Equal if a_done && b_done => Some(Equal),
        Less if a_done => Some(Less),
        Greater if b_done => Some(Greater),
        _ => None,
    }
}

/// `n!`, saturating.
fn factorial(n: usize) -> u64 {
    (1..=n as u64).fold(1u64, |f, k| f.saturating_mul(k))
}

/// How many executions a sorted execution stands for: per class, `|class|!` over the product
/// of the factorials of the sizes of its groups of equal read sequences.
pub fn weight(groups: &[Vec<usize>]) -> u64 {
    groups
        .iter()
        .map(|sizes_and_total| {
            let total: usize = sizes_and_total.iter().sum();
            sizes_and_total
                .iter()
                .fold(factorial(total), |w, &k| w / factorial(k))
        })
        .fold(1u64, |w, c| w.saturating_mul(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::*;

    #[test]
    fn read_sequences_compare_only_where_known() {
        let s = |v: &[i64]| v.iter().map(|x| Some(*x)).collect::<Vec<_>>();
        assert_eq!(order(&s(&[0, 1]), true, &s(&[0, 2]), false), Some(Less));
        assert_eq!(order(&s(&[0, 3]), false, &s(&[0, 2]), false), Some(Greater));
        // A finished shorter sequence is smaller; an unfinished one is undecided.
        assert_eq!(order(&s(&[0]), true, &s(&[0, 2]), false), Some(Less));
        assert_eq!(order(&s(&[0]), false, &s(&[0, 2]), false), None);
        assert_eq!(order(&s(&[0, 2]), false, &s(&[0]), true), Some(Greater));
        // A value not known yet (a hole) stops the comparison.
        assert_eq!(order(&[Some(0), None], false, &s(&[0, 1]), true), None);
        assert_eq!(order(&s(&[1]), true, &s(&[1]), true), Some(Equal));
    }

    #[test]
    fn weights_are_multinomials() {
        // Four threads with four different sequences: 4! orderings.
        assert_eq!(weight(&[vec![1, 1, 1, 1]]), 24);
        // Two pairs of equal sequences: 4! / (2! 2!).
        assert_eq!(weight(&[vec![2, 2]]), 6);
        // Two classes multiply.
        assert_eq!(weight(&[vec![1, 1], vec![3]]), 2);
    }
}
