//! Forward-progress models: which threads a GPU scheduler may leave unscheduled forever while
//! others spin.
//!
//! Sorensen, Evrard, Donaldson, "GPU schedulers: how fair is fair enough?" (CONCUR 2018) name the
//! models across blocks (work-groups): FAIR (every block is eventually scheduled), OBE
//! (occupancy-bound: a block once running keeps being scheduled, but only as many blocks run at
//! a time as fit on the device), LOBE (OBE where blocks start in id order), HSA (only the
//! lowest-id unfinished block is guaranteed to progress) and UNFAIR (no guarantee beyond one
//! running thread). Within a warp, independent thread scheduling (sm_70+) schedules diverged
//! threads fairly; without it (pre-Volta lockstep) a warp may run one diverged thread's spin
//! forever and never the others.
//!
//! A hang is a configuration where every thread has finished, spins in an await loop on values
//! no write will change, waits at a barrier that never completes, or is never scheduled (again);
//! this module says which "starved" threads a scheduler permits. Under OBE and LOBE a block that
//! started keeps being scheduled, so only blocks that never started can starve, and only when
//! the stuck blocks fill every resident slot. Under HSA and UNFAIR a block that is not guaranteed
//! progress may also be preempted midway and never resumed: the explorer then tries every prefix
//! of the starved threads' paths. Within a block, threads of other warps are scheduled fairly; a
//! warp-mate of a spinner can starve only without independent thread scheduling (from its
//! first instruction, where litmus threads diverge).

use scopecheck_ir::{Placement, Program, ThreadId};

/// Scheduling across blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Progress {
    Fair,
    Obe,
    Hsa,
    Lobe,
    Unfair,
}

impl Progress {
    pub fn name(self) -> &'static str {
        match self {
            Progress::Fair => "fair",
            Progress::Obe => "obe",
            Progress::Hsa => "hsa",
            Progress::Lobe => "lobe",
            Progress::Unfair => "unfair",
        }
    }
}

/// The scheduler a program runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scheduler {
    pub progress: Progress,
    /// Independent thread scheduling within a warp (sm_70 and later).
    pub its: bool,
    /// How many blocks of one GPU can be resident at once; `None`: all of them.
    pub resident_blocks: Option<u32>,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler {
            progress: Progress::Obe,
            its: true,
            resident_blocks: None,
        }
    }
}

/// A block: (gpu, cta); host threads are none.
fn block(p: &Placement) -> Option<(u32, u32)> {
    match p {
        Placement::Device(d) => Some((d.gpu, d.cta)),
        Placement::Host => None,
    }
}

fn warp_mates(a: &Placement, b: &Placement) -> bool {
    match (a, b) {
        (Placement::Device(x), Placement::Device(y)) => {
            x.warp.is_some() && x.warp == y.warp && a.same_cta(b)
        }
        _ => false,
    }
}

impl Scheduler {
    fn placement(program: &Program, t: ThreadId) -> &Placement {
        &program.thread(t).placement
    }

    /// The sets of threads worth trying as never scheduled: each could be starved in some hang
    /// under this scheduler. Always starts with the empty set.
    pub fn starvation_candidates(&self, program: &Program) -> Vec<Vec<ThreadId>> {
        let n = program.threads.len().min(16);
        let ids: Vec<ThreadId> = (0..n as u32).map(ThreadId).collect();
        let mut out = vec![vec![]];
        for mask in 1u32..(1 << n) - 1 {
            let set: Vec<ThreadId> = ids
                .iter()
                .copied()
                .filter(|t| mask >> t.0 & 1 == 1)
                .collect();
            if set
                .iter()
                .all(|&t| self.may_starve_some_way(program, t, &set))
            {
                out.push(set);
            }
        }
        out
    }

    /// Whether a starved thread may have run part of its path first: the scheduler may preempt
    /// a block and never resume it.
    pub fn preempts(&self) -> bool {
        matches!(self.progress, Progress::Hsa | Progress::Unfair)
    }

    /// Whether `t` could be starved at all, given the others starved with it.
    fn may_starve_some_way(&self, program: &Program, t: ThreadId, set: &[ThreadId]) -> bool {
        // A thread that starts only after others finish never starts if one of them is
        // starved. (One that never finishes because it hangs leaves it unlaunched at the
        // hang's leaf, which says so: no starved set is needed for that.)
        if program.thread(t).after.iter().any(|a| set.contains(a)) {
            return true;
        }
        let p = Self::placement(program, t);
        let Some(b) = block(p) else { return false };
        let warp = !self.its
            && program
                .threads
                .iter()
                .any(|o| !std::ptr::eq(&o.placement, p) && warp_mates(&o.placement, p));
        let whole_block = program
            .threads
            .iter()
            .enumerate()
            .filter(|(_, o)| block(&o.placement) == Some(b))
            .all(|(i, _)| set.contains(&ThreadId(i as u32)));
        let blocks = match self.progress {
            Progress::Fair => false,
            // A preempted block's finished threads need not be starved with it.
            Progress::Unfair | Progress::Hsa => true,
            Progress::Obe | Progress::Lobe => whole_block && self.resident_blocks.is_some(),
        };
        warp || blocks
    }

