//! Runs every litmus test of the corpus and compares the verdict with the expectation written in
//! the test: `(* expect: Ok -- reason *)` and optionally `(* expect-states: N *)`.
//!
//! The expectations were derived by hand from the model's definition (docs/ptx-model.md); a
//! mismatch is either a bug in scopecheck or a wrong derivation, and both need a look.

use std::path::{Path, PathBuf};

use scopecheck_model::{check, CheckOptions, Engine, ModelKind, Outcome, Platform, Progress};

fn corpus_files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("reading {}: {e}", root.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
        .collect();
    files.sort();
    files
}

/// What a test file says it expects.
struct Expectation {
    outcome: Outcome,
    states: Option<usize>,
    /// Why the tool cannot settle this test yet (`(* known-gap: ... *)`): it must then answer
    /// Unknown, never a guess.
    known_gap: Option<String>,
    /// `(* expect-terminates: true|false|unknown -- reason *)`: whether no thread can wait
    /// forever (`unknown`: an unrolled loop was cut, so the tool cannot say).
    terminates: Option<Option<bool>>,
    /// `(* expect-racy: true|false -- reason *)`: whether some consistent execution races.
    racy: Option<bool>,
    /// `(* options: --model ptx --progress obe --resident-blocks 1 --its off --unroll 3 *)`.
    options: CheckOptions,
}

/// The check options a test asks for, written as the command line's flags.
fn options(path: &Path, text: Option<&str>) -> CheckOptions {
    let mut o = CheckOptions::default();
    let words: Vec<&str> = text
        .map(|t| t.split_whitespace().collect())
        .unwrap_or_default();
    for pair in words.chunks(2) {
        let bad = || panic!("{}: bad options `{}`", path.display(), words.join(" "));
        let [flag, value] = pair else { bad() };
        match *flag {
            "--progress" => {
                o.scheduler.progress = match *value {
                    "fair" => Progress::Fair,
                    "obe" => Progress::Obe,
                    "hsa" => Progress::Hsa,
                    "lobe" => Progress::Lobe,
                    "unfair" => Progress::Unfair,
                    _ => bad(),
                }
            }
            "--its" => o.scheduler.its = *value == "on",
            "--resident-blocks" => {
                o.scheduler.resident_blocks = Some(value.parse().unwrap_or_else(|_| bad()))
            }
            "--unroll" => o.unroll = value.parse().unwrap_or_else(|_| bad()),
            "--platform" => o.platform = Platform::builtin(value).unwrap_or_else(|| bad()),
            "--model" => {
                o.model = Some(match *value {
                    "ptx" => ModelKind::Ptx,
                    "src11" => ModelKind::Src11,
                    _ => bad(),
                })
            }
            _ => bad(),
        }
    }
    o
}

/// The text of the comment that starts with `key` (e.g. `expect:`), if any.
fn comment_field<'a>(source: &'a str, key: &str) -> Option<&'a str> {
    let start = source.find(&format!("(* {key}"))? + 3 + key.len();
    let end = source[start..].find("*)")? + start;
    Some(source[start..end].trim())
}

