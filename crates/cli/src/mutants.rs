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
use scopecheck_gpu::driver::{machine_code, Device};
use scopecheck_gpu::runner::{self, RunOptions, Stop};
use scopecheck_gpu::{generate, GenOptions};
use scopecheck_ir::weaken::weakenings;
use scopecheck_ir::{Program, Scope, Value};
use scopecheck_model::{CheckOptions, Verdict};
use serde_json::json;

use crate::output::{out, outln};
use crate::pipeline::check_guarded;

/// What became of one mutant.
enum Fate {
    /// The model shows no state the original forbids: no run can kill it.
    Equivalent,
    /// The model check of the mutant failed or was cut short: unknown whether it is killable.
    Unchecked(String),
    /// Killable under the model, but the driver compiles it to the same machine code as the
    /// original for this GPU (under every configuration it would run in): the GPU executes the
    /// same instructions, so no run can show a state the original's run cannot. Counted apart.
    SameCode,
    /// Killable, but the GPU could not run it.
    NotRun(String),
    /// Ran; `kills` instances ended in a state the original forbids.
    Ran(Ran),
}

/// What the runs of one mutant observed, over the configurations tried.
struct Ran {
    instances: u64,
    kills: u64,
    /// GPU time of the runs (launch to last launch), summed.
    seconds: f64,
    /// Wall time of the runs, setup (module load, allocation) included.
    wall: f64,
    /// GPU time from the first run's start to the launch that first showed a kill.
    first_kill: Option<f64>,
    /// The configuration whose run killed it.
    killer: Option<&'static str>,
    /// Instances in states the mutant's own model forbids (a disagreement).
    outside: u64,
    /// Per configuration: (name, instances, seconds, kills).
    runs: Vec<(&'static str, u64, f64, u64)>,
}

struct Mutant {
    what: String,
    class: String,
    scope: Option<Scope>,
    fate: Fate,
}

/// One way of running a mutant: how its kernel is generated and how it is stressed.
#[derive(Clone, Debug)]
pub struct Config {
    pub name: &'static str,
    pub gen: GenOptions,
    pub opts: RunOptions,
}

/// The configurations a mutant runs in: only the one asked for, or with `portfolio` a set of
/// stress and placement variants that differ in what they make likely (MC Mutants' parallel
/// testing with memory stress; the H200's weak outcomes follow line sharing and L1 reuse, see
/// docs/hardware/h200.md): the one asked for; each instance's locations alone on their lines
/// without stress; stress concentrated on 128 hot lines with more stress warps and longer
/// pre-stress; and lines shared without stress.
pub fn configs(gen: &GenOptions, opts: &RunOptions, portfolio: bool) -> Vec<Config> {
    let mut out = vec![Config {
        name: "asked",
        gen: gen.clone(),
        opts: opts.clone(),
    }];
    if !portfolio {
        return out;
    }
    let calm = |per_line| {
        let mut g = gen.clone();
        g.stress_warps = 0;
        g.per_line = per_line;
        let mut o = opts.clone();
        o.stress_iters = 0;
        o.pre_iters = 0;
        (g, o)
    };
    let (g, o) = calm(1);
    out.push(Config {
        name: "alone-calm",
        gen: g,
        opts: o,
    });
    let mut g = gen.clone();
    g.per_line = 32;
    g.stress_warps = (g.block_threads / 32 / 2).max(1);
    let mut o = opts.clone();
    o.stress_iters = 128;
    o.pre_iters = 32;
    o.scratch_words = 128 * 32;
    out.push(Config {
        name: "hot-lines",
        gen: g,
        opts: o,
    });
    let (g, o) = calm(32);
    out.push(Config {
        name: "shared-calm",
        gen: g,
        opts: o,
    });
    out
}

/// Shares of a mutant's time for each round over the configurations: short rounds first, so
/// that the mutants that fall quickly cost little, then longer ones for the hard ones. A mutant
/// stops at the first round that kills it.
const ROUNDS: [f64; 4] = [0.02, 0.08, 0.3, 0.6];

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
    /// The kind of change (`release -> relaxed`).
    pub class: String,
    /// The scope of the instruction changed (before a narrowing).
    pub scope: Option<Scope>,
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
            let class = w.class();
            let scope = w.scope(program);
            let mutant = w.apply(program);
            let verdict = match check_guarded(file, source, &mutant, check) {
                Err(f) => Err(f.message().to_string()),
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
                class,
                scope,
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

/// The test whose mutants run: its file and text, the program and its verdict, and the options
/// it was checked with, which check the mutants too.
pub struct Original<'a> {
    pub file: &'a str,
    pub source: &'a str,
    pub program: &'a Program,
    pub verdict: &'a Verdict,
    pub check: &'a CheckOptions,
}

/// Checks and runs every mutant of `test` in `configs` (see [`configs`]); prints the table
/// (or one JSON line).
pub fn run_mutants(
    device: &Device,
    test: &Original,
    configs: &[Config],
    stop: &AtomicBool,
    json: bool,
) -> MutantTally {
    let Original {
        file,
        source,
        program,
        verdict: original,
        check,
    } = *test;
    let mut mutants = Vec::new();
    let mut hung = false;
    let mut code = OriginalCode::new(configs.len());
    for c in check_mutants(file, source, program, original, check) {
        let fate = match c.verdict {
            Err(why) => Fate::Unchecked(why),
            Ok(_) if c.new.is_empty() => Fate::Equivalent,
            Ok(_) if hung => Fate::NotRun("not run: an earlier mutant hung the GPU".into()),
            Ok(_) if code.same(device, program, &c.program, configs) => Fate::SameCode,
            Ok(v) => {
                crate::supervise::note_gpu();
                run_one(device, &c.program, &v, original, &c.new, configs, stop).unwrap_or_else(
                    |e| {
                        hung |= e.1;
                        Fate::NotRun(e.0)
                    },
                )
            }
        };
        mutants.push(Mutant {
            what: c.what,
            class: c.class,
            scope: c.scope,
            fate,
        });
    }
    let count = |f: &dyn Fn(&Fate) -> bool| mutants.iter().filter(|m| f(&m.fate)).count() as u32;
    let killable = count(&|f| matches!(f, Fate::Ran(_)));
    let killed = count(&|f| matches!(f, Fate::Ran(r) if r.kills > 0));
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

/// The original's machine code under each configuration, compiled when first needed.
struct OriginalCode {
    code: Vec<Option<Option<Vec<u8>>>>,
}

impl OriginalCode {
    fn new(n: usize) -> OriginalCode {
        OriginalCode {
            code: vec![None; n],
        }
    }

    /// Whether `mutant` compiles to `original`'s machine code under every configuration. Any
    /// failure to generate or compile says no: the mutant then runs (and fails there if it
    /// must).
    fn same(
        &mut self,
        device: &Device,
        original: &Program,
        mutant: &Program,
        configs: &[Config],
    ) -> bool {
        configs.iter().enumerate().all(|(i, c)| {
            let mine = self.code[i]
                .get_or_insert_with(|| {
                    let k = generate(original, &c.gen).ok()?;
                    machine_code(device, &k.ptx).ok()
                })
                .clone();
            let Some(mine) = mine else { return false };
            generate(mutant, &c.gen)
                .ok()
                .and_then(|k| machine_code(device, &k.ptx).ok())
                .is_some_and(|theirs| theirs == mine)
        })
    }
}

/// Runs a mutant in rounds over `configs` until a run kills it or its time (the first
/// configuration's `time`) is spent.
fn run_one(
    device: &Device,
    mutant: &Program,
    verdict: &Verdict,
    original: &Verdict,
    new: &HashSet<Vec<Value>>,
    configs: &[Config],
    stop: &AtomicBool,
) -> Result<Fate, (String, bool)> {
    let table = StateTable::with_allowed(mutant, &verdict.states, &original.states)
        .map_err(|e| (e.to_string(), false))?;
    let own = state_values(verdict);
    let total = configs[0].opts.time;
    let shares: &[f64] = if configs.len() == 1 { &[1.0] } else { &ROUNDS };
    let mut ran = Ran {
        instances: 0,
        kills: 0,
        seconds: 0.0,
        wall: 0.0,
        first_kill: None,
        killer: None,
        outside: 0,
        runs: configs.iter().map(|c| (c.name, 0, 0.0, 0)).collect(),
    };
    let mut kernels = Vec::new();
    for c in configs {
        kernels.push(generate(mutant, &c.gen).map_err(|e| (e.to_string(), false))?);
    }
    'rounds: for share in shares {
        for (i, c) in configs.iter().enumerate() {
            let mut opts = c.opts.clone();
            opts.time = total.mul_f64(share / configs.len() as f64);
            let began = std::time::Instant::now();
            let result = scopecheck_gpu::driver::guarded("running a mutant on the GPU", || {
                runner::run(device, mutant, &kernels[i], &table, &opts, stop)
            })
            .map_err(|e| (e.to_string(), false))?;
            ran.wall += began.elapsed().as_secs_f64();
            if let Stop::Hung { launch, budget, .. } = result.stop {
                // A state of a launch that never finished is unknown: the mutant is not judged.
                return Err((
                    format!(
                        "hung: launch {launch} ran past its budget of {budget:?} (after {} \
                         instances)",
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
            ran.outside += cmp
                .states
                .iter()
                .filter(|s| !own.contains(&s.values))
                .map(|s| s.count)
                .sum::<u64>()
                + cmp.unsampled_other;
            let seconds = result.elapsed.as_secs_f64();
            let per_launch = seconds / result.launches.max(1) as f64;
            let first = result
                .anomalies
                .iter()
                .filter(|a| new.contains(&a.values))
                .map(|a| a.launch)
                .min()
                .map(|l| ran.seconds + (l + 1) as f64 * per_launch);
            ran.instances += result.instances;
            ran.kills += kills;
            ran.seconds += seconds;
            let r = &mut ran.runs[i];
            r.1 += result.instances;
            r.2 += seconds;
            r.3 += kills;
            if kills > 0 {
                ran.first_kill = first.or(Some(ran.seconds));
                ran.killer = Some(c.name);
                break 'rounds;
            }
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                break 'rounds;
            }
        }
    }
    Ok(Fate::Ran(ran))
}

fn text(program: &Program, mutants: &[Mutant], killable: u32, killed: u32) -> String {
    let not_run = mutants
        .iter()
        .filter(|m| matches!(m.fate, Fate::NotRun(_)))
        .count();
    let same = mutants
        .iter()
        .filter(|m| matches!(m.fate, Fate::SameCode))
        .count();
    let mut out = format!(
        "Mutants {}: {} weakenings, {killable} that can show a state the original forbids ran \
         ({not_run} more could not, {same} compile to the original's machine code), {killed} \
         killed{}\n",
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
            Fate::SameCode => format!(
                "  same code   {}: killable under the model, but compiled to the original's \
                 machine code for this GPU (not run)",
                m.what
            ),
            Fate::NotRun(why) => format!("  not run     {}: {why}", m.what),
            Fate::Ran(r) => ran_text(&m.what, r),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn ran_text(what: &str, r: &Ran) -> String {
    let mut l = if r.kills > 0 {
        format!(
            "  killed      {what}: {} of {} instances ({:.0}/s), first after {}{}",
            r.kills,
            r.instances,
            r.kills as f64 / r.seconds.max(f64::MIN_POSITIVE),
            r.first_kill.map_or("?".into(), |t| if t < 1.0 {
                format!("{:.1} ms", t * 1000.0)
            } else {
                format!("{t:.2} s")
            }),
            match r.killer {
                Some(k) if r.runs.len() > 1 => format!(" ({k})"),
                _ => String::new(),
            }
        )
    } else {
        format!("  survived    {what}: 0 of {} instances", r.instances)
    };
    if r.outside > 0 {
        l.push_str(&format!(
            "; !!! {} instances in states the mutant's model forbids",
            r.outside
        ));
    }
    l
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
        .map(|m| {
            let mut v = match &m.fate {
                Fate::Equivalent => json!({"killable": false}),
                Fate::Unchecked(why) => json!({"killable": null, "error": why}),
                Fate::SameCode => json!({"killable": true, "same_machine_code": true}),
                Fate::NotRun(why) => json!({"killable": true, "error": why}),
                Fate::Ran(r) => json!({
                    "killable": true,
                    "killed": r.kills > 0,
                    "kills": r.kills,
                    "instances": r.instances,
                    "seconds": r.seconds,
                    "wall_seconds": r.wall,
                    "first_kill_seconds": r.first_kill,
                    "killed_by": r.killer,
                    "outside_mutant_model": r.outside,
                    "runs": r.runs.iter().map(|(name, inst, secs, kills)| json!({
                        "config": name, "instances": inst, "seconds": secs, "kills": kills,
                    })).collect::<Vec<_>>(),
                }),
            };
            if let serde_json::Value::Object(o) = &mut v {
                o.insert("mutant".into(), m.what.clone().into());
                o.insert("class".into(), m.class.clone().into());
                o.insert("scope".into(), m.scope.map(|s| s.to_string()).into());
            }
            v
        })
        .collect();
    let same = mutants
        .iter()
        .filter(|m| matches!(m.fate, Fate::SameCode))
        .count();
    json!({
        "name": program.name,
        "file": file,
        "mutants": list,
        "killable": killable,
        "killed": killed,
        "same_machine_code": same,
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

    #[test]
    fn the_portfolio_varies_line_sharing_and_stress_and_keeps_the_time_asked() {
        let gen = GenOptions::default();
        let opts = RunOptions::default();
        let one = configs(&gen, &opts, false);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].gen, gen);
        let all = configs(&gen, &opts, true);
        let names: Vec<&str> = all.iter().map(|c| c.name).collect();
        assert_eq!(names, ["asked", "alone-calm", "hot-lines", "shared-calm"]);
        // Each line-sharing and stress setting differs from the one asked for somewhere.
        for c in &all[1..] {
            assert!(
                c.gen != gen || c.opts.scratch_words != opts.scratch_words,
                "{}",
                c.name
            );
            // The rounds split the first configuration's time, which all keep.
            assert_eq!(c.opts.time, opts.time);
        }
        assert_eq!(all[1].gen.per_line, 1);
        assert_eq!((all[1].gen.stress_warps, all[1].opts.stress_iters), (0, 0));
        assert!(all[2].opts.scratch_words.is_power_of_two());
        // The rounds' shares add up to the whole time.
        assert!((ROUNDS.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
}
