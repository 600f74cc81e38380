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
    assert!(out.contains("Race data on c: "), "{out}");
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

/// A host program that polls managed memory while its kernel runs (examples/cuda/hostpoll.cu:
/// `while (*flag == 0) {}` at line 14, after the launch at line 13, before the
/// synchronization) keeps the interpreted harness, which explores the host's reads against
/// the kernel's writes; the report says which harness ran and why, in text and JSON. The
/// verdict is the interpreted one: the plain flag and result race, and the host may read the
/// flag set and the result not yet (No, racy; docs/cuda.md).
#[test]
fn a_polling_host_keeps_the_interpreted_harness_and_says_why() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda/hostpoll.cu");
    let Some((out, err, _)) = check(&["--host", "native", p.to_str().unwrap()]) else {
        return;
    };
    assert!(
        out.contains("Harness interpreted: the host code touches memory a running kernel may access (line 14: managed memory (`flag`) used by the host while the kernel launched at line 13 may still run)"),
        "{out}{err}"
    );
    assert!(out.lines().any(|l| l == "No"), "{out}");
    let Some((out, _, _)) = check(&["--host", "native", "--json", p.to_str().unwrap()]) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["harness"], "interpreted");
    assert!(
        v["harness_reason"].as_str().unwrap().contains("line 14"),
        "{v}"
    );
    assert_eq!(v["result"], "No");
    assert!(!v["races"].as_array().unwrap().is_empty(), "{v}");
}

/// A native run that scopecheck stops (examples/cuda/params-struct.cu: its kernel takes a
/// struct by value, which the explored launch does not pass yet) and in which nothing
/// failed is checked by the interpreted harness instead, which reads the file: its verdict
/// (Ok: the consumer's await and fence order the payload, docs/cuda.md) with the reason.
#[test]
fn a_stopped_native_run_falls_back_to_the_interpreted_harness() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda/params-struct.cu");
    let Some((out, err, code)) = check(&["--host", "native", "--json", p.to_str().unwrap()]) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(v["harness"], "interpreted", "{out}{err}");
    let why = v["harness_reason"].as_str().unwrap();
    assert!(why.starts_with("the native run was stopped ("), "{why}");
    assert!(why.contains("params-struct.cu:"), "{why}");
    assert_eq!(v["result"], "Ok", "{v}");
    assert_eq!(code, 0, "{out}{err}");
}
