//! The judge: turns the consistent executions of a program into final states and a verdict.

use std::collections::BTreeMap;

use scopecheck_explore::{
    explore, Budget, Exploration, ExploreOptions, Found, Graph, Model, Race, RaceKind, Relation,
    Trace, TraceLimit,
};
use scopecheck_ir::{Diagnostic, Observable, Program, Quantifier, ThreadId, Value};

use crate::{
    capture::capture, verdict::WitnessRead, Access, CheckOptions, ExecutionGraph, FinalState,
    HangReport, Incomplete, Observation, Outcome, RaceReport, Spin, Verdict,
};

/// The values each observable can end with in one execution. A register has one; a location
/// has one per coherence-maximal write (a later observer may read any write no other write
/// follows in coherence).
fn final_values(
    program: &Program,
    g: &Graph,
    paths: &[&Trace],
    co: &Relation,
    observables: &[Observable],
) -> Vec<Vec<Value>> {
    observables
        .iter()
        .map(|o| match *o {
            Observable::Reg(t, r) => vec![paths[t.0 as usize].regs[r.0 as usize]],
            Observable::Loc(l) => {
                let mut vals: Vec<Value> = g
                    .writes
                    .iter()
                    .filter(|&w| g.events[w].kind.loc() == Some(l) && co.row_is_empty(w))
                    // A write of another type of the same width (PTX's `st.u32` of an `int`)
                    // holds the location's value in the location's type.
                    .filter_map(|w| {
                        g.events[w]
                            .kind
                            .value()
                            .map(|v| program.location(l).ty.wrap(v))
                    })
                    .collect();
                vals.sort_unstable();
                vals.dedup();
                if vals.is_empty() {
                    vals.push(program.location(l).init);
                }
                vals
            }
        })
        .collect()
}

/// Every combination of one value per observable, the last observable's value changing
/// fastest (iteratively: there are as many observables as the condition names).
fn for_each_state(choices: &[Vec<Value>], visit: &mut dyn FnMut(&[Value])) {
    if choices.iter().any(|c| c.is_empty()) {
        return;
    }
    let mut at = vec![0usize; choices.len()];
    let mut acc: Vec<Value> = choices.iter().map(|c| c[0]).collect();
    loop {
        visit(&acc);
        // Advance like an odometer: the last observable that has a next value takes it, and
        // those after it start over.
        let Some(k) = (0..choices.len())
            .rev()
            .find(|&k| at[k] + 1 < choices[k].len())
        else {
            return;
        };
        at[k] += 1;
        acc[k] = choices[k][at[k]];
        for j in k + 1..choices.len() {
            at[j] = 0;
            acc[j] = choices[j][0];
        }
    }
}

/// Whether the final state `vals` (one value per observable, in `observables` order)
/// satisfies `prop`.
fn holds(prop: &scopecheck_ir::Prop, observables: &[Observable], vals: &[Value]) -> bool {
    prop.eval(&|o| {
        let k = observables
            .iter()
            .position(|x| *x == o)
            .expect("observable of the condition");
        vals[k]
    })
}

fn describe_instr(program: &Program, thread: ThreadId, instr: usize) -> String {
    let th = program.thread(thread);
    let i = &th.code[instr];
    format!("{} line {} (`{}`)", th.name, i.span.line, i.text)
}

/// What the consistent executions found so far add up to.
#[derive(Default)]
struct Tally {
    states: BTreeMap<Vec<Value>, bool>,
    positive: u128,
    negative: u128,
    executions: u128,
    races: Vec<RaceReport>,
    /// The first (least keyed: `Found::key`) execution that shows the answer, with its key.
    witness: Option<(Vec<u64>, Vec<WitnessRead>)>,
    /// With `CheckOptions::state_witnesses`: per final state, the first (least keyed)
    /// execution that ends in it, with its key.
    state_witnesses: BTreeMap<Vec<Value>, (Vec<u64>, Vec<WitnessRead>)>,
    /// With `CheckOptions::graphs`: the first execution that shows the answer, the first
    /// execution (drawn when none shows it) and the first that races.
    witness_graph: Option<(Vec<u64>, ExecutionGraph)>,
    first_graph: Option<(Vec<u64>, ExecutionGraph)>,
    race_graph: Option<(Vec<u64>, ExecutionGraph)>,
}

