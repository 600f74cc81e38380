//! Runs every litmus test of the corpus and compares the verdict with the expectation written in
//! the test: `(* expect: Ok -- reason *)` and optionally `(* expect-states: N *)`.
//!
//! The expectations were derived by hand from the model's definition (docs/ptx-model.md); a
//! mismatch is either a bug in scopecheck or a wrong derivation, and both need a look.

use std::path::{Path, PathBuf};

use scopecheck_model::{check, CheckOptions, Outcome};

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
    Expectation {
        outcome,
        states,
        known_gap,
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
                    e.span.line,
                    e.span.column
                ));
                continue;
            }
        };
        let verdict = match check(&program, &CheckOptions::default()) {
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
                kind: InstrKind::Fence { order: FenceOrder::Sc, scope: Scope::Sys },
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
