//! Which threads of a program share a location with another thread: what a launch costs to
//! explore (docs/kernels.md, "Thread limits").
//!
//! A thread that accesses only locations no other thread running beside it writes, and
//! writes only locations no such thread accesses, has one source for each of its reads and no
//! read of another thread waits for it: the searches run it straight through, without a
//! branch (`reach`, `Context::still_writes`). Its cost is its own steps. The threads that
//! *share* a written location are what multiplies the executions, so the bound on a launch
//! is a bound on them (`--max-shared-threads`), not on the threads.

use scopecheck_ir::{LocId, Program, ThreadId};

use crate::interp::ThreadRun;
use crate::reach::{accesses_from, Accesses, Start};

/// The threads that may access a location (other than one whose updates commute) that another thread, not ordered with it by the
/// launch order, may write, or write a location such a thread may access: from each thread's
/// start, with its registers as the launch gives them (`reach`; where that walk is too long,
/// every location its code names).
pub fn sharing_threads(program: &Program) -> Vec<ThreadId> {
    let n = program.threads.len();
    // Locations whose updates commute are explored in one order (`commute`): threads that
    // share only those do not multiply the executions.
    let accessors = crate::statics::accessors(program);
    let mut statics: Vec<crate::statics::ThreadStatics> = (0..n)
        .map(|t| crate::statics::ThreadStatics::new(program, ThreadId(t as u32), 1, &accessors))
        .collect();
    crate::commute::mark(program, &mut statics, true);
    let commuting = |l: usize| {
        statics
            .first()
            .is_some_and(|s| s.is_commuting(LocId(l as u32)))
    };
    let accesses: Vec<Accesses> = program
        .threads
        .iter()
        .map(|thread| {
            let run = ThreadRun::new(program, thread, false);
            let (values, windows, unknown) = run.registers();
            let start = Start {
                values,
                windows,
                unknown,
                fresh: &[],
            };
            accesses_from(program, thread, 0, start)
                .unwrap_or_else(|| every_access(program, thread))
        })
        .collect();
    // Per location, the threads that may access it and whether each writes it.
    let mut by_loc: Vec<Vec<(usize, bool)>> = vec![vec![]; program.locations.len()];
    for (t, a) in accesses.iter().enumerate() {
        for &l in &a.writes {
            by_loc[l.0 as usize].push((t, true));
        }
        for &l in &a.reads {
            if a.writes.binary_search(&l).is_err() {
                by_loc[l.0 as usize].push((t, false));
            }
        }
    }
    let successors = crate::search::launch_successors(program);
    let ordered = |t: usize, u: usize| successors[t].contains(&u) || successors[u].contains(&t);
    let mut shares = vec![false; n];
    for (l, who) in by_loc.iter().enumerate() {
        if commuting(l) || !who.iter().any(|&(_, w)| w) || who.iter().all(|&(t, _)| shares[t]) {
            continue;
        }
        for (i, &(t, tw)) in who.iter().enumerate() {
            for &(u, uw) in &who[i + 1..] {
                if (tw || uw) && u != t && !ordered(t, u) {
                    shares[t] = true;
                    shares[u] = true;
                }
            }
        }
    }
    (0..n)
        .filter(|&t| shares[t])
        .map(|t| ThreadId(t as u32))
        .collect()
}

/// Every location the code of `thread` names, read or written.
fn every_access(program: &Program, thread: &scopecheck_ir::Thread) -> Accesses {
    let mut a = Accesses::default();
    for i in &thread.code {
        let Some(addr) = i.kind.address() else {
            continue;
        };
        let locs: Vec<LocId> = program.possible_locations(addr);
        match i.kind {
            scopecheck_ir::InstrKind::Load { .. } => a.reads.extend(locs),
            scopecheck_ir::InstrKind::Store { .. } => a.writes.extend(locs),
            _ => {
                a.reads.extend(&locs);
                a.writes.extend(locs);
            }
        }
    }
    for v in [&mut a.reads, &mut a.writes] {
        v.sort_unstable();
        v.dedup();
    }
    a
}
