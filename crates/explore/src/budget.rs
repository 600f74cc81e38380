//! The limits of a search (`--max-executions`, `--timeout`, `--max-memory`) and the probe that
//! every loop whose length the input controls asks: the graph search at each state, the leaf
//! judge at each consistent execution, and the models' enumerations of coherence and
//! Fence-SC orders at each partial order (one leaf of ten threads storing to one word has
//! 10! coherence orders: without the probe there, neither bound stopped it).

use std::time::Instant;

/// Limits of one search. `Copy`, so that each worker and each leaf holds its own.
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget {
    /// Consistent executions to hand on before stopping (`--max-executions`): exactly this
    /// many, except that under symmetry reduction one execution stands for its orbit, which
    /// may take the count past the bound.
    pub max_executions: Option<u64>,
    /// When to stop (`--timeout`, one deadline for everything a file's check runs).
    pub deadline: Option<Instant>,
    /// The memory the process may hold (`--max-memory`), and how to read what it holds.
    pub memory: Option<MemoryBound>,
}

/// A memory bound: `used` reads the bytes the process holds now (the allocator counts them,
/// so the read is one atomic load).
#[derive(Clone, Copy, Debug)]
pub struct MemoryBound {
    pub limit: u64,
    pub used: fn() -> u64,
}

/// How often the clock is read: every this many probes (a probe costs a few nanoseconds; the
/// work between two probes, at least a cloned relation or a graph step, costs more, so a
/// deadline is seen well within a millisecond of passing).
const CLOCK_EVERY: u32 = 64;

impl Budget {
    /// Why the search must stop now, if it must, having handed on `reported` executions;
    /// `tick` counts the caller's probes so that the clock is read only every
    /// [`CLOCK_EVERY`]th (the other bounds cost an integer compare and an atomic load).
    pub fn exceeded(&self, reported: u128, tick: u32) -> Option<String> {
        if let Some(max) = self.max_executions {
            if reported >= u128::from(max) {
                return Some(format!("--max-executions {max} was reached"));
            }
        }
        if let Some(m) = self.memory {
            if (m.used)() > m.limit {
                return Some(format!(
                    "the memory bound was reached (--max-memory {})",
                    show_bytes(m.limit)
                ));
            }
        }
        if let Some(d) = self.deadline {
            if tick.is_multiple_of(CLOCK_EVERY) && Instant::now() >= d {
                return Some("the --timeout was reached".into());
            }
        }
        None
    }

    /// Whether the search must stop: records why in `out.cut_short` (once there, it stays).
    pub(crate) fn spent(&self, out: &mut crate::Exploration, tick: u32) -> bool {
        if out.cut_short.is_some() {
            return true;
        }
        out.cut_short = self.exceeded(out.reported, tick);
        out.cut_short.is_some()
    }

    /// Whether the deadline has passed (read now, whatever the tick).
    pub fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// A byte count as `--max-memory` reads it back: whole MiB or GiB where exact, else bytes.
pub fn show_bytes(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    if n >= GIB && n.is_multiple_of(GIB) {
        format!("{}G", n / GIB)
    } else if n >= MIB && n.is_multiple_of(MIB) {
        format!("{}M", n / MIB)
    } else {
        n.to_string()
    }
}

/// What a model's work on one leaf (`Model::executions`) asks of the search's bounds, with
/// `pending` the consistent executions it found and has not yet handed on. A leaf of
/// thousands of events is itself long work: its relations take n²/8 bytes each (12 MB for
/// 10,000 events) and each step over them milliseconds, so the model asks between its
/// steps, not only in its order enumerations.
pub trait Stop {
    /// At each step of a loop of short steps: reads the clock every [`CLOCK_EVERY`]th time.
    fn step(&self, pending: u128) -> bool;
    /// Between longer pieces of work: reads the clock now. Once either says stop, both do.
    fn now(&self, pending: u128) -> bool;
}

/// A probe with its own tick, for a loop that asks a budget many times: the leaf judge and
/// the models' order enumerations through it. `pending` is what was found and not yet
/// counted in `reported` (a model may collect executions before handing them on).
pub(crate) struct Probe<'b> {
    budget: &'b Budget,
    tick: std::cell::Cell<u32>,
    why: std::cell::RefCell<Option<String>>,
}

impl<'b> Probe<'b> {
    pub(crate) fn new(budget: &'b Budget) -> Self {
        Probe {
            budget,
            tick: Default::default(),
            why: Default::default(),
        }
    }

    /// Whether to stop, with `reported` executions handed on: once true, true for good.
    pub(crate) fn stop(&self, reported: u128) -> bool {
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        self.ask(reported, tick)
    }

    /// As [`Probe::stop`], reading the clock whatever the tick.
    pub(crate) fn stop_now(&self, reported: u128) -> bool {
        self.ask(reported, 0)
    }

    fn ask(&self, reported: u128, tick: u32) -> bool {
        if self.why.borrow().is_some() {
            return true;
        }
        match self.budget.exceeded(reported, tick) {
            Some(why) => {
                *self.why.borrow_mut() = Some(why);
                true
            }
            None => false,
        }
    }

    /// Why it stopped, if it did.
    pub(crate) fn into_reason(self) -> Option<String> {
        self.why.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_stop_at_the_bound_exactly() {
        let b = Budget {
            max_executions: Some(3),
            ..Default::default()
        };
        assert!(b.exceeded(2, 1).is_none());
        assert!(b.exceeded(3, 1).is_some());
    }

    #[test]
    fn a_past_deadline_is_seen_within_one_round_of_ticks() {
        let b = Budget {
            deadline: Some(Instant::now()),
            ..Default::default()
        };
        let probe = Probe::new(&b);
        let stopped_at = (1..=CLOCK_EVERY).find(|_| probe.stop(0));
        assert!(stopped_at.is_some());
        assert!(probe.stop(0), "stays stopped");
        assert_eq!(
            probe.into_reason().as_deref(),
            Some("the --timeout was reached")
        );
    }

    #[test]
    fn a_past_deadline_is_seen_at_once_by_stop_now() {
        let b = Budget {
            deadline: Some(Instant::now()),
            ..Default::default()
        };
        let probe = Probe::new(&b);
        // The first ticked probe does not read the clock (tick 1); `stop_now` does.
        assert!(!probe.stop(0));
        assert!(probe.stop_now(0));
        assert!(probe.stop(0), "stays stopped");
    }

    #[test]
    fn memory_over_the_bound_stops() {
        let b = Budget {
            memory: Some(MemoryBound {
                limit: 1 << 20,
                used: || 2 << 20,
            }),
            ..Default::default()
        };
        assert_eq!(
            b.exceeded(0, 1).as_deref(),
            Some("the memory bound was reached (--max-memory 1M)")
        );
    }
}
