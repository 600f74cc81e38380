//! A fault in one file never loses another's result (issue 31, deliverable 2): a panic while
//! checking or reporting one file becomes that file's error (an error line, an `input-error`
//! SARIF result, a diagnostic on stderr) and every other file is still checked and reported.
//! The faults are injected with `SCOPECHECK_INJECT_FAULT=PART[@report]`, which makes the binary
//! panic on the files whose name contains PART.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn scopecheck(fault: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .env("SCOPECHECK_INJECT_FAULT", fault)
        .output()
        .expect("run scopecheck")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

/// Three files of three kinds; the fault goes into the second (a `.cu` file).
fn three() -> [String; 3] {
    [
        repo("examples/ptx/MP+fence.sc.cta.litmus"),
        repo("examples/cuda/device-counter.cu"),
        repo("tests/litmus/ptx/2+2W+weak.litmus"),
    ]
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

#[test]
fn a_panic_in_one_file_is_its_error_line_and_the_others_report() {
    let files = three();
    for (fault, jobs) in [
        ("device-counter.cu", "1"),
        ("device-counter.cu", "3"),
        ("device-counter.cu@report", "2"),
    ] {
        let mut args = vec!["check", "--json", "--jobs", jobs];
        args.extend(files.iter().map(String::as_str));
        let out = scopecheck(fault, &args);
        // A file not checked: exit 1, as for any file that could not be checked.
        assert_eq!(out.status.code(), Some(1), "{fault}: {out:?}");
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 3, "{fault}: one line per file: {out:?}");
        assert_eq!(lines[0]["name"], "MP+fence.sc.cta", "{fault}");
        assert_eq!(lines[2]["name"], "2+2W+weak", "{fault}");
        // The faulty file's line is an error line: file, message, no position.
        assert_eq!(lines[1]["file"], files[1].as_str());
        assert!(lines[1].get("name").is_none());
        let error = lines[1]["error"].as_str().unwrap();
        assert!(
            error.starts_with("internal error: scopecheck panicked while checking this test")
                && error.contains("fault injected by SCOPECHECK_INJECT_FAULT"),
            "{error}"
        );
        assert_eq!(
            (lines[1]["line"].as_u64(), lines[1]["column"].as_u64()),
            (Some(0), Some(0))
        );
    }
    // Without the fault the same run checks all three: the fault, not the files, made the error.
    let mut args = vec!["check", "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = scopecheck("", &args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(json_lines(&out).iter().all(|l| l.get("name").is_some()));
}

#[test]
fn in_text_mode_the_panic_is_a_diagnostic_and_the_others_report() {
    let files = three();
    let mut args = vec!["check"];
    args.extend(files.iter().map(String::as_str));
    let out = scopecheck("device-counter.cu", &args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Test MP+fence.sc.cta"), "{stdout}");
    assert!(stdout.contains("Test 2+2W+weak"), "{stdout}");
    assert!(!stdout.contains("device-counter"), "{stdout}");
    // miette wraps the message to the terminal's width: compare the words.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let words: Vec<&str> = stderr
        .split_whitespace()
        .filter(|w| !matches!(*w, "│" | "×"))
        .collect();
    let words = words.join(" ");
    assert!(
        words.contains(&format!(
            "{}: internal error: scopecheck panicked",
            files[1]
        )),
        "{stderr}"
    );
    assert!(words.contains("this is a bug in scopecheck"), "{stderr}");
}

#[test]
fn the_sarif_log_of_a_run_with_a_panic_is_whole() {
    let dir = scratch("faults-sarif");
    let log = dir.join("run.sarif");
    let files = three();
    let mut args = vec!["check", "--sarif", log.to_str().unwrap()];
    args.extend(files.iter().map(String::as_str));
    let out = scopecheck("device-counter.cu", &args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    // The faulty file has its input-error; the others their own results (2+2W+weak's
    // refuted `~exists` is a requirement-fails error).
    let rule_of = |file: &str| -> Vec<String> {
        results
            .iter()
            .filter(|r| {
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .is_some_and(|u| u.ends_with(file))
            })
            .map(|r| r["ruleId"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(rule_of("device-counter.cu"), ["input-error"]);
    assert!(
        rule_of("2+2W+weak.litmus").contains(&"requirement-fails".to_string()),
        "{results:?}"
    );
}

#[test]
fn other_subcommands_survive_a_panic_in_one_file() {
    // `tune` reads and checks each file under the same guard.
    let out = scopecheck(
        "device-counter.cu",
        &[
            "tune",
            "--json",
            &repo("examples/cuda/device-counter.cu"),
            &repo("examples/tune/device-counter-seqcst.cu"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "{out:?}");
    assert!(lines[0]["error"]
        .as_str()
        .is_some_and(|e| e.contains("internal error")));
    assert_eq!(lines[1]["status"], "tuned", "{}", lines[1]);
}
