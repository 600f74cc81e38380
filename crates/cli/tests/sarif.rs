//! `check --sarif`: the binary writes one SARIF 2.1.0 log for the whole run, valid against the
//! OASIS schema, next to its usual reports, with the usual exit statuses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

/// Runs scopecheck in `dir`, so that file names are relative to it.
fn scopecheck_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run scopecheck")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Panics with every violation of the SARIF 2.1.0 schema.
fn assert_valid(log: &Value) {
    let text = include_str!("../../report/tests/data/sarif-schema-2.1.0.json");
    let mut schema: Value = serde_json::from_str(text).unwrap();
    // As in crates/report/tests/sarif.rs: the `language` patterns' lone `]` escaped, so that
    // the schema passes its own meta-schema's `regex` format.
    for def in ["run", "toolComponent"] {
        let pattern = &mut schema["definitions"][def]["properties"]["language"]["pattern"];
        assert_eq!(pattern, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$");
        *pattern = json!("^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$");
    }
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Each result as `(ruleId, level, uri, startLine)` of its first location.
fn results(log: &Value) -> Vec<(String, String, String, u64)> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let p = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["level"].as_str().unwrap().to_string(),
                p["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                p["region"]["startLine"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn s(x: &str) -> String {
    x.to_string()
}

/// Message passing with a relaxed flag and a plain payload: a data race under scoped C11.
const RACY: &str = "OPENCL MP+rlx
{ data=0; flag=0; }

P0@wg 0, dev 0 (global int* data, global atomic_int* flag) {
  *data = 1;
  atomic_store_explicit(flag, 1, memory_order_relaxed, memory_scope_device);
}

P1@wg 1, dev 0 (global int* data, global atomic_int* flag) {
  int r0 = atomic_load_explicit(flag, memory_order_relaxed, memory_scope_device);
  int r1 = -1;
  if (r0 == 1) {
    r1 = *data;
  }
}

exists (1:r0=1 /\\ 1:r1=0)
";

/// Release/acquire at gpu scope, every access morally strong: nothing to report.
const CLEAN: &str = "PTX MP+rel+acq
{ data=0; flag=0; }
 P0@cta 0,gpu 0         | P1@cta 1,gpu 0          ;
 st.relaxed.gpu data, 1 | ld.acquire.gpu r0, flag ;
 st.release.gpu flag, 1 | ld.relaxed.gpu r1, data ;
~exists (P1:r0 == 1 /\\ P1:r1 == 0)
";

/// `ld.foo` is no instruction: a parse error at line 4.
const BAD: &str = "PTX bad\n{ x=0; }\n P0 ;\n ld.foo r0, x ;\nexists (x == 0)\n";

#[test]
fn one_log_for_every_file_in_input_order() {
    let dir = scratch("sarif-run");
    std::fs::create_dir(dir.join("t")).unwrap();
    std::fs::write(dir.join("t/a-racy.litmus"), RACY).unwrap();
    std::fs::write(dir.join("t/b-bad.litmus"), BAD).unwrap();
    std::fs::write(dir.join("t/c-clean.litmus"), CLEAN).unwrap();
    let out = scopecheck_in(
        &dir,
        &["check", "--sarif", "out.sarif", "--fail-on", "races", "t"],
    );
    // The unparsable file wins over the race (status 1), as without --sarif.
    assert_eq!(out.status.code(), Some(1));
    // The text reports still go to stdout: the two files checked.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Test MP+rlx Allowed"), "{stdout}");
    assert!(stdout.contains("Test MP+rel+acq Required"), "{stdout}");
    let log: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("out.sarif")).unwrap())
        .expect("the log is JSON");
    assert_valid(&log);
    // In the directory's sorted order: the race (at P0's payload write, line 5), then the
    // parse error (line 4); the clean file adds nothing. Names are relative to the current
    // directory.
    assert_eq!(
        results(&log),
        [
            (s("data-race"), s("error"), s("t/a-racy.litmus"), 5),
            (s("input-error"), s("error"), s("t/b-bad.litmus"), 4),
        ]
    );
    let base = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        base.starts_with("file:///") && base.ends_with("/sarif-run/"),
        "{base}"
    );
    assert_eq!(
        log["runs"][0]["tool"]["driver"]["version"],
        env!("CARGO_PKG_VERSION")
    );
}

