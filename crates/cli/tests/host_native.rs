//! `check --host native`: the native host path from the command line (docs/host.md). The
//! programs live with the crate's own tests (crates/hostrun/tests/programs), each with its
//! verdict derived in its leading comment. Skipped, saying so, only without a C++ compiler.

use std::path::PathBuf;
use std::process::Command;

fn program(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../hostrun/tests/programs")
        .join(name)
}

fn check(args: &[&str]) -> Option<(String, String, i32)> {
    if scopecheck_hostrun::find_compiler().is_none() {
        eprintln!("skipped: no C++ compiler on this machine");
        return None;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .arg("check")
        .args(args)
        .output()
        .expect("scopecheck runs");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    ))
}

/// The lost update: two outcomes; the fork that sees 1 aborts at its assert, which the report
/// shows with the observation that led there; the race is reported; `--fail-on failures`
/// makes the exit status 3.
#[test]
fn a_failing_fork_is_reported_with_its_outcome() {
    let p = program("lost-update.cu");
    let Some((out, err, code)) = check(&[
        "--host",
        "native",
        "--fail-on",
        "failures",
        p.to_str().unwrap(),
    ]) else {
        return;
    };
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("2 processes"), "{out}");
    assert!(
        out.contains("lost-update.cu:13: outcome 1 of 2: abort (SIGABRT): FAILED"),
        "{out}"
    );
    assert!(out.contains("Assertion `h == 2' failed"), "{out}");
    assert!(out.contains("race (Data)"), "{out}");
    assert!(out.contains("Result: No (racy)"), "{out}");
}

/// A passing program: one process, Ok, exit 0 whatever --fail-on says; JSON says the
/// harness that ran.
#[test]
fn a_passing_program_is_ok_in_text_and_json() {
    let p = program("class-wrapper.cu");
    let Some((out, err, code)) =
        check(&["--host", "native", "--fail-on", "all", p.to_str().unwrap()])
    else {
        return;
    };
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Result: Ok"), "{out}");
    let Some((out, _, _)) = check(&["--host", "native", "--json", p.to_str().unwrap()]) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["harness"], "native");
    assert_eq!(v["result"], "Ok");
}

/// A host part the compiler refuses: the file is not checked (exit 1), the compiler's message
/// names the line.
#[test]
fn a_compile_error_is_an_input_error() {
    let p = program("host-compile-error.cu");
    let Some((out, err, code)) = check(&["--host", "native", p.to_str().unwrap()]) else {
        return;
    };
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("host-compile-error.cu:7"), "{err}");
}
