//! What the explorers do with a graph where no thread can go on: hand a finished execution to
//! the judge, or look for a hang (spinners reading coherence-latest writes, barriers that never
//! fill, threads never scheduled) and record cut loops and faults of consistent prefixes.

use scopecheck_ir::{Program, ThreadId};

use crate::progress::Scheduler;
use crate::trace::{EventKind, PathEnd, Trace};
use crate::{
    CutLoop, EventSet, Exploration, Fault, Graph, Hang, Model, OnExecution, Relation, Spinner, Stop,
};

/// The context a leaf is judged in.
pub(crate) struct Leaf<'b, 'f, 'p> {
    pub program: &'p Program,
    pub model: &'b dyn Model,
    pub scheduler: &'b Scheduler,
    /// Threads never scheduled: those the search starves, and those never launched because a
    /// thread they start after did not finish.
    pub starved: &'b [ThreadId],
    /// The search starves some thread on purpose: only hangs are looked for (a thread never
    /// launched after a fault does not make the fault less of one).
    pub only_hangs: bool,
    pub out: &'b mut Exploration,
    pub on_execution: &'b OnExecution<'f, 'p>,
    /// The leaf's place in the search order (`Found::key`); each coherence order adds its
    /// index.
    pub key: &'b [u64],
    /// The search's limits: a leaf may have more coherence orders than any bound allows
    /// (10! for ten threads storing to one word), so the judge and the model's enumeration
    /// ask it too.
    pub budget: &'b crate::Budget,
}

impl<'p> Leaf<'_, '_, 'p> {
    /// Judges a graph whose reads-from is complete and where no thread can go on: under every
    /// coherence order the model accepts, or under `co` alone when the explorer chose it.
    pub fn judge(
        &mut self,
        g: &Graph<'p>,
        paths: &[&Trace],
        weight: crate::count::Count,
        co: Option<&Relation>,
    ) {
        let unfinished: Vec<usize> = (0..paths.len())
            .filter(|&t| paths[t].end != PathEnd::Finished)
            .collect();
        let waiting: Vec<(ThreadId, usize)> = unfinished
            .iter()
            .filter_map(|&t| match paths[t].end {
                PathEnd::AtBarrier { instr } => Some((ThreadId(t as u32), instr)),
                _ => None,
            })
            .collect();
        let stuck = unfinished.iter().all(|&t| {
            matches!(
                paths[t].end,
                PathEnd::Blocked { .. } | PathEnd::Starved | PathEnd::AtBarrier { .. }
            )
        }) && unfinished.iter().any(|&t| {
            matches!(
                paths[t].end,
                PathEnd::Blocked { .. } | PathEnd::AtBarrier { .. }
            )
        });
        let out = &mut *self.out;
        let on_execution = self.on_execution;
        let (mut feasible, mut hang) = (false, None);
        let mut key = self.key.to_vec();
        key.push(0);
        // Executions handed on, shared by `accept` and the budget's probe (`stop`): the
        // model asks `stop` with those it found and holds, and no execution is handed on
        // once the budget is spent, so `--max-executions N` hands on exactly N.
        let reported = std::cell::Cell::new(out.reported);
        let probe = crate::budget::Probe::new(self.budget);
        let stop = Asking {
            probe: &probe,
            reported: &reported,
        };
        let max = self.budget.max_executions.map(u128::from);
        let mut accept = |co: &Relation, races: &[crate::Race]| {
            if unfinished.is_empty() {
                // What the model found before a bound stopped it is handed on, up to
                // `--max-executions`.
                if max.is_some_and(|m| reported.get() >= m) {
                    stop.step(0);
                    return;
                }
                reported.set(reported.get().saturating_add(weight));
                let found = crate::Found { weight, key: &key };
                on_execution(g, paths, co, races, &found);
                *key.last_mut().expect("the index") += 1;
            } else {
                feasible = true;
                if stuck && hang.is_none() {
                    hang = spinners_read_latest(g, paths, co);
                }
            }
        };
        match co {
            None => self
                .model
                .executions(g, &mut out.rejected, &stop, &mut accept),
            Some(co) => match self.model.consistent_with(g, co) {
                Err(axiom) => out.rejected.add(axiom),
                Ok(()) => {
                    let races = if unfinished.is_empty() {
                        self.model.races_with(g, co)
                    } else {
                        vec![]
                    };
                    accept(co, &races)
                }
            },
        }
        out.reported = reported.get();
        // The bound the judge met, unless the search already stopped for another; a bound
        // reached by the last execution handed on is seen by the search's next probe.
        if let Some(why) = probe.into_reason() {
            out.cut_short.get_or_insert(why);
        }
        if let Some(spinning) = hang {
            let mut stuck_ids: Vec<ThreadId> = spinning.iter().map(|s| s.thread).collect();
            stuck_ids.extend(waiting.iter().map(|w| w.0));
            if let Some(mut reason) = self
                .scheduler
                .permits(self.program, &stuck_ids, self.starved)
            {
                if !waiting.is_empty() {
                    let more = if self.starved.is_empty() {
                        ""
                    } else {
                        reason.as_str()
                    };
                    reason = barrier_waits(self.program, paths, &waiting, more);
                }
                let h = Hang {
                    spinning,
                    at_barrier: waiting,
                    starved: self.starved.to_vec(),
                    reason,
                };
                if !out.hangs.contains(&h) {
                    out.hangs.push(h);
                }
            }
        }
        if self.only_hangs {
            return;
        }
        // A consistent prefix that stops at a cut loop or a fault is a real execution's prefix.
        for &t in unfinished.iter().filter(|_| feasible) {
            let thread = ThreadId(t as u32);
            match &paths[t].end {
                PathEnd::Cut { instr } => {
                    let c = CutLoop {
                        thread,
                        instr: *instr,
                    };
                    if !out.cut.contains(&c) {
                        out.cut.push(c);
                    }
                }
                PathEnd::Fault { instr, message } => {
                    let f = Fault {
                        thread,
                        instr: *instr,
                        message: message.clone(),
                    };
                    if !out.faults.contains(&f) {
                        out.faults.push(f);
                    }
                }
                PathEnd::Finished
                | PathEnd::Blocked { .. }
                | PathEnd::Starved
                | PathEnd::AtBarrier { .. } => {}
            }
        }
    }
}