#[test]
fn a_clean_run_writes_an_empty_log() {
    let dir = scratch("sarif-clean");
    std::fs::write(dir.join("clean.litmus"), CLEAN).unwrap();
    let out = scopecheck_in(
        &dir,
        &[
            "check",
            "--json",
            "--sarif",
            "clean.sarif",
            "--fail-on",
            "all",
            "clean.litmus",
        ],
    );
    // Nothing found: status 0 even with --fail-on all, and the JSON line on stdout as usual.
    assert_eq!(out.status.code(), Some(0));
    let line: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(line["result"], "Ok");
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("clean.sarif")).unwrap()).unwrap();
    assert_valid(&log);
    assert_eq!(log["runs"][0]["results"], json!([]));
    assert_eq!(log["runs"][0]["tool"]["driver"]["rules"], json!([]));
}

#[test]
fn sarif_on_stdout_replaces_the_text_reports() {
    let dir = scratch("sarif-stdout");
    std::fs::write(dir.join("racy.litmus"), RACY).unwrap();
    let out = scopecheck_in(
        &dir,
        &["check", "--sarif", "-", "--fail-on", "races", "racy.litmus"],
    );
    // The race is a finding --fail-on names: status 3.
    assert_eq!(out.status.code(), Some(3));
    // Standard output is the log and nothing else.
    let log: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_valid(&log);
    assert_eq!(
        results(&log),
        [(s("data-race"), s("error"), s("racy.litmus"), 5)]
    );
    // The findings summary stays on stderr.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("finding: racy.litmus: races"), "{stderr}");
}

#[test]
fn sarif_usage_errors_exit_2() {
    let dir = scratch("sarif-usage");
    std::fs::write(dir.join("clean.litmus"), CLEAN).unwrap();
    // --json lines and the log cannot share stdout.
    let out = scopecheck_in(&dir, &["check", "--json", "--sarif", "-", "clean.litmus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("give --sarif a file name"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    // A log that cannot be created is refused before anything is checked.
    let out = scopecheck_in(
        &dir,
        &["check", "--sarif", "no/such/dir/x.sarif", "clean.litmus"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

/// A region as `(startLine, startColumn, endLine, endColumn)`.
fn region(location: &Value) -> (u64, u64, u64, u64) {
    let r = &location["physicalLocation"]["region"];
    let n = |k: &str| r[k].as_u64().unwrap();
    (
        n("startLine"),
        n("startColumn"),
        n("endLine"),
        n("endColumn"),
    )
}

#[test]
fn a_cuda_program_is_reported_on_its_own_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = scratch("sarif-cuda");
    let sarif = dir.join("cu.sarif");
    let out = scopecheck_in(
        &root,
        &[
            "check",
            "--sarif",
            sarif.to_str().unwrap(),
            "examples/cuda/seed1-nofence.cu",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_valid(&log);
    let file = "examples/cuda/seed1-nofence.cu";
    // Without the consumer's fence the harness's assert can fail, and the plain `payload`
    // accesses race (under scoped C11, the default for CUDA sources).
    assert_eq!(
        results(&log),
        [
            (s("requirement-fails"), s("error"), s(file), 26),
            (s("data-race"), s("error"), s(file), 14),
        ]
    );
    let r = &log["runs"][0]["results"];
    // The failing requirement is the assert (line 26, `assert(*out == 42.0f)` from column 5,
    // 21 characters); its first witness read is the consumer's flag load (line 13,
    // `atomicAdd(&flag, 0)` from column 12), its second the stale `payload` read (line 14).
    assert_eq!(region(&r[0]["locations"][0]), (26, 5, 26, 26));
    assert_eq!(region(&r[0]["relatedLocations"][0]), (13, 12, 13, 31));
    assert_eq!(region(&r[0]["relatedLocations"][1]), (14, 12, 14, 19));
    // The race: the consumer's read of `payload` (line 14 from column 12, 7 characters),
    // then the producer's write `payload = v` (line 7 from column 5, 11 characters).
    assert_eq!(region(&r[1]["locations"][0]), (14, 12, 14, 19));
    assert_eq!(region(&r[1]["relatedLocations"][0]), (7, 5, 7, 16));
    assert_eq!(r[1]["properties"]["models"], json!(["src11"]));
}