/// Whether an execution keyed `key` comes before the one `kept` holds, if any.
fn earlier<T>(key: &[u64], kept: &Option<(Vec<u64>, T)>) -> bool {
    kept.as_ref().is_none_or(|(k, _)| key < &k[..])
}

/// Explores `program` under `model` and judges its condition.
pub fn judge(
    program: &Program,
    model: &dyn Model,
    opts: &CheckOptions,
) -> Result<Verdict, Diagnostic> {
    let observables = program.observables();
    let deadline = opts.timeout.map(|t| std::time::Instant::now() + t);
    let deadline = match (deadline, opts.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let judging = Judging {
        program,
        model,
        opts,
        observables: &observables,
    };
    let tally = std::sync::Mutex::new(Tally::default());
    let result = explore(
        program,
        model,
        &ExploreOptions {
            unroll: opts.unroll,
            scheduler: opts.scheduler,
            engine: opts.engine,
            budget: Budget {
                max_executions: opts.max_executions,
                deadline,
                memory: opts.memory,
            },
            progress: opts.progress.clone(),
            symmetry: opts.symmetry,
            commute: opts.commute,
            parallel: true,
        },
        &|g, paths, co, races, found| judging.record(&tally, g, paths, co, races, found),
        // The explorer explores again from the start: what it handed on so far is forgotten.
        &|| *tally.lock().expect("the tally") = Tally::default(),
    );
    let Tally {
        states,
        positive,
        negative,
        executions,
        mut races,
        witness,
        state_witnesses,
        witness_graph,
        first_graph,
        race_graph,
    } = tally.into_inner().expect("the tally");
    // Reports list races and hangs in source order, whichever order the search found them in.
    races.sort_by(|a, b| {
        (&a.first, &a.second, a.kind == RaceKind::Heterogeneous).cmp(&(
            &b.first,
            &b.second,
            b.kind == RaceKind::Heterogeneous,
        ))
    });
    let found = match result {
        Err(limit) => Findings {
            incomplete: Some(Incomplete {
                reason: limit_reason(program, limit),
            }),
            ..Findings::default()
        },
        Ok(exploration) => findings(program, opts, exploration)?,
    };
    let q = program.condition.quantifier;
    let outcome = outcome(program, &found, positive, negative);
    let observation = if positive == 0 {
        Observation::Never
    } else if negative == 0 {
        Observation::Always
    } else {
        Observation::Sometimes
    };
    let states = states
        .into_iter()
        .map(|(vals, satisfies)| FinalState {
            values: observables.iter().copied().zip(vals).collect(),
            satisfies,
        })
        .collect();
    Ok(Verdict {
        model: model.name(),
        quantifier: q,
        states,
        outcome,
        observation,
        positive,
        negative,
        executions,
        rejected: found.rejected,
        incomplete: found.incomplete,
        reduced_loops: found.reduced_loops,
        hangs: found.hangs,
        races,
        platform: opts.platform.name.clone(),
        platform_notes: vec![],
        lints: crate::lint::lints(program),
        witness: witness.map(|w| w.1).unwrap_or_default(),
        state_witnesses: state_witnesses
            .into_iter()
            .map(|(vals, (_, reads))| (vals, reads))
            .collect(),
        witness_graph: witness_graph.or(first_graph).map(|w| w.1),
        race_graph: race_graph.map(|w| w.1),
        symmetry: found.symmetry_classes,
    })
}

/// What judging one execution needs besides the execution.
struct Judging<'a> {
    program: &'a Program,
    model: &'a dyn Model,
    opts: &'a CheckOptions,
    /// The condition's observables, in the order final states list their values.
    observables: &'a [Observable],
}