fn expectation(path: &Path, source: &str) -> Expectation {
    let text = comment_field(source, "expect:").unwrap_or_else(|| {
        panic!(
            "{}: no `(* expect: Ok|No -- reason *)` comment",
            path.display()
        )
    });
    let (result, reason) = text.split_once("--").unwrap_or((text, ""));
    assert!(
        !reason.trim().is_empty(),
        "{}: the expectation gives no reason",
        path.display()
    );
    let outcome = match result.trim() {
        "Ok" => Outcome::Ok,
        "No" => Outcome::No,
        other => panic!(
            "{}: expected result `{other}` is neither Ok nor No",
            path.display()
        ),
    };
    let states = comment_field(source, "expect-states:").map(|n| {
        n.parse()
            .unwrap_or_else(|_| panic!("{}: bad expect-states `{n}`", path.display()))
    });
    let known_gap = comment_field(source, "known-gap:").map(str::to_string);
    let terminates = comment_field(source, "expect-terminates:").map(|t| {
        let (word, reason) = t.split_once("--").unwrap_or((t, ""));
        assert!(
            !reason.trim().is_empty(),
            "{}: expect-terminates gives no reason",
            path.display()
        );
        match word.trim() {
            "true" => Some(true),
            "false" => Some(false),
            "unknown" => None,
            w => panic!(
                "{}: expect-terminates `{w}` is not true, false or unknown",
                path.display()
            ),
        }
    });
    let racy = comment_field(source, "expect-racy:").map(|t| {
        let (word, reason) = t.split_once("--").unwrap_or((t, ""));
        assert!(
            !reason.trim().is_empty(),
            "{}: expect-racy gives no reason",
            path.display()
        );
        match word.trim() {
            "true" => true,
            "false" => false,
            w => panic!(
                "{}: expect-racy `{w}` is neither true nor false",
                path.display()
            ),
        }
    });
    let options = options(path, comment_field(source, "options:"));
    Expectation {
        racy,
        outcome,
        states,
        known_gap,
        terminates,
        options,
    }
}

