//! The judge: turns the consistent executions of a program into final states and a verdict.

use std::collections::BTreeMap;

use scopecheck_explore::{explore, ExploreOptions, Graph, Model, Relation, Trace, TraceLimit};
use scopecheck_ir::{Observable, Program, Quantifier, ThreadId, Value};

use crate::{
    verdict::WitnessRead, Access, CheckError, CheckOptions, FinalState, HangReport, Incomplete,
    Observation, Outcome, RaceReport, Spin, Verdict,
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
                    .filter_map(|w| g.events[w].kind.value())
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

/// Every combination of one value per observable.
fn for_each_state(choices: &[Vec<Value>], visit: &mut dyn FnMut(&[Value])) {
    fn go(choices: &[Vec<Value>], acc: &mut Vec<Value>, visit: &mut dyn FnMut(&[Value])) {
        match choices.split_first() {
            None => visit(acc),
            Some((first, rest)) => {
                for v in first {
                    acc.push(*v);
                    go(rest, acc, visit);
                    acc.pop();
                }
            }
        }
    }
    go(choices, &mut Vec::with_capacity(choices.len()), visit);
}

fn describe_instr(program: &Program, thread: ThreadId, instr: usize) -> String {
    let th = program.thread(thread);
    let i = &th.code[instr];
    format!("{} line {} (`{}`)", th.name, i.span.line, i.text)
}

/// Explores `program` under `model` and judges its condition.
pub fn judge(
    program: &Program,
    model: &dyn Model,
    opts: &CheckOptions,
) -> Result<Verdict, CheckError> {
    let observables = program.observables();
    let prop = &program.condition.prop;
    let mut states: BTreeMap<Vec<Value>, bool> = BTreeMap::new();
    let (mut positive, mut negative, mut executions) = (0u64, 0u64, 0u64);
    let mut races: Vec<RaceReport> = Vec::new();
    let mut witness: Vec<WitnessRead> = Vec::new();
    let quantifier = program.condition.quantifier;
    let result = explore(
        program,
        model,
        &ExploreOptions {
            unroll: opts.unroll,
            scheduler: opts.scheduler,
        },
        &mut |g, paths, co, found| {
            for r in found {
                let report = race_report(program, g, r);
                if !races.contains(&report) {
                    races.push(report);
                }
            }
            executions += 1;
            let choices = final_values(program, g, paths, co, &observables);
            // The witness: an execution that shows the answer (for `exists`, one satisfying the
            // proposition; for `~exists` and `forall`, one breaking the requirement).
            let mut shows = false;
            for_each_state(&choices, &mut |vals| {
                let satisfies = prop.eval(&|o| {
                    let k = observables
                        .iter()
                        .position(|x| *x == o)
                        .expect("observable of the condition");
                    vals[k]
                });
                if satisfies {
                    positive += 1;
                } else {
                    negative += 1;
                }
                shows |= satisfies != (quantifier == Quantifier::Forall);
                states.insert(vals.to_vec(), satisfies);
            });
            if shows && witness.is_empty() {
                witness = witness_reads(program, g);
            }
        },
    );
    let mut incomplete = None;
    let mut rejected = Vec::new();
    let mut hangs = Vec::new();
    let mut reduced_loops = 0;
    match result {
        Err(limit) => {
            let reason = match limit {
                TraceLimit::TooManyValues { loc } => format!(
                    "location {} takes more than {} values",
                    program.location(loc).name,
                    scopecheck_explore::trace::MAX_VALUES_PER_LOCATION
                ),
                TraceLimit::TooManyPaths { thread } => format!(
                    "thread {} has more than {} paths",
                    program.thread(thread).name,
                    scopecheck_explore::trace::MAX_PATHS_PER_THREAD
                ),
            };
            incomplete = Some(Incomplete { reason });
        }
        Ok(exploration) => {
            if let Some(f) = exploration.faults.first() {
                return Err(CheckError::Program {
                    message: format!(
                        "{}: {}",
                        describe_instr(program, f.thread, f.instr),
                        f.message
                    ),
                    span: Some(program.thread(f.thread).code[f.instr].span),
                });
            }
            if !exploration.cut.is_empty() {
                let loops: Vec<String> = exploration
                    .cut
                    .iter()
                    .map(|c| describe_instr(program, c.thread, c.instr))
                    .collect();
                incomplete = Some(Incomplete {
                    reason: format!(
                        "the loop at {} was cut at --unroll {}",
                        loops.join(", "),
                        opts.unroll
                    ),
                });
            }
            rejected = exploration.rejected.by_axiom;
            reduced_loops = exploration.reduced_loops.len();
            hangs = exploration
                .hangs
                .iter()
                .map(|h| hang_report(program, opts, h))
                .collect();
        }
    }
    let q = program.condition.quantifier;
    let complete = incomplete.is_none();
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
        rejected,
        incomplete,
        reduced_loops,
        hangs,
        races,
        platform: opts.platform.name.clone(),
        platform_notes: vec![],
        lints: crate::lint::lints(program),
        witness,
    })
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
    g.reads
        .iter()
        .filter_map(|r| {
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
