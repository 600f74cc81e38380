//! Symmetry reduction: threads that are interchangeable are explored in one order only.
//!
//! Threads are *interchangeable* when swapping any two of them maps the program to itself: the
//! same code and registers, placements that every other thread sees alike (each alone in its
//! CTA and cluster, on one GPU, no warp), no launch order, no shared-memory location, and a
//! condition and report that name no register of theirs. A permutation of such a class then
//! maps every consistent execution to a consistent execution with the same final state.
//!
//! The hole search then explores one search state per orbit and judges one leaf per orbit,
//! counted for the whole orbit (`orbits`).
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
