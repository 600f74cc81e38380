//! The `scopecheck` binary end to end: exit codes, file discovery, error lines. These tests
//! use only inputs that fail the same way whatever the parser and model do, so they pin the
//! command-line layer alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scopecheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("run scopecheck")
}

fn stdout_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Text no litmus parser accepts.
const GARBAGE: &str = "this is not a litmus test\n";

#[test]
fn bad_usage_exits_2() {
    assert_eq!(scopecheck(&[]).status.code(), Some(2));
    assert_eq!(scopecheck(&["check"]).status.code(), Some(2));
    assert_eq!(
        scopecheck(&["check", "--model", "c11", "x.litmus"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        scopecheck(&["check", "--unroll", "-1", "x.litmus"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn missing_file_is_an_error_line_and_exit_1() {
    let out = scopecheck(&["check", "--json", "no/such/file.litmus"]);
    assert_eq!(out.status.code(), Some(1));
    let lines = stdout_lines(&out);
    assert_eq!(lines.len(), 1);
    let keys: Vec<&str> = lines[0]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["file", "error", "line", "column"]);
    assert_eq!(lines[0]["file"], "no/such/file.litmus");
    assert_eq!(lines[0]["line"], 0);
}

#[test]
fn directory_without_tests_is_an_error() {
    let dir = scratch("empty");
    std::fs::write(dir.join("notes.txt"), "not a test").unwrap();
    let out = scopecheck(&["check", "--json", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let line = &stdout_lines(&out)[0];
    assert_eq!(
        line["error"],
        "no test file (.litmus, .cu, .cl, or with --harness .ptx) found under this directory"
    );
}

/// A file named again after its directory was searched is checked once, under its first name.
#[test]
fn directories_are_searched_recursively_in_sorted_order() {
    let dir = scratch("tree");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for f in ["b.litmus", "a.litmus", "sub/c.litmus", "z.txt"] {
        std::fs::write(dir.join(f), GARBAGE).unwrap();
    }
    let single = dir.join("b.litmus");
    let out = scopecheck(&[
        "check",
        "--json",
        dir.to_str().unwrap(),
        single.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let files: Vec<String> = stdout_lines(&out)
        .iter()
        .map(|l| l["file"].as_str().unwrap().to_string())
        .collect();
    let d = dir.display();
    assert_eq!(
        files,
        [
            format!("{d}/a.litmus"),
            format!("{d}/b.litmus"),
            format!("{d}/sub/c.litmus"),
        ]
    );
}

#[test]
fn parse_error_goes_to_stderr_with_the_file_name_and_the_run_continues() {
    let dir = scratch("parse-error");
    let bad = dir.join("bad.litmus");
    std::fs::write(&bad, GARBAGE).unwrap();
    let out = scopecheck(&["check", bad.to_str().unwrap(), "no/such/file.litmus"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.litmus"), "{err}");
    assert!(err.contains("no/such/file.litmus"), "{err}");
}

#[test]
fn bench_reports_errors_and_totals() {
    let out = scopecheck(&["bench", "--iters", "1", "no/such/file.litmus"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tests/second"), "{text}");
    assert!(text.contains("executions/second"), "{text}");
}

/// The README's example command.
#[test]
fn checks_the_readme_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = root.join("examples/ptx/MP+fence.sc.cta.litmus");
    let out = scopecheck(&["check", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("Test MP+fence.sc.cta "), "{text}");
    // The fences are .cta and the threads sit in different CTAs: no synchronization, so the
    // stale read of the data is allowed and the `exists` condition is validated.
    assert!(text.contains("\nOk\n"), "{text}");
    assert!(
        text.contains("\nObservation MP+fence.sc.cta Sometimes 1 3\n"),
        "{text}"
    );
    let out = scopecheck(&["check", "--json", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let v = &stdout_lines(&out)[0];
    assert_eq!(v["name"], "MP+fence.sc.cta");
    assert_eq!(v["result"], "Ok");
    assert_eq!(v["complete"], true);
    assert_eq!(v["states"].as_array().map(|s| s.len()), Some(4));
}

/// A fault reached before a barrier the faulting thread never gets to is still an error in the
/// test: the other participant blocking at the barrier must not hide it (found in review).
#[test]
fn a_fault_before_a_barrier_is_reported() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fault-behind-barrier.litmus");
    let out = scopecheck(&["check", "--json", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v = &stdout_lines(&out)[0];
    let error = v["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("index 1 leaves `y`, which holds one value"),
        "{v}"
    );
    assert!(v["line"].as_u64().unwrap_or(0) > 0, "{v}");
}

/// A fault in a kernel that host code waits for: the host thread never starts in that
/// execution (it starts after the kernel finishes), and its not starting must not hide the
/// fault (found while typing addresses).
#[test]
fn a_fault_before_host_code_that_waits_is_reported() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fault-before-host-code.cu");
    let out = scopecheck(&["check", "--json", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v = &stdout_lines(&out)[0];
    let error = v["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("index 2 is out of bounds of `a` (2 elements)"),
        "{v}"
    );
    assert_eq!(v["line"].as_u64(), Some(7), "{v}");
}

/// The first seed document's consumer without its `__threadfence()`: the assertion can fail,
/// the report shows who read what, and `--suggest` names the cheapest fix, on the consumer's
/// side (make its await RMW acquire, or fence before reading the payload), at GPU scope, not
/// system scope.
#[test]
fn suggest_names_the_missing_acquire_of_the_seed_example() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda/seed1-nofence.cu");
    let out = scopecheck(&["check", "--suggest", "--json", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = &stdout_lines(&out)[0];
    assert_eq!(v["result"], "No");
    // The witness reads the payload from the initial value.
    let witness = v["witness"].as_array().expect("a witness");
    assert!(
        witness
            .iter()
            .any(|w| w["location"] == "payload" && w["from"].is_null()),
        "{v}"
    );
    let best = &v["suggestions"][0]["changes"][0];
    assert_eq!(best["thread"], "consume.b0.t0", "{v}");
    assert!(
        best["becomes"].as_str().unwrap_or("").contains("gpu scope"),
        "{v}"
    );
}

/// A CUDA program's findings point at its own lines: the race on the payload is labelled at the
/// producer's write (line 7) and the consumer's read (line 14) of seed1-nofence.cu.
#[test]
fn cuda_findings_point_at_source_lines() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda/seed1-nofence.cu");
    let out = scopecheck(&["check", "--json", file.to_str().unwrap()]);
    let v = &stdout_lines(&out)[0];
    let diags = v["diagnostics"].as_array().expect("diagnostics");
    let race = diags.iter().find(|d| d["kind"] == "race").expect("a race");
    let mut lines: Vec<u64> = race["labels"]
        .as_array()
        .expect("labels")
        .iter()
        .filter_map(|l| l["line"].as_u64())
        .collect();
    lines.sort_unstable();
    assert_eq!(lines, vec![7, 14], "{race}");
    assert!(
        diags
            .iter()
            .any(|d| d["kind"] == "assertion" && d["severity"] == "error"),
        "{v}"
    );
    // Text mode prints them with the source lines.
    let out = scopecheck(&["check", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("data race on `payload`"), "{text}");
    assert!(text.contains("payload = v;"), "{text}");
}

/// `--max-executions` cuts the search short, and the verdict says so: this message-passing
/// test has four executions and no execution reads the value 2, so `~exists` of it holds only
/// once every execution was seen; after one the answer is Unknown, incomplete with the bound's
/// name. Malformed bounds are usage errors.
#[test]
fn search_bounds_make_the_verdict_incomplete() {
    let dir = scratch("bounds");
    let mp = dir.join("MP.litmus");
    std::fs::write(
        &mp,
        "PTX MP\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, y ;\n st.relaxed.gpu y, 1 | ld.relaxed.gpu r1, x ;\n~exists (P1:r0 == 2)\n",
    )
    .unwrap();
    let path = mp.to_str().unwrap();
    let out = scopecheck(&["check", "--json", "--max-executions", "1", path]);
    let v = &stdout_lines(&out)[0];
    assert_eq!(v["complete"], false, "{v}");
    assert_eq!(v["result"], "Unknown", "{v}");
    assert!(
        v["incomplete_reason"]
            .as_str()
            .is_some_and(|r| r.contains("--max-executions 1")),
        "{v}"
    );
    let full = scopecheck(&["check", "--json", "--max-executions", "1e6", path]);
    assert_eq!(stdout_lines(&full)[0]["complete"], true);
    assert_eq!(
        scopecheck(&["check", "--timeout", "soon", path])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        scopecheck(&["check", "--max-executions", "0.5", path])
            .status
            .code(),
        Some(2)
    );
}

/// A one-thread spin loop that needs four iterations for its condition: settled only with an
/// unroll bound of at least 3 (the default is 2).
const NEEDS_UNROLL_3: &str = "PTX spin\n(* options: --unroll 3 *)\n{ f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n mov r2, 0 | st.relaxed.gpu f, 1 ;\n L: add r2, r2, 1 | ;\n ld.relaxed.gpu r0, f | ;\n beq r0, 0, L | ;\nexists (P0:r2 == 4)\n";

#[test]
fn file_options_apply_unless_the_command_line_gives_the_same_option() {
    let dir = scratch("file-options");
    let file = dir.join("spin.litmus");
    std::fs::write(&file, NEEDS_UNROLL_3).unwrap();
    let f = file.to_str().unwrap();
    let out = scopecheck(&["check", "--json", f]);
    assert_eq!(out.status.code(), Some(0));
    let line = &stdout_lines(&out)[0];
    assert_eq!(line["result"], "Ok", "{line}");
    assert_eq!(line["file_options"], serde_json::json!(["--unroll 3"]));
    assert_eq!(line["file_options_overridden"], serde_json::json!([]));
    // The command line's --unroll wins: with 2 the fourth iteration is cut.
    let out = scopecheck(&["check", "--json", "--unroll", "2", f]);
    let line = &stdout_lines(&out)[0];
    assert_eq!(line["result"], "Unknown", "{line}");
    assert_eq!(line["file_options"], serde_json::json!([]));
    assert_eq!(
        line["file_options_overridden"],
        serde_json::json!(["--unroll 3"])
    );
    let text = scopecheck(&["check", f]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Options spin --unroll 3 (from the file)"),
        "{text}"
    );
    // A file without option comments gets empty fields.
    std::fs::write(
        &file,
        NEEDS_UNROLL_3.replace("(* options: --unroll 3 *)", ""),
    )
    .unwrap();
    let line = &stdout_lines(&scopecheck(&["check", "--json", f]))[0];
    assert_eq!(line["result"], "Unknown", "{line}");
    assert_eq!(line["file_options"], serde_json::json!([]));
}

#[test]
fn bad_file_options_are_errors_with_their_position() {
    let dir = scratch("bad-file-options");
    let file = dir.join("bad.litmus");
    for (options, column, needle) in [
        ("--unroll 3 --json", 24, "cannot be set by a file"),
        ("--colour blue", 13, "unknown option `--colour`"),
        ("--unroll many", 22, "invalid value 'many'"),
        ("--model x86", 21, "invalid value 'x86'"),
    ] {
        std::fs::write(
            &file,
            format!("PTX t\n(* options: {options} *)\nP0 ;\nexists true\n"),
        )
        .unwrap();
        let out = scopecheck(&["check", "--json", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{options}");
        let line = &stdout_lines(&out)[0];
        assert_eq!(
            (line["line"].as_u64(), line["column"].as_u64()),
            (Some(2), Some(column)),
            "{line}"
        );
        assert!(
            line["error"].as_str().unwrap().contains(needle),
            "{options}: {line}"
        );
    }
}