/// The leaf's probe as the model asks it: `pending` executions found, on top of those the
/// leaf handed on.
struct Asking<'a, 'b> {
    probe: &'a crate::budget::Probe<'b>,
    reported: &'a std::cell::Cell<u128>,
}

impl crate::Stop for Asking<'_, '_> {
    fn step(&self, pending: u128) -> bool {
        self.probe.stop(self.reported.get().saturating_add(pending))
    }

    fn now(&self, pending: u128) -> bool {
        self.probe
            .stop_now(self.reported.get().saturating_add(pending))
    }
}

/// The spinning threads of a stuck execution, when each one's failing iteration reads only
/// coherence-latest writes: no later write will ever change what it sees, so it spins forever.
fn spinners_read_latest(g: &Graph, paths: &[&Trace], co: &Relation) -> Option<Vec<Spinner>> {
    // The failing iterations' events: write-backs there repeat what was read and release no one.
    let mut spinning = EventSet::new(g.len());
    for (t, p) in paths.iter().enumerate() {
        if let PathEnd::Blocked { iteration, .. } = p.end {
            g.thread_events[t][iteration..p.events.len()]
                .iter()
                .for_each(|&e| spinning.insert(e));
        }
    }
    let mut out = Vec::new();
    for (t, p) in paths.iter().enumerate() {
        let PathEnd::Blocked { instr, iteration } = p.end else {
            continue;
        };
        let mut reads = Vec::new();
        for &e in &g.thread_events[t][iteration..p.events.len()] {
            if let EventKind::Read { loc, value, .. } = g.events[e].kind {
                // Only write-backs of spinning iterations may follow what it read.
                let w = g.rf[e]?;
                if co.successors(w).any(|x| !spinning.contains(x)) {
                    return None;
                }
                reads.push((loc, value));
            }
        }
        out.push(Spinner {
            thread: ThreadId(t as u32),
            instr,
            reads,
        });
    }
    Some(out)
}

/// Why threads wait forever at a barrier, in words, followed by `more` (the scheduler's part):
/// for each missing participant of its CTA, whether it spins, was never scheduled, or finished
/// without reaching the barrier (barrier divergence).
fn barrier_waits(
    program: &Program,
    paths: &[&Trace],
    waiting: &[(ThreadId, usize)],
    more: &str,
) -> String {
    let mut parts: Vec<String> = waiting
        .iter()
        .map(|&(t, instr)| {
            let th = program.thread(t);
            let i = &th.code[instr];
            let missing: Vec<String> = program
                .threads
                .iter()
                .enumerate()
                .filter(|(o, other)| {
                    *o != t.0 as usize
                        && other.placement.same_cta(&th.placement)
                        && !waiting.iter().any(|w| w.0 .0 as usize == *o)
                })
                .map(|(o, other)| match paths[o].end {
                    PathEnd::Blocked { .. } => format!("{}, which spins", other.name),
                    PathEnd::Starved => format!("{}, which is not scheduled", other.name),
                    _ => format!(
                        "{}, which finished without reaching it (barrier divergence)",
                        other.name
                    ),
                })
                .collect();
            format!(
                "{} waits at `{}` (line {}) for {}",
                th.name,
                i.text,
                i.span.line,
                if missing.is_empty() {
                    // Every thread of the CTA that could arrive is here: the round's count is
                    // more than can ever arrive.
                    let here = waiting
                        .iter()
                        .filter(|w| program.thread(w.0).placement.same_cta(&th.placement))
                        .count();
                    match i.kind {
                        scopecheck_ir::InstrKind::Barrier {
                            count: Some(scopecheck_ir::Operand::Imm(c)),
                            ..
                        } if c as usize > here => format!(
                            "a round of {c} arrivals, but only {here} of its CTA's threads are waiting and no other can arrive"
                        ),
                        _ => "a thread that never arrives".to_string(),
                    }
                } else {
                    missing.join(" and ")
                }
            )
        })
        .collect();
    if !more.is_empty() {
        parts.push(more.to_string());
    }
    parts.join("; ")
}
