//! `scopecheck run --mutants`: the mutation score of a test on the GPU (the measure GPUHarbor and
//! MC Mutants report).
//!
//! Every single weakening of the test (`scopecheck_ir::weaken`: a fence dropped, an order
//! weakened, a scope narrowed, an RMW split) is checked under the model. A mutant is *killable*
//! when the model lets it end in a state the original forbids; each killable mutant then runs
//! under stress, tabled by its own states and judged against the original's, and is *killed*
//! when the hardware shows such a state. The score is killed / killable, with the time to the
//! first kill (from the launch of the first instance that showed it).

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

use scopecheck_gpu::compare::{compare, StateTable};
use scopecheck_gpu::driver::Device;
use scopecheck_gpu::runner::{self, RunOptions, Stop};
use scopecheck_gpu::{generate, GenOptions};
use scopecheck_ir::weaken::weakenings;
use scopecheck_ir::{Program, Value};
use scopecheck_model::{CheckOptions, Verdict};
use serde_json::json;

use crate::check::check_guarded;
use crate::output::{out, outln};

/// What became of one mutant.
enum Fate {
    /// The model shows no state the original forbids: no run can kill it.
    Equivalent,
    /// The model check of the mutant failed or was cut short: unknown whether it is killable.
    Unchecked(String),
    /// Killable, but the GPU could not run it.
    NotRun(String),
    /// Ran; `kills` instances ended in a state the original forbids.
    Ran {
        instances: u64,
        kills: u64,
        seconds: f64,
        first_kill: Option<f64>,
        /// Instances in states the mutant's own model forbids (a disagreement).
        outside: u64,
    },
}

struct Mutant {
    what: String,
    fate: Fate,
}

/// The value vector of each allowed state.
pub fn state_values(v: &Verdict) -> HashSet<Vec<Value>> {
    v.states
        .iter()
        .map(|s| s.values.iter().map(|&(_, x)| x).collect())
        .collect()
}

/// One mutant under the model.
pub struct CheckedMutant {
    /// What it changes (`P0 line 3 (...): release -> relaxed`).
    pub what: String,
    pub program: Program,
    /// Its verdict, or why the model could not give a complete one.
    pub verdict: Result<Verdict, String>,
    /// The final states it may end in that the original forbids (empty: equivalent).
    pub new: HashSet<Vec<Value>>,
}

/// Every single weakening of `program`, checked under the model against `original`.
pub fn check_mutants(
    file: &str,
    source: &str,
    program: &Program,
    original: &Verdict,
    check: &CheckOptions,
) -> Vec<CheckedMutant> {
    let allowed = state_values(original);
    weakenings(program)
        .into_iter()
        .map(|w| {
            let what = w.describe(program);
            let mutant = w.apply(program);
            let verdict = match check_guarded(file, source, &mutant, check) {
                Err(f) => Err(f.message),
                Ok(v) if !v.is_complete() => {
                    Err("the model's exploration of the mutant was cut short".into())
                }
                Ok(v) => Ok(v),
            };
            let new = verdict.as_ref().map_or_else(
                |_| HashSet::new(),
                |v| {
                    state_values(v)
                        .into_iter()
                        .filter(|s| !allowed.contains(s))
                        .collect()
                },
            );
            CheckedMutant {
                what,
                program: mutant,
                verdict,
                new,
            }
        })
        .collect()
}

/// What running the mutants of one test came to.
pub struct MutantTally {
    /// Killable mutants that ran.
    pub killable: u32,
    pub killed: u32,
    /// A mutant's launch hung: the mutants after it were not run, and the GPU context must not
    /// be used again (see `Stop::Hung`).
    pub hung: bool,
}

