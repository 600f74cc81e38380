//! The hole search explores independent subtrees on rayon's threads (docs/explore.md,
//! "Parallel subtrees"). Every execution is handed on with its place in the sequential search
//! order, and the report keeps the least-placed witness and pictures, so a run on four
//! threads must report exactly what a run on one does: states, counts, witnesses, races,
//! hangs, faults and pictures. Symmetry is off so that the PTX tests take the forking search
//! (a search with interchangeable threads runs sequentially).

use std::path::Path;
use std::process::Command;

/// The JSON reports of `scopecheck check` on `paths` with `threads` rayon threads, without
/// the timing fields and with the pictures' directory named `GRAPHS`, and the pictures
/// `--graph` wrote, by file name.
fn run(threads: &str, paths: &[&str], graphs: &Path) -> (Vec<String>, Vec<(String, String)>) {
    let _ = std::fs::remove_dir_all(graphs);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .env("RAYON_NUM_THREADS", threads)
        .args(["check", "--json", "--symmetry", "off", "--graph"])
        .arg(graphs)
        .args(paths)
        .output()
        .expect("run scopecheck");
    let reports = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("a JSON report");
            strip_times(&mut v);
            // The pictures' paths name the directory each run wrote to.
            v.to_string()
                .replace(&graphs.to_string_lossy().into_owned(), "GRAPHS")
        })
        .collect();
    let mut pictures: Vec<(String, String)> = std::fs::read_dir(graphs)
        .map(|d| {
            d.map(|e| {
                let e = e.expect("a picture");
                let text = std::fs::read_to_string(e.path()).expect("a picture");
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect()
        })
        .unwrap_or_default();
    pictures.sort();
    (reports, pictures)
}

fn strip_times(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !k.contains("time"));
            m.values_mut().for_each(strip_times);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_times),
        _ => {}
    }
}

#[test]
fn four_threads_report_what_one_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let paths: Vec<String> = [
        "tests/litmus/ptx",
        "tests/bench/ptx/TicketLock+N4.litmus",
        "tests/bench/ptx/TtasLock+N3.litmus",
        "tests/bench/ptx/CasLock+2iter+N3.litmus",
    ]
    .iter()
    .map(|p| root.join(p).to_string_lossy().into_owned())
    .collect();
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let one = run("1", &paths, &tmp.join("parallel-1"));
    let four = run("4", &paths, &tmp.join("parallel-4"));
    assert!(one.0.len() > 100, "the PTX corpus was checked");
    assert!(!one.1.is_empty(), "pictures were written");
    assert_eq!(one.0.len(), four.0.len());
    for (a, b) in one.0.iter().zip(&four.0) {
        assert_eq!(a, b);
    }
    assert_eq!(one.1, four.1);
}

/// Alone in its run, so that its subtrees are spread over the threads: many of them hold
/// executions that break the condition, each with another witness, and whichever a worker
/// finds first must not be the one reported.
#[test]
fn a_parallel_witness_is_the_sequential_one() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parallel-lost-updates.litmus");
    let file = file.to_string_lossy().into_owned();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let one = run("1", &[&file], &tmp.join("lost-1"));
    assert!(one.0[0].contains("\"result\":\"No\""), "{}", one.0[0]);
    for k in 0..3 {
        let four = run("4", &[&file], &tmp.join(format!("lost-4-{k}")));
        assert_eq!(one, four);
    }
}