impl Judging<'_> {
    /// Adds the final states, races, witness and pictures of one consistent execution to
    /// `tally`. Called from the threads of a parallel search: the work on the execution is
    /// done before the tally is locked.
    fn record(
        &self,
        tally: &std::sync::Mutex<Tally>,
        g: &Graph,
        paths: &[&Trace],
        co: &Relation,
        races: &[Race],
        found: &Found,
    ) {
        let (program, opts, observables) = (self.program, self.opts, self.observables);
        let prop = &program.condition.prop;
        let quantifier = program.condition.quantifier;
        let reports: Vec<RaceReport> = races.iter().map(|r| race_report(program, g, r)).collect();
        let choices = final_values(program, g, paths, co, observables);
        let weight = found.weight;
        // The witness: an execution that shows the answer (for `exists`, one satisfying the
        // proposition; for `~exists` and `forall`, one breaking the requirement).
        let mut shows = false;
        let mut satisfied = (0u128, 0u128);
        let mut states = vec![];
        // The first state, and the first that shows the answer, for pictures.
        let mut first_state: Option<(Vec<Value>, bool)> = None;
        let mut shows_state: Option<Vec<Value>> = None;
        for_each_state(&choices, &mut |vals| {
            let satisfies = holds(prop, observables, vals);
            // Counts saturate: `u128::MAX` reads "at least" (`Verdict::counts_at_least`).
            if satisfies {
                satisfied.0 = satisfied.0.saturating_add(weight);
            } else {
                satisfied.1 = satisfied.1.saturating_add(weight);
            }
            let here = satisfies != (quantifier == Quantifier::Forall);
            shows |= here;
            if opts.graphs && first_state.is_none() {
                first_state = Some((vals.to_vec(), satisfies));
            }
            if opts.graphs && here && shows_state.is_none() {
                shows_state = Some(vals.to_vec());
            }
            states.push((vals.to_vec(), satisfies));
        });
        let mut t = tally.lock().expect("the tally");
        for report in reports {
            if !t.races.contains(&report) {
                t.races.push(report);
            }
        }
        t.executions = t.executions.saturating_add(weight);
        t.positive = t.positive.saturating_add(satisfied.0);
        t.negative = t.negative.saturating_add(satisfied.1);
        let key = found.key;
        if opts.state_witnesses {
            // Made once per execution, and only when it is the first to end in some state.
            let mut reads: Option<Vec<WitnessRead>> = None;
            for (vals, _) in &states {
                let kept = t.state_witnesses.get(vals);
                if kept.is_none_or(|(k, _)| key < &k[..]) {
                    let r = reads
                        .get_or_insert_with(|| witness_reads(program, g))
                        .clone();
                    t.state_witnesses.insert(vals.clone(), (key.to_vec(), r));
                }
            }
        }
        t.states.extend(states);
        if shows && earlier(key, &t.witness) {
            t.witness = Some((key.to_vec(), witness_reads(program, g)));
        }
        if !opts.graphs {
            return;
        }
        let model = self.model;
        let state = |vals: Vec<Value>| observables.iter().copied().zip(vals).collect();
        if let Some(vals) = shows_state.filter(|_| earlier(key, &t.witness_graph)) {
            let satisfies = quantifier != Quantifier::Forall;
            let picture = capture(g, model, co, state(vals), satisfies, None);
            t.witness_graph = Some((key.to_vec(), picture));
        }
        if let Some(r) = races.first().filter(|_| earlier(key, &t.race_graph)) {
            let (vals, satisfies) = first_state.clone().unwrap_or_default();
            let picture = capture(g, model, co, state(vals), satisfies, Some(r));
            t.race_graph = Some((key.to_vec(), picture));
        }
        if let Some((vals, satisfies)) = first_state.filter(|_| earlier(key, &t.first_graph)) {
            let picture = capture(g, model, co, state(vals), satisfies, None);
            t.first_graph = Some((key.to_vec(), picture));
        }
    }
}

