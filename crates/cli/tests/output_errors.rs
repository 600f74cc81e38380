//! Output errors are errors (issue 31): a report that could not be written to stdout, a
//! picture `--graph` could not write and a SARIF log that could not be made each fail the run
//! with the reason; `--graph` and `--sarif` misused are the same usage error; `run --json`
//! gives every file a line whatever stops it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scopecheck"));
    c.args(args);
    c
}

fn scopecheck(args: &[&str]) -> Output {
    command(args).output().expect("run scopecheck")
}

/// A fresh scratch directory for one test.
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

/// A device every write to fails with "No space left on device".
fn dev_full() -> Stdio {
    Stdio::from(
        File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full exists on Linux"),
    )
}

const MP: &str = "examples/ptx/MP+fence.sc.cta.litmus";

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_report_that_cannot_be_written_to_stdout_is_exit_1() {
    // Before: `check --json > /dev/full` exited 0 having written nothing.
    for mode in [&["check", "--json"][..], &["check"][..]] {
        let mut args = mode.to_vec();
        let mp = repo(MP);
        args.push(&mp);
        let out = command(&args)
            .stdout(dev_full())
            .output()
            .expect("run scopecheck");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let err = stderr(&out);
        assert!(
            err.contains("error: cannot write to standard output")
                && err.contains("No space left on device"),
            "{args:?}: {err}"
        );
    }
    // A lost output wins over findings, as an unchecked file does: seed1-nofence.cu races
    // (3 with `--fail-on races` when stdout is written), and its report was lost.
    let racy = repo("examples/cuda/seed1-nofence.cu");
    let out = scopecheck(&["check", "--json", "--fail-on", "races", &racy]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let out = command(&["check", "--json", "--fail-on", "races", &racy])
        .stdout(dev_full())
        .output()
        .expect("run scopecheck");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn other_subcommands_check_their_writes_too() {
    // `bench` printed with println!, which panics (exit 101) on a failed write.
    let out = command(&["bench", "--iters", "1", &repo(MP)])
        .stdout(dev_full())
        .output()
        .expect("run scopecheck");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr(&out).contains("cannot write to standard output"),
        "{out:?}"
    );
    // `tune --json`: the same.
    let out = command(&[
        "tune",
        "--json",
        &repo("examples/tune/device-counter-seqcst.cu"),
    ])
    .stdout(dev_full())
    .output()
    .expect("run scopecheck");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn a_stderr_that_cannot_be_written_is_no_panic() {
    // eprintln! panics when stderr fails; the failure of a missing file still exits 1 (not
    // 101), and the good file's JSON line is still on stdout.
    let dir = scratch("stderr-full");
    let missing = dir.join("missing.litmus");
    let out = command(&["check", &repo(MP), missing.to_str().unwrap()])
        .stderr(dev_full())
        .output()
        .expect("run scopecheck");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("MP+fence.sc.cta"),
        "{out:?}"
    );
}

#[test]
fn graph_and_sarif_misuse_are_both_usage_errors() {
    let dir = scratch("output-misuse");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let sub = dir.join("a-file/sub");
    // Before: `--graph FILE` exited 1 and `--sarif DIR` 2. Now both are bad usage, found
    // before anything is checked: status 2, nothing on stdout, the reason on stderr.
    for (args, reason) in [
        (
            vec!["check", "--graph", file.to_str().unwrap()],
            "cannot create the --graph directory",
        ),
        (
            vec!["check", "--graph", sub.to_str().unwrap()],
            "cannot create the --graph directory",
        ),
        (
            vec!["check", "--sarif", dir.to_str().unwrap()],
            "it is a directory",
        ),
        (
            vec!["check", "--sarif", sub.to_str().unwrap()],
            "cannot write the SARIF log",
        ),
    ] {
        let mut args = args.clone();
        let mp = repo(MP);
        args.push(&mp);
        let out = scopecheck(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
        assert!(stderr(&out).contains(reason), "{args:?}: {}", stderr(&out));
    }
    // The probe leaves nothing behind in a directory that works.
    let graphs = dir.join("graphs");
    let out = scopecheck(&["check", "--graph", graphs.to_str().unwrap(), &repo(MP)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let names: Vec<String> = std::fs::read_dir(&graphs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n.starts_with("MP+fence.sc.cta.ptx.")),
        "{names:?}"
    );
}

#[test]
fn a_picture_that_cannot_be_written_is_in_the_json_line() {
    let dir = scratch("graphs-error-json");
    // A directory where the witness's DOT file should go: writing it fails.
    let blocked = dir.join("MP+fence.sc.cta.ptx.witness.dot");
    std::fs::create_dir_all(&blocked).unwrap();
    let out = scopecheck(&[
        "check",
        "--json",
        "--graph",
        dir.to_str().unwrap(),
        &repo(MP),
        &repo("tests/litmus/ptx/2+2W+weak.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 2, "{out:?}");
    // The verdict is still reported; the line says which picture failed and why.
    assert_eq!(lines[0]["result"], "Ok");
    let why = lines[0]["graphs_error"].as_str().expect("graphs_error");
    assert!(
        why.contains(&format!("cannot write {}", blocked.display())),
        "{why}"
    );
    assert_eq!(lines[0]["graphs"], Value::Array(Vec::new()));
    // The other file's pictures were written: its error is null. (2+2W+weak's `~exists` is
    // refuted: a witness and a counterexample, each as .dot and .svg.)
    assert_eq!(lines[1]["graphs_error"], Value::Null);
    assert_eq!(lines[1]["graphs"].as_array().map(Vec::len), Some(4));
    // JSON mode keeps stderr for what stops a file: the line carries it.
    assert!(!stderr(&out).contains("cannot write"), "{}", stderr(&out));
}

#[test]
fn a_sarif_log_is_whole_or_absent() {
    let dir = scratch("sarif-whole");
    let log = dir.join("run.sarif");
    std::fs::write(&log, "an old log").unwrap();
    // The log is made beside the path and renamed onto it once whole (a run that dies
    // leaves none: the old one is removed at the start). After a run: the new log, whole,
    // and nothing else.
    let out = scopecheck(&["check", "--sarif", log.to_str().unwrap(), &repo(MP)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let v: Value = serde_json::from_str(&text).expect("a whole log");
    assert_eq!(v["version"], "2.1.0");
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["run.sarif"]);
}

#[test]
fn run_json_gives_every_file_a_line_whatever_stops_it() {
    let dir = scratch("run-json");
    let bad = dir.join("bad.litmus");
    std::fs::write(
        &bad,
        "PTX bad\n{ x=0; }\n P0 ;\n ld.foo r0, x ;\nexists (x == 0)\n",
    )
    .unwrap();
    let missing = dir.join("missing.litmus");
    let out = scopecheck(&[
        "run",
        "--json",
        "--time",
        "20ms",
        "--instances",
        "1000",
        &repo(MP),
        bad.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    // One line per file, in order, whatever the reason: before, no CUDA driver printed no
    // JSON at all.
    assert_eq!(lines.len(), 3, "{out:?}");
    let files: Vec<&str> = lines.iter().map(|l| l["file"].as_str().unwrap()).collect();
    assert_eq!(
        files,
        [
            repo(MP).as_str(),
            bad.to_str().unwrap(),
            missing.to_str().unwrap()
        ]
    );
    // The bad and the missing file fail for their own reasons, GPU or not.
    assert!(lines[1]["error"].is_string(), "{}", lines[1]);
    assert!(
        !lines[1]["error"].as_str().unwrap().contains("GPU"),
        "{}",
        lines[1]
    );
    assert!(lines[2]["error"].as_str().unwrap().contains("cannot read"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    match lines[0]["error"].as_str() {
        // No GPU here (CI): the good file's line says why it did not run.
        Some(why) => assert!(why.contains("cannot run on the GPU"), "{why}"),
        // A GPU: the good file ran and has its verdict.
        None => assert_eq!(lines[0]["name"], "MP+fence.sc.cta"),
    }
}
