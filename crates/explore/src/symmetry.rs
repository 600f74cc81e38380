//! Symmetry reduction: threads that are interchangeable are explored in one order only.
//!
//! Threads are *interchangeable* when swapping any two of them maps the program to itself: the
//! same code and registers, placements that every other thread sees alike (each alone in its
//! CTA and cluster, on one GPU; a warp number then names no other lane), the same place in the
//! launch order (started after the same threads, none after another, and every other thread
//! started after all of them or none: a kernel's single-thread blocks between the host code
//! that launched them and the host code after a synchronization), no shared-memory location,
//! and a condition and report that name no register of theirs. A permutation of such a class then
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
    // A thread alone in its cluster is alone in its CTA and warp too: the warp number a
    // launch gives it (warp 0 of its block) names no other lane.
    let alone = |t: usize| {
        let Placement::Device(d) = program.threads[t].placement else {
            return false;
        };
        program.threads.iter().enumerate().all(|(u, o)| {
            u == t
                || match o.placement {
                    Placement::Device(e) => e.gpu != d.gpu || e.cluster != d.cluster,
                    Placement::Host => true,
                }
        })
    };
    // Threads in a launch order or with a warp number (a `.cu` or `.cl` kernel's) are
    // eligible only without Fence-SC fences: the hole search, which runs where there are
    // classes, judges each leaf orbit over every Fence-SC order, and on a lock of six blocks
    // with `__threadfence` on both sides that took 3.5 s against the revisiting search's 1.2 s.
    let launched = |t: usize| {
        let th = &program.threads[t];
        !th.after.is_empty()
            || program
                .threads
                .iter()
                .any(|o| o.after.contains(&ThreadId(t as u32)))
            || matches!(th.placement, Placement::Device(d) if d.warp.is_some())
    };
    let sc_fence = |t: usize| {
        program.threads[t].code.iter().any(|i| {
            matches!(
                i.kind,
                scopecheck_ir::InstrKind::Fence {
                    order: scopecheck_ir::FenceOrder::Sc,
                    ..
                }
            )
        })
    };
    let eligible = |t: usize| {
        let th = &program.threads[t];
        let fenced_launch = launched(t) && sc_fence(t);
        !fenced_launch
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
    // Launch order: a class's threads all start after the same threads (the host code that
    // launched them), none after another, and every other thread starts after all of them
    // or none (the host code after a synchronization): then swapping two of them maps the
    // launch order to itself. A class that fails this is split into threads of no class.
    out.retain(|c| c.len() > 1 && launch_alike(program, c));
    out
}

/// Whether the threads of `class` stand alike in the launch order (see `classes`).
fn launch_alike(program: &Program, class: &[usize]) -> bool {
    let after = |t: usize| {
        let mut a: Vec<ThreadId> = program.threads[t].after.clone();
        a.sort_unstable();
        a.dedup();
        a
    };
    let first = after(class[0]);
    let member = |x: &ThreadId| class.contains(&(x.0 as usize));
    class.iter().all(|&t| after(t) == first)
        && !first.iter().any(member)
        && program.threads.iter().enumerate().all(|(u, o)| {
            class.contains(&u) || {
                let n = o.after.iter().filter(|x| member(x)).count();
                n == 0 || class.iter().all(|&t| o.after.contains(&ThreadId(t as u32)))
            }
        })
}