fn run_corpus(dir: &str, minimum: usize) {
    let files = corpus_files(dir);
    assert!(
        files.len() >= minimum,
        "{dir}: {} tests, expected at least {minimum}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path).expect("readable test");
        let expected = expectation(path, &source);
        let program = match scopecheck_litmus::parse(&source) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!(
                    "{}:{}:{}: parse error: {e}",
                    path.display(),
                    e.line(),
                    e.column()
                ));
                continue;
            }
        };
        let verdict = match check(&program, &expected.options) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: check error: {e}", path.display()));
                continue;
            }
        };
        // An incomplete exploration may still settle the condition (a witness is a witness);
        // when it cannot, the answer must be Unknown and the test must say why it is a gap.
        let settled = verdict.outcome != Outcome::Unknown;
        match (&expected.known_gap, settled) {
            (None, false) => failures.push(format!(
                "{}: unsettled: {:?}",
                path.display(),
                verdict.incomplete.as_ref().map(|i| &i.reason)
            )),
            (Some(gap), true) => failures.push(format!(
                "{}: settled although marked as a known gap ({gap}): remove the mark",
                path.display()
            )),
            _ => {}
        }
        if settled && verdict.outcome != expected.outcome {
            failures.push(format!(
                "{}: expected {:?}, got {:?} ({} states, +{} -{})",
                path.display(),
                expected.outcome,
                verdict.outcome,
                verdict.states.len(),
                verdict.positive,
                verdict.negative
            ));
        }
        if let Some(r) = expected.racy {
            if verdict.is_racy() != r {
                failures.push(format!(
                    "{}: expected racy={r}, got races {:?}",
                    path.display(),
                    verdict.races
                ));
            }
        }
        if let Some(t) = expected.terminates {
            if verdict.terminates() != t {
                failures.push(format!(
                    "{}: expected terminates={t:?}, got {:?}, hangs {:?}",
                    path.display(),
                    verdict.terminates(),
                    verdict.hangs
                ));
            }
        }
        if let (Some(n), true) = (expected.states, verdict.is_complete()) {
            if verdict.states.len() != n {
                failures.push(format!(
                    "{}: expected {n} states, got {}",
                    path.display(),
                    verdict.states.len()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} tests disagree:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn ptx_corpus_matches_expectations() {
    run_corpus("tests/litmus/ptx", 80);
}

#[test]
fn shipped_examples_match_expectations() {
    run_corpus("examples/ptx", 1);
}

#[test]
fn c_corpus_matches_expectations() {
    run_corpus("tests/litmus/c", 60);
}

mod strengthening {
    //! Adding a `fence.sc.sys` to a PTX program can only remove behaviours: the fence adds
    //! synchronization edges, release/acquire patterns and Fence-SC pairs, each of which only adds
    //! constraints to the axioms. So the final states of the stronger program are a subset of the
    //! weaker one's.

    use super::*;
    use proptest::prelude::*;
    use scopecheck_ir::{FenceOrder, Instr, InstrKind, Scope};
    use std::collections::BTreeSet;

    fn states(
        program: &scopecheck_ir::Program,
    ) -> Option<BTreeSet<Vec<(scopecheck_ir::Observable, i64)>>> {
        let v = check(program, &CheckOptions::default()).ok()?;
        v.is_complete()
            .then(|| v.states.into_iter().map(|s| s.values).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn an_added_fence_sc_sys_never_adds_final_states(
            file in 0usize..10_000, thread in 0usize..8, pos in 0usize..32,
        ) {
            let files = corpus_files("tests/litmus/ptx");
            let source = std::fs::read_to_string(&files[file % files.len()]).expect("readable");
            let weak = scopecheck_litmus::parse(&source).expect("corpus tests parse");
            let mut strong = weak.clone();
            let t = thread % strong.threads.len();
            let code = &mut strong.threads[t].code;
            let pos = pos % (code.len() + 1);
            for i in code.iter_mut() {
                if let InstrKind::Branch { target, .. } = &mut i.kind {
                    if *target > pos {
                        *target += 1;
                    }
                }
            }
            code.insert(pos, Instr {
                kind: InstrKind::Fence {
                    order: FenceOrder::Sc,
                    scope: Scope::Sys,
                    spaces: scopecheck_ir::FenceSpaces::ALL,
                },
                span: Default::default(),
                text: "fence.sc.sys".into(),
            });
            if let (Some(weaker), Some(stronger)) = (states(&weak), states(&strong)) {
                prop_assert!(stronger.is_subset(&weaker),
                    "adding fence.sc.sys at {} of P{} added states: {:?}", pos, t,
                    stronger.difference(&weaker).collect::<Vec<_>>());
            }
        }
    }
}

/// Await loops are explored by their exiting iteration, so the number of executions of a
/// spinlock does not grow with the unroll bound (issue: loops and forward progress).
#[test]
fn await_loop_executions_do_not_grow_with_unroll() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let source = std::fs::read_to_string(root.join("tests/litmus/ptx/Lock+ttas.gpu.litmus"))
        .expect("the TTAS test");
    let program = scopecheck_litmus::parse(&source).expect("parses");
    let counts: Vec<(u128, bool, usize)> = [1, 2, 4, 8, 16]
        .iter()
        .map(|&unroll| {
            let opts = CheckOptions {
                unroll,
                ..CheckOptions::default()
            };
            let v = check(&program, &opts).expect("checks");
            (v.executions, v.is_complete(), v.reduced_loops)
        })
        .collect();
    // Both threads' TTAS loops are await loops (the failing test reads, the failing CAS reads):
    // complete at every bound, with the same executions.
    assert!(counts.iter().all(|c| *c == counts[0]), "{counts:?}");
    assert!(counts[0].1, "{counts:?}");
    assert_eq!(counts[0].2, 2, "{counts:?}");
}

/// Launch order (`Thread::after`, what the CUDA front-end gives a kernel launched after another
/// on one stream): the later thread sees everything the earlier one did, and a thread spinning
/// for a write of a thread that starts only after it finishes hangs under any scheduler.
#[test]
fn launch_order_orders_memory_and_can_hang() {
    let mp = "PTX MP+launch\n{ x=0; f=0; }\n P0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.weak r0, f ;\n st.weak f, 1 | ld.weak r1, x ;\nexists (P1:r0 == 1 /\\ P1:r1 == 0)\n";
    let mut p = scopecheck_litmus::parse(mp).expect("parses");
    // Concurrent: plain message passing may read the stale x.
    let concurrent = check(&p, &CheckOptions::default()).expect("checks");
    assert_eq!(concurrent.outcome, Outcome::Ok);
    // P1 launched after P0 on the same stream: it reads f=1 and x=1, nothing else.
    p.threads[1].after = vec![scopecheck_ir::ThreadId(0)];
    let ordered = check(&p, &CheckOptions::default()).expect("checks");
    assert_eq!(ordered.outcome, Outcome::No);
    assert_eq!(ordered.states.len(), 1, "{:?}", ordered.states);
    assert!(!ordered.is_racy(), "{:?}", ordered.races);

    let spin = "PTX Spin+launch\n{ f=0; }\n P0 | P1@cta 1,gpu 0 ;\n L: ld.acquire.gpu r0, f | st.release.gpu f, 1 ;\n beq r0, 0, L | ;\nexists (P0:r0 == 1)\n";
    let mut p = scopecheck_litmus::parse(spin).expect("parses");
    assert_eq!(
        check(&p, &CheckOptions::default())
            .expect("checks")
            .terminates(),
        Some(true)
    );
    // The writer starts only after the spinner finishes: the spinner waits forever.
    p.threads[1].after = vec![scopecheck_ir::ThreadId(0)];
    let v = check(&p, &CheckOptions::default()).expect("checks");
    assert_eq!(v.terminates(), Some(false), "{:?}", v.hangs);
    assert!(
        v.hangs[0].reason.contains("starts only after P0 finishes"),
        "{:?}",
        v.hangs
    );
}

/// Two explorers of one model on every test of `dir` that `only` accepts (by file stem), each
/// test with its own options: `new` must give the same states, verdict, condition counts,
/// executions, races, hangs and completeness as `old`. When `old_may_cut`, a test the old one
/// could not finish only requires the new one to find at least the states it found.
struct Comparison {
    new: (Engine, &'static str),
    old: (Engine, &'static str),
    /// `Some` overrides the test's symmetry option.
    symmetry: Option<bool>,
    old_may_cut: bool,
}

fn engines_agree(dir: &str, only: &dyn Fn(&str) -> bool, c: &Comparison) {
    let mut failures = Vec::new();
    let mut compared = 0;
    for path in corpus_files(dir) {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if !only(stem) {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("readable test");
        let Ok(program) = scopecheck_litmus::parse(&source) else {
            continue;
        };
        let opts = options(&path, comment_field(&source, "options:"));
        let run = |engine| {
            check(
                &program,
                &CheckOptions {
                    engine,
                    symmetry: c.symmetry.unwrap_or(opts.symmetry),
                    ..opts.clone()
                },
            )
        };
        let (new, old) = match (run(c.new.0), run(c.old.0)) {
            (Ok(n), Ok(o)) => (n, o),
            (Err(n), Err(o)) if n == o => continue,
            (n, o) => {
                failures.push(format!(
                    "{}: {:?} vs {:?}",
                    path.display(),
                    n.err(),
                    o.err()
                ));
                continue;
            }
        };
        compared += 1;
        let name = path.display();
        if c.old_may_cut && !old.is_complete() {
            for s in &old.states {
                if !new.states.contains(s) {
                    failures.push(format!("{name}: {} misses {:?}", c.new.1, s.values));
                }
            }
            continue;
        }
        let same = new.states == old.states
            && new.outcome == old.outcome
            && (new.positive, new.negative, new.executions)
                == (old.positive, old.negative, old.executions)
            && new.races == old.races
            && new.hangs == old.hangs
            && new.is_complete() == old.is_complete();
        if !same {
            failures.push(format!(
                "{name}: {} {:?} {} states, {}+{} in {} executions, {} races, {} hangs; {} {:?} {} states, {}+{} in {} executions, {} races, {} hangs",
                c.new.1, new.outcome, new.states.len(), new.positive, new.negative, new.executions, new.races.len(), new.hangs.len(),
                c.old.1, old.outcome, old.states.len(), old.positive, old.negative, old.executions, old.races.len(), old.hangs.len(),
            ));
        }
    }
    assert!(compared > 0, "{dir}: nothing compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The graph explorer against the candidate enumerator it replaces, on every test of both
/// corpora and the shipped examples. Where the enumerator was cut short (an unrolled loop),
/// the graph explorer, which cuts pure iterations by behaviour, must find at least the states
/// it found; those are the verdicts allowed to change from Unknown.
fn differential(dir: &str) {
    engines_agree(
        dir,
        &|_| true,
        &Comparison {
            new: (Engine::Auto, "graphs"),
            old: (Engine::Candidates, "candidates"),
            symmetry: None,
            old_may_cut: true,
        },
    );
}

/// The revisiting search (scoped C11: writes placed in modification order, earlier reads
/// revisited) against the hole search it replaces there, with symmetry off so that the
/// revisiting search runs on every test (it does not run where threads are interchangeable).
fn revisits_match_holes(dir: &str, only: &dyn Fn(&str) -> bool) {
    engines_agree(
        dir,
        only,
        &Comparison {
            new: (Engine::Graphs, "revisits"),
            old: (Engine::Holes, "holes"),
            symmetry: Some(false),
            old_may_cut: false,
        },
    );
}

#[test]
fn revisiting_search_matches_the_hole_search_on_scoped_c11() {
    let all = |_: &str| true;
    revisits_match_holes("tests/litmus/c", &all);
    revisits_match_holes("examples/c", &all);
    // The hole search without symmetry takes seconds beyond these sizes.
    revisits_match_holes("tests/bench/c", &|name: &str| {
        ["N2", "N3", "2x2", "3x3", "4x1", "4blocks", "4prod"]
            .iter()
            .any(|s| name.ends_with(s))
    });
}

#[test]
fn graph_explorer_matches_the_candidate_enumerator_on_the_ptx_corpus() {
    differential("tests/litmus/ptx");
}

#[test]
fn graph_explorer_matches_the_candidate_enumerator_on_the_c_corpus() {
    differential("tests/litmus/c");
    differential("examples/ptx");
    differential("examples/c");
}

/// Symmetry reduction: three identical CAS-lock threads, each alone in its CTA, are one class;
/// exploring one order per orbit and weighting each execution by its images must give the same
/// states and counts as exploring every order (3! = 6 acquisition orders). A race names
/// threads, so a program whose identical threads race is searched again without symmetry and
/// reports every racing pair.
#[test]
fn symmetric_threads_are_explored_once_and_counted_fully() {
    let thread = "L: atom.acquire.gpu.cas r0, m, 0, 1 ; bne r0, 0, L ; ld.weak r1, c ; add r1, r1, 1 ; st.weak c, r1 ; st.release.gpu m, 0";
    let columns: Vec<Vec<&str>> = (0..3).map(|_| thread.split(" ; ").collect()).collect();
    let mut src = String::from(
        "PTX Lock3\n{ m=0; c=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n",
    );
    for row in 0..columns[0].len() {
        let cells: Vec<&str> = columns.iter().map(|c| c[row]).collect();
        src.push_str(&format!(" {} ;\n", cells.join(" | ")));
    }
    src.push_str("forall (c == 3)\n");
    let program = scopecheck_litmus::parse(&src).expect("parses");
    let on = check(&program, &CheckOptions::default()).expect("checks");
    let off = check(
        &program,
        &CheckOptions {
            symmetry: false,
            ..CheckOptions::default()
        },
    )
    .expect("checks");
    assert_eq!(on.symmetry, vec![3]);
    assert!(off.symmetry.is_empty());
    assert_eq!((on.outcome, on.executions), (Outcome::Ok, 6));
    assert_eq!(
        (&on.states, on.positive, on.negative, on.executions),
        (&off.states, off.positive, off.negative, off.executions)
    );

    let racy = "PTX Race3\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n st.weak x, 1 | st.weak x, 1 | st.weak x, 1 ;\nexists (x == 1)\n";
    let program = scopecheck_litmus::parse(racy).expect("parses");
    let v = check(&program, &CheckOptions::default()).expect("checks");
    assert_eq!(v.races.len(), 3, "{:?}", v.races);
    assert!(v.symmetry.is_empty(), "searched again without symmetry");
}

/// Load buffering is explored by the graph explorer itself: a thread runs past a read that
/// waits for a later write while nothing needs its value, so the LB outcome (both loads read
/// the other thread's store), allowed by PTX without dependencies or with one on one side only
/// (`rf ∪ dep` stays acyclic), is found without falling back: `exists` is Ok and `~exists` No,
/// as each test's own expectation says. Barrier divergence is explored too (the skipped
/// barrier's waiter hangs). A loop of RMWs whose first waits for the other thread's RMW is
/// decided by the hole search: its static gate cannot rule out that the loop's later RMWs
/// (independent of the value waited for) feed that other thread, but the precise gate sees no
/// cycle of waiting through them (the other thread waits for nothing). Where the cycle is
/// real (a barrier link that no dependency forbids: load buffering through a barrier on one
/// side, a data dependency on the other, which PTX allows), the gate hands over to the
/// candidate enumerator.
#[test]
fn graph_explorer_handles_load_buffering_and_barriers_and_says_where_it_falls_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = |name: &str| {
        let source = std::fs::read_to_string(root.join("tests/litmus/ptx").join(name))
            .expect("a corpus test");
        let program = scopecheck_litmus::parse(&source).expect("parses");
        check(
            &program,
            &CheckOptions {
                engine: Engine::Graphs,
                ..CheckOptions::default()
            },
        )
        .expect("checks")
    };
    for (name, outcome) in [
        ("LB+relaxed.gpus.litmus", Outcome::Ok),
        ("LB+weak.litmus", Outcome::No),
        ("LB+data+po.litmus", Outcome::No),
    ] {
        let v = run(name);
        assert!(v.is_complete(), "{name}: {:?}", v.incomplete);
        assert_eq!(v.outcome, outcome, "{name}");
    }
    let v = run("Bar+divergence.litmus");
    assert!(v.is_complete() && v.terminates() == Some(false), "{v:?}");
    let v = run("Adv-Loop+atom.add.gpu+counter.litmus");
    assert!(v.is_complete(), "{:?}", v.incomplete);
    assert_eq!((v.outcome, v.states.len()), (Outcome::No, 2));
    // A leader spins for the other CTA's count while its CTA's second barrier waits for it;
    // under HSA the threads held elsewhere wait for a starved block, not for it: decided, with
    // the candidate enumerator's states, counts and hang (Ok, 2 executions, P0 spins).
    let source = std::fs::read_to_string(root.join("tests/litmus/ptx/TreeBar+2x2+hsa.litmus"))
        .expect("a corpus test");
    let program = scopecheck_litmus::parse(&source).expect("parses");
    let mut hsa = CheckOptions {
        engine: Engine::Graphs,
        ..CheckOptions::default()
    };
    hsa.scheduler.progress = Progress::Hsa;
    let v = check(&program, &hsa).expect("checks");
    assert!(v.is_complete(), "{:?}", v.incomplete);
    assert_eq!(
        (v.outcome, v.executions, v.hangs.len()),
        (Outcome::Ok, 2, 1)
    );
    let v = run("Adv-LB+bar.sync+data.litmus");
    assert!(
        v.incomplete
            .as_ref()
            .is_some_and(|i| i.reason.contains("before a barrier others wait at")),
        "{:?}",
        v.incomplete
    );
}

/// A known limit of the completeness gate (docs/explore.md, "Known limits"): a C spin lock
/// checked in the PTX view, where C's overflow check makes the lock holder wait for the
/// counter's value before its add, while its release store does not depend on it. The gate
/// cannot tell that the other thread's counter write, after its acquire of that release, is
/// causality-after the holder's read (the model forbids the cycle), so it hands over to the
/// candidate enumerator; the verdict is the enumerator's (Ok, the two lock orders).
#[test]
fn a_release_before_an_awaited_value_is_a_known_limit_of_the_gate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let source =
        std::fs::read_to_string(root.join("tests/bench/c/CasLock+N2.litmus")).expect("a benchmark");
    let program = scopecheck_litmus::parse(&source).expect("parses");
    let run = |engine| {
        check(
            &program,
            &CheckOptions {
                model: Some(ModelKind::Ptx),
                engine,
                ..CheckOptions::default()
            },
        )
        .expect("checks")
    };
    let v = run(Engine::Graphs);
    assert!(
        v.incomplete.as_ref().is_some_and(|i| i
            .reason
            .contains("could write, without the value it waits for")),
        "{:?}",
        v.incomplete
    );
    let v = run(Engine::Auto);
    assert!(v.is_complete(), "{:?}", v.incomplete);
    assert_eq!((v.outcome, v.executions), (Outcome::Ok, 2));
}

/// The benchmark corpus (tests/bench) checked for correctness on its instances small enough
/// for a test: each gives its expected verdict and exactly the number of executions its
/// `(* expect-executions: K -- reason *)` derives by hand (N! lock orders, (N!)² for the TTAS
/// lock's exiting test loads, and so on). Speed is measured by `scopecheck bench`, not here.
#[test]
fn bench_corpus_small_instances_match_their_derived_counts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/bench");
    let small = [
        "CasLock+N2",
        "CasLock+N3",
        "CasLock+N4",
        "CasLock+N5",
        "CasLock+2iter+N2",
        "CasLock+2iter+N3",
        "TtasLock+N2",
        "TtasLock+N3",
        "TtasLock+N4",
        "TicketLock+N2",
        "TicketLock+N3",
        "TicketLock+N4",
        "TicketLock+N5",
        "GridBarrier+2x2",
        "GridBarrier+3x3",
        "GridBarrier+4x1",
        "LookBack+4blocks",
        "RingQueue+4prod",
        "Counters+4x3",
        "Counters+4x10",
        "Counters+8x1",
        "MessagePassing+N2",
        "MessagePassing+N4",
        "MessagePassing+N8",
        "ScRing+N3",
        "ScRing+N4",
        "ScRing+N6",
        "Histogram+4x2",
    ];
    let mut failures = Vec::new();
    for dialect in ["ptx", "c"] {
        for name in small {
            let path = root.join(dialect).join(format!("{name}.litmus"));
            let source = std::fs::read_to_string(&path).expect("a benchmark");
            let expected = expectation(&path, &source);
            let executions: u128 = comment_field(&source, "expect-executions:")
                .and_then(|t| t.split("--").next())
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("{}: no expect-executions", path.display()));
            let program = scopecheck_litmus::parse(&source).expect("parses");
            let v = check(&program, &expected.options).expect("checks");
            if v.outcome != expected.outcome || v.executions != executions || !v.is_complete() {
                failures.push(format!(
                    "{}: {:?} with {} executions, expected {:?} with {executions}",
                    path.display(),
                    v.outcome,
                    v.executions,
                    expected.outcome
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The C locks of `tests/bench` with their threads told apart (`symmetry: false`, as in a
/// `.cu` launch whose threads differ by id), which is where the revisiting search runs: each
/// gives its expected verdict and the count its header derives by hand (the threads are
/// distinct whether or not the search may exploit that they are alike, so the count is the
/// same). Guards the revisiting search's schedule, which passes over spinners that would
/// block (docs/explore.md, "The revisiting search"), and what it does with blocked threads.
#[test]
fn bench_locks_with_distinct_threads_match_their_derived_counts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/bench/c");
    let locks = [
        "CasLock+N3",
        "CasLock+N5",
        "CasLock+2iter+N3",
        "TtasLock+N4",
        "TicketLock+N4",
        "TicketLock+N6",
    ];
    let mut failures = Vec::new();
    for name in locks {
        let path = root.join(format!("{name}.litmus"));
        let source = std::fs::read_to_string(&path).expect("a benchmark");
        let expected = expectation(&path, &source);
        let executions: u128 = comment_field(&source, "expect-executions:")
            .and_then(|t| t.split("--").next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: no expect-executions", path.display()));
        let program = scopecheck_litmus::parse(&source).expect("parses");
        let options = CheckOptions {
            symmetry: false,
            ..expected.options.clone()
        };
        let v = check(&program, &options).expect("checks");
        if v.outcome != expected.outcome
            || v.executions != executions
            || !v.is_complete()
            || v.terminates() != Some(true)
        {
            failures.push(format!(
                "{}: {:?} with {} executions (terminates {:?}), expected {:?} with {executions}",
                path.display(),
                v.outcome,
                v.executions,
                v.terminates(),
                expected.outcome
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