/// What an exploration says besides its executions, as the verdict reports it.
#[derive(Default)]
struct Findings {
    incomplete: Option<Incomplete>,
    rejected: Vec<(&'static str, u64)>,
    hangs: Vec<HangReport>,
    reduced_loops: usize,
    symmetry_classes: Vec<usize>,
}

/// Why listing paths stopped, in words.
fn limit_reason(program: &Program, limit: TraceLimit) -> String {
    match limit {
        TraceLimit::TooManyValues { loc } => format!(
            "location {} takes more than {} values",
            program.location(loc).name,
            scopecheck_explore::paths::MAX_VALUES_PER_LOCATION
        ),
        TraceLimit::TooManyPaths { thread } => format!(
            "thread {} has more than {} paths",
            program.thread(thread).name,
            scopecheck_explore::paths::MAX_PATHS_PER_THREAD
        ),
        TraceLimit::OutOfBudget { reason } => reason,
        TraceLimit::Unsupported { thread, instr } => format!(
            "the candidate enumerator, which runs where the graph explorer's completeness \
             gate fails, cannot follow {} (a warp collective, or a barrier whose \
             rounds it cannot match: a count other than the CTA's, a register, \
             `bar.arrive`, or a second barrier in one thread)",
            describe_instr(program, thread, instr)
        ),
    }
}

/// The findings of a finished exploration; a fault some consistent execution reaches is the
/// program's error.
fn findings(
    program: &Program,
    opts: &CheckOptions,
    exploration: Exploration,
) -> Result<Findings, Diagnostic> {
    // The first in thread and instruction order, whichever the search met first.
    if let Some(f) = exploration
        .faults
        .iter()
        .min_by_key(|f| (f.thread, f.instr))
    {
        return Err(Diagnostic::error(format!(
            "{}: {}",
            describe_instr(program, f.thread, f.instr),
            f.message
        ))
        .at(program.thread(f.thread).code[f.instr].span));
    }
    let mut incomplete = None;
    if !exploration.cut.is_empty() {
        // In thread and instruction order, whichever order the search met them in.
        let mut cut: Vec<_> = exploration
            .cut
            .iter()
            .map(|c| (c.thread, c.instr))
            .collect();
        cut.sort_unstable();
        cut.dedup();
        let loops: Vec<String> = cut
            .into_iter()
            .map(|(t, i)| describe_instr(program, t, i))
            .collect();
        incomplete = Some(Incomplete {
            reason: format!(
                "the loop at {} was cut at --unroll {}",
                loops.join(", "),
                opts.unroll
            ),
        });
    }
    if let Some(why) = &exploration.cut_short {
        incomplete = Some(Incomplete {
            reason: format!("the search stopped early: {why}"),
        });
    }
    if let Some(why) = &exploration.fallback {
        incomplete = Some(Incomplete {
            reason: format!("the graph explorer cannot vouch for its completeness: {why}"),
        });
    }
    let mut hangs: Vec<HangReport> = exploration
        .hangs
        .iter()
        .map(|h| hang_report(program, opts, h))
        .collect();
    hangs.sort_by_key(|h: &HangReport| {
        let at = |v: &[Spin]| {
            v.iter()
                .map(|s| (s.thread, s.line, s.waits.clone()))
                .collect::<Vec<_>>()
        };
        (
            at(&h.spinning),
            at(&h.at_barrier),
            h.starved.clone(),
            h.reason.clone(),
        )
    });
    Ok(Findings {
        incomplete,
        rejected: exploration.rejected.by_axiom,
        hangs,
        reduced_loops: exploration.reduced_loops.len(),
        symmetry_classes: exploration.symmetry.iter().map(Vec::len).collect(),
    })
}

/// The verdict on the condition, from how many executions satisfy its proposition
/// (`positive`) and how many do not (`negative`).
fn outcome(program: &Program, found: &Findings, positive: u128, negative: u128) -> Outcome {
    let q = program.condition.quantifier;
    let complete = found.incomplete.is_none();
    let outcome = match q {
        Quantifier::Exists if positive > 0 => Outcome::Ok,
        Quantifier::NotExists | Quantifier::Forall
            if (q == Quantifier::NotExists && positive > 0)
                || (q == Quantifier::Forall && negative > 0) =>
        {
            Outcome::No
        }
        _ if !complete => Outcome::Unknown,
        Quantifier::Exists => Outcome::No,
        Quantifier::NotExists | Quantifier::Forall => Outcome::Ok,
    };
    // A harness that waits for its kernels (host code ordered after them) never reaches its
    // checks in an execution that hangs: for a CUDA or OpenCL program that is a failed
    // requirement, not a pass.
    let harness_waits = program
        .threads
        .iter()
        .any(|t| t.placement == scopecheck_ir::Placement::Host && !t.after.is_empty());
    if complete && harness_waits && !found.hangs.is_empty() && q != Quantifier::Exists {
        Outcome::No
    } else {
        outcome
    }
}

fn hang_report(program: &Program, opts: &CheckOptions, h: &scopecheck_explore::Hang) -> HangReport {
    let spinning = h
        .spinning
        .iter()
        .map(|s| {
            let i = &program.thread(s.thread).code[s.instr];
            Spin {
                thread: s.thread,
                line: i.span.line,
                text: i.text.clone(),
                span: i.span,
                waits: s.reads.clone(),
            }
        })
        .collect();
    let progress = if h.starved.is_empty() {
        "fair".to_string()
    } else {
        let its = if opts.scheduler.its { "" } else { ", its off" };
        format!("{}{its}", opts.scheduler.progress.name())
    };
    let at_barrier = h
        .at_barrier
        .iter()
        .map(|&(thread, instr)| {
            let i = &program.thread(thread).code[instr];
            Spin {
                thread,
                line: i.span.line,
                text: i.text.clone(),
                span: i.span,
                waits: vec![],
            }
        })
        .collect();
    HangReport {
        spinning,
        at_barrier,
        starved: h.starved.clone(),
        progress,
        reason: h.reason.clone(),
    }
}

/// The source access of a thread event.
fn access(program: &Program, g: &scopecheck_explore::Graph, e: usize) -> Option<Access> {
    let ev = &g.events[e];
    let thread = ev.thread?;
    let i = &program.thread(thread).code[ev.instr?];
    Some(Access {
        thread,
        line: i.span.line,
        text: i.text.clone(),
        span: i.span,
        loc: ev.kind.loc()?,
        write: ev.kind.is_write() || !g.rmw.row_is_empty(e),
    })
}

/// Who read what from whom in `g`, in thread order.
fn witness_reads(program: &Program, g: &scopecheck_explore::Graph) -> Vec<WitnessRead> {
    g.thread_events
        .iter()
        .flatten()
        .filter(|&&r| g.reads.contains(r))
        .filter_map(|&r| {
            Some(WitnessRead {
                reader: access(program, g, r)?,
                value: g.events[r].kind.value()?,
                from: g.rf[r].and_then(|w| access(program, g, w)),
            })
        })
        .collect()
}

/// A race between two events, as source accesses.
fn race_report(
    program: &Program,
    g: &scopecheck_explore::Graph,
    r: &scopecheck_explore::Race,
) -> RaceReport {
    let access = |e| access(program, g, e).expect("races are between memory events of threads");
    let (a, b) = (access(r.first), access(r.second));
    let (first, second) = if a <= b { (a, b) } else { (b, a) };
    RaceReport {
        kind: r.kind,
        first,
        second,
    }
}

#[cfg(test)]
mod tests {
    use super::for_each_state;

    /// One value per observable, the last changing fastest: 2 x 3 states in that order; no
    /// observable is one (empty) state; an observable with no value leaves none.
    #[test]
    fn states_come_in_odometer_order() {
        let mut seen = vec![];
        for_each_state(&[vec![0, 1], vec![5, 6, 7]], &mut |s| seen.push(s.to_vec()));
        let want = [[0, 5], [0, 6], [0, 7], [1, 5], [1, 6], [1, 7]];
        assert_eq!(seen, want.map(|s| s.to_vec()).to_vec());
        let mut n = 0;
        for_each_state(&[], &mut |s| {
            assert!(s.is_empty());
            n += 1;
        });
        assert_eq!(n, 1);
        for_each_state(&[vec![1], vec![]], &mut |_| panic!("no state"));
    }
}
