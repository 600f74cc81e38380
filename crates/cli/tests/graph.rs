//! `scopecheck check --graph DIR` end to end: which files it writes, what the reports say of
//! them, and how it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scopecheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("run scopecheck")
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

/// The names of the files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn writes_a_witness_per_test_and_a_counterexample_for_a_wrong_one() {
    let dir = scratch("graph-files").join("new/sub");
    let out = scopecheck(&[
        "check",
        "--graph",
        dir.to_str().unwrap(),
        &repo("examples/ptx/MP+fence.sc.cta.litmus"),
        &repo("examples/c/MP+rel.dev+acq.wg.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // The directory is created. MP+fence.sc.cta is right (its `exists` holds): a witness
    // only. MP+rel.dev+acq.wg races (a heterogeneous race under scoped C11): a witness and a
    // counterexample, each as DOT and SVG.
    assert_eq!(
        files(&dir),
        [
            "MP+fence.sc.cta.ptx.witness.dot",
            "MP+fence.sc.cta.ptx.witness.svg",
            "MP+rel.dev+acq.wg.src11.counterexample.dot",
            "MP+rel.dev+acq.wg.src11.counterexample.svg",
            "MP+rel.dev+acq.wg.src11.witness.dot",
            "MP+rel.dev+acq.wg.src11.witness.svg",
        ]
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let d = dir.display();
    // One line per test says which files were written.
    assert!(stdout.contains(&format!(
        "Graphs MP+fence.sc.cta: {d}/MP+fence.sc.cta.ptx.witness.dot {d}/MP+fence.sc.cta.ptx.witness.svg\n"
    )));
    let counter =
        std::fs::read_to_string(dir.join("MP+rel.dev+acq.wg.src11.counterexample.dot")).unwrap();
    // The counterexample is the race graph: its title names the race.
    assert!(counter.starts_with("digraph \"MP+rel.dev+acq.wg\" {"));
    assert!(counter.contains("heterogeneous race on flag"));
}

#[test]
fn json_lists_the_graphs_written() {
    let dir = scratch("graph-json");
    let out = scopecheck(&[
        "check",
        "--json",
        "--graph",
        dir.to_str().unwrap(),
        &repo("tests/litmus/c/MP+barrier.wg.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    let d = dir.display();
    // A right program (the barrier orders the plain accesses): its witness alone.
    assert_eq!(
        line["graphs"],
        serde_json::json!([
            format!("{d}/MP+barrier.wg.src11.witness.dot"),
            format!("{d}/MP+barrier.wg.src11.witness.svg"),
        ])
    );
}

#[test]
fn inputs_with_the_same_stem_get_distinct_names() {
    let dir = scratch("graph-stems");
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let source = std::fs::read_to_string(repo("examples/ptx/MP+fence.sc.cta.litmus")).unwrap();
    std::fs::write(a.join("t.litmus"), &source).unwrap();
    std::fs::write(b.join("t.litmus"), &source).unwrap();
    let out_dir = dir.join("out");
    let out = scopecheck(&[
        "check",
        "--graph",
        out_dir.to_str().unwrap(),
        a.join("t.litmus").to_str().unwrap(),
        b.join("t.litmus").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // The second `t` is `t-2`, in input order.
    assert_eq!(
        files(&out_dir),
        [
            "t-2.ptx.witness.dot",
            "t-2.ptx.witness.svg",
            "t.ptx.witness.dot",
            "t.ptx.witness.svg",
        ]
    );
}

#[test]
fn a_graph_directory_that_cannot_be_made_is_an_error() {
    let dir = scratch("graph-bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let out = scopecheck(&[
        "check",
        "--graph",
        file.to_str().unwrap(),
        &repo("examples/ptx/MP+fence.sc.cta.litmus"),
    ]);
    // A file where the directory should be: bad usage (2, as a --sarif path that cannot be
    // made), the reason on stderr, nothing checked.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "error: cannot create the --graph directory {}",
            file.display()
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_picture_that_cannot_be_written_is_an_error() {
    let dir = scratch("graph-unwritable");
    // A directory where the witness's DOT file should go: writing it fails.
    std::fs::create_dir_all(dir.join("MP+fence.sc.cta.ptx.witness.dot")).unwrap();
    let out = scopecheck(&[
        "check",
        "--graph",
        dir.to_str().unwrap(),
        &repo("examples/ptx/MP+fence.sc.cta.litmus"),
    ]);
    // Exit 1 (a file's report could not be completed), the path and the reason on stderr.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "cannot write {}",
            dir.join("MP+fence.sc.cta.ptx.witness.dot").display()
        )),
        "{stderr}"
    );
    // The verdict itself is still printed, without a Graphs line.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Test MP+fence.sc.cta Allowed"));
    assert!(!stdout.contains("Graphs "));
}