/// Checks and runs every mutant of `program`; prints the table (or one JSON line).
#[allow(clippy::too_many_arguments)]
pub fn run_mutants(
    device: &Device,
    file: &str,
    source: &str,
    program: &Program,
    original: &Verdict,
    check: &CheckOptions,
    gen: &GenOptions,
    opts: &RunOptions,
    stop: &AtomicBool,
    json: bool,
) -> MutantTally {
    let mut mutants = Vec::new();
    let mut hung = false;
    for c in check_mutants(file, source, program, original, check) {
        let fate = match c.verdict {
            Err(why) => Fate::Unchecked(why),
            Ok(_) if c.new.is_empty() => Fate::Equivalent,
            Ok(_) if hung => Fate::NotRun("not run: an earlier mutant hung the GPU".into()),
            Ok(v) => {
                crate::supervise::note_gpu();
                run_one(device, &c.program, &v, original, &c.new, gen, opts, stop).unwrap_or_else(
                    |e| {
                        hung |= e.1;
                        Fate::NotRun(e.0)
                    },
                )
            }
        };
        mutants.push(Mutant { what: c.what, fate });
    }
    let killable = mutants
        .iter()
        .filter(|m| matches!(m.fate, Fate::Ran { .. }))
        .count() as u32;
    let killed = mutants
        .iter()
        .filter(|m| matches!(m.fate, Fate::Ran { kills, .. } if kills > 0))
        .count() as u32;
    if json {
        outln!("{}", json_line(file, program, &mutants, killable, killed));
    } else {
        out!("{}", text(program, &mutants, killable, killed));
    }
    MutantTally {
        killable,
        killed,
        hung,
    }
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    device: &Device,
    mutant: &Program,
    verdict: &Verdict,
    original: &Verdict,
    new: &HashSet<Vec<Value>>,
    gen: &GenOptions,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<Fate, (String, bool)> {
    let table = StateTable::with_allowed(mutant, &verdict.states, &original.states)
        .map_err(|e| (e.to_string(), false))?;
    let kernel = generate(mutant, gen).map_err(|e| (e.to_string(), false))?;
    let result = scopecheck_gpu::driver::guarded("running a mutant on the GPU", || {
        runner::run(device, mutant, &kernel, &table, opts, stop)
    })
    .map_err(|e| (e.to_string(), false))?;
    if let Stop::Hung { launch, budget, .. } = result.stop {
        // A state of a launch that never finished is unknown: the mutant is not judged.
        return Err((
            format!(
                "hung: launch {launch} ran past its budget of {budget:?} (after {} instances)",
                result.instances
            ),
            true,
        ));
    }
    let cmp = compare(
        mutant,
        &table,
        &result.dense,
        result.other,
        &result.other_samples,
    );
    let kills: u64 = cmp
        .states
        .iter()
        .filter(|s| new.contains(&s.values))
        .map(|s| s.count)
        .sum();
    let own = state_values(verdict);
    let outside = cmp
        .states
        .iter()
        .filter(|s| !own.contains(&s.values))
        .map(|s| s.count)
        .sum::<u64>()
        + cmp.unsampled_other;
    let seconds = result.elapsed.as_secs_f64();
    let per_launch = seconds / result.launches.max(1) as f64;
    let first_kill = result
        .anomalies
        .iter()
        .filter(|a| new.contains(&a.values))
        .map(|a| a.launch)
        .min()
        .map(|l| (l + 1) as f64 * per_launch);
    Ok(Fate::Ran {
        instances: result.instances,
        kills,
        seconds,
        first_kill,
        outside,
    })
}

fn text(program: &Program, mutants: &[Mutant], killable: u32, killed: u32) -> String {
    let not_run = mutants
        .iter()
        .filter(|m| matches!(m.fate, Fate::NotRun(_)))
        .count();
    let mut out = format!(
        "Mutants {}: {} weakenings, {killable} that can show a state the original forbids ran \
         ({not_run} more could not), {killed} killed{}\n",
        program.name,
        mutants.len(),
        if killable > 0 {
            format!(" (score {:.2})", killed as f64 / killable as f64)
        } else {
            String::new()
        }
    );
    for m in mutants {
        let line = match &m.fate {
            Fate::Equivalent => {
                format!("  equivalent  {} (the model shows no new state)", m.what)
            }
            Fate::Unchecked(why) => format!("  unchecked   {}: {why}", m.what),
            Fate::NotRun(why) => format!("  not run     {}: {why}", m.what),
            Fate::Ran {
                instances,
                kills,
                seconds,
                first_kill,
                outside,
            } => {
                let mut l = if *kills > 0 {
                    format!(
                        "  killed      {}: {kills} of {instances} instances ({:.0}/s), first after \
                         {}",
                        m.what,
                        *kills as f64 / seconds.max(f64::MIN_POSITIVE),
                        first_kill.map_or("?".into(), |t| if t < 1.0 {
                            format!("{:.1} ms", t * 1000.0)
                        } else {
                            format!("{t:.2} s")
                        })
                    )
                } else {
                    format!("  survived    {}: 0 of {instances} instances", m.what)
                };
                if *outside > 0 {
                    l.push_str(&format!(
                        "; !!! {outside} instances in states the mutant's model forbids"
                    ));
                }
                l
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn json_line(
    file: &str,
    program: &Program,
    mutants: &[Mutant],
    killable: u32,
    killed: u32,
) -> serde_json::Value {
    let list: Vec<serde_json::Value> = mutants
        .iter()
        .map(|m| match &m.fate {
            Fate::Equivalent => json!({"mutant": m.what, "killable": false}),
            Fate::Unchecked(why) => json!({"mutant": m.what, "killable": null, "error": why}),
            Fate::NotRun(why) => json!({"mutant": m.what, "killable": true, "error": why}),
            Fate::Ran {
                instances,
                kills,
                seconds,
                first_kill,
                outside,
            } => json!({
                "mutant": m.what,
                "killable": true,
                "killed": *kills > 0,
                "kills": kills,
                "instances": instances,
                "seconds": seconds,
                "first_kill_seconds": first_kill,
                "outside_mutant_model": outside,
            }),
        })
        .collect();
    json!({
        "name": program.name,
        "file": file,
        "mutants": list,
        "killable": killable,
        "killed": killed,
        "score": if killable > 0 { Some(killed as f64 / killable as f64) } else { None },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Message passing across two CTAs with a release store and an acquire load at GPU scope:
    /// the original forbids r0=1, r1=0.
    const MP: &str = "PTX MP\n{ data=0; flag=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
        st.weak data, 1 | ld.acquire.gpu r0, flag ;\n \
        st.release.gpu flag, 1 | ld.weak r1, data ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";

    #[test]
    fn the_weakenings_that_break_message_passing_are_killable_and_only_those() {
        let program = scopecheck_litmus::parse(MP).unwrap();
        let check = CheckOptions::default();
        let original = scopecheck_model::check(&program, &check).unwrap();
        let checked = check_mutants("MP", MP, &program, &original, &check);
        let stale: Vec<Value> = vec![1, 0];
        let summary: Vec<(String, bool)> = checked
            .iter()
            .map(|c| {
                assert!(c.verdict.is_ok(), "{}", c.what);
                // The only state the original forbids is the stale read.
                assert!(c.new.iter().all(|s| *s == stale), "{}: {:?}", c.what, c.new);
                (c.what.clone(), !c.new.is_empty())
            })
            .collect();
        // Release or acquire dropped: no synchronization, the stale read is allowed (PTX
        // Causality needs both). Scope gpu -> cluster: the CTAs are alone in their clusters,
        // so the two are no longer morally strong.
        assert_eq!(
            summary,
            [
                (
                    "P0 line 5 (st.release.gpu flag, 1): release -> relaxed".to_string(),
                    true
                ),
                (
                    "P0 line 5 (st.release.gpu flag, 1): scope gpu -> cluster".to_string(),
                    true
                ),
                (
                    "P1 line 4 (ld.acquire.gpu r0, flag): acquire -> relaxed".to_string(),
                    true
                ),
                (
                    "P1 line 4 (ld.acquire.gpu r0, flag): scope gpu -> cluster".to_string(),
                    true
                ),
            ]
        );
    }
}