    /// Whether the scheduler may leave `starved` unscheduled forever while `spinning` spin and
    /// every other thread has finished; `Some(reason)` in words when it may, `None` otherwise.
    /// With nothing starved the hang needs no unfairness at all.
    pub fn permits(
        &self,
        program: &Program,
        spinning: &[ThreadId],
        starved: &[ThreadId],
    ) -> Option<String> {
        if starved.is_empty() {
            return Some("every thread is scheduled and none can release it".into());
        }
        let mut reasons = Vec::new();
        for &t in starved {
            let p = Self::placement(program, t);
            let name = &program.thread(t).name;
            if let Some(&w) = program
                .thread(t)
                .after
                .iter()
                .find(|w| spinning.contains(w) || starved.contains(w))
            {
                reasons.push(format!(
                    "{name} starts only after {} finishes, which never happens",
                    program.thread(w).name
                ));
                continue;
            }
            if let Some(s) = spinning
                .iter()
                .find(|&&s| !self.its && warp_mates(Self::placement(program, s), p))
            {
                reasons.push(format!(
                    "{name} shares a warp with {} and without independent thread scheduling the warp may run {}'s spin forever",
                    program.thread(*s).name,
                    program.thread(*s).name
                ));
                continue;
            }
            match self.block_starvation(program, t, spinning, starved) {
                Some(r) => reasons.push(r),
                None => return None,
            }
        }
        Some(reasons.join("; "))
    }

    fn block_starvation(
        &self,
        program: &Program,
        t: ThreadId,
        spinning: &[ThreadId],
        starved: &[ThreadId],
    ) -> Option<String> {
        let b = block(Self::placement(program, t))?;
        let name = &program.thread(t).name;
        let block_of = |x: ThreadId| block(Self::placement(program, x));
        let threads_of = |blk: (u32, u32)| {
            program
                .threads
                .iter()
                .enumerate()
                .filter(move |(_, o)| block(&o.placement) == Some(blk))
                .map(|(i, _)| ThreadId(i as u32))
        };
        // A block with a stuck thread is running: its other warps get scheduled too.
        if spinning.iter().any(|&s| block_of(s) == Some(b)) {
            return None;
        }
        let mut stuck_blocks: Vec<(u32, u32)> =
            spinning.iter().filter_map(|&s| block_of(s)).collect();
        stuck_blocks.sort_unstable();
        stuck_blocks.dedup();
        match self.progress {
            Progress::Fair => None,
            Progress::Unfair => Some(format!(
                "block {} of {name} is never scheduled (again): the unfair scheduler guarantees it no progress",
                b.1
            )),
            Progress::Hsa => {
                let oldest = stuck_blocks
                    .iter()
                    .copied()
                    .chain(starved.iter().filter_map(|&s| block_of(s)))
                    .filter(|blk| blk.0 == b.0)
                    .min()?;
                (oldest != b && stuck_blocks.contains(&oldest)).then(|| {
                    format!(
                        "under HSA only the lowest unfinished block ({}) is guaranteed progress, and it is stuck; block {} of {name} need never run (again)",
                        oldest.1, b.1
                    )
                })
            }
            Progress::Obe | Progress::Lobe => {
                if !threads_of(b).all(|x| starved.contains(&x)) {
                    return None;
                }
                let n = self.resident_blocks? as usize;
                let occupying = stuck_blocks.iter().filter(|blk| blk.0 == b.0).count();
                if occupying < n {
                    return None;
                }
                let started_later = program
                    .threads
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !starved.contains(&ThreadId(*i as u32)))
                    .filter_map(|(_, o)| block(&o.placement))
                    .any(|s| s.0 == b.0 && s.1 > b.1);
                if self.progress == Progress::Lobe && started_later {
                    return None;
                }
                Some(format!(
                    "block {} of {name} need not be resident: --resident-blocks {n} and the stuck block{} never finish{}",
                    b.1,
                    if occupying == 1 { "" } else { "s" },
                    if occupying == 1 { "es" } else { "" },
                ))
            }
        }
    }
}
