//! Deep programs through the binary (issue 31): executions of thousands of events once overflowed
//! the explorer's call stack (SIGABRT, and every later file's result lost with it). Each must end
//! in a verdict, or, where a bound cuts the search, in an honest Unknown that says why; never a
//! crash. Exact verdicts of the smaller cases are in
//! crates/model/tests/deep_programs.rs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn scratch(name: &str, source: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deep_programs");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, source).unwrap();
    file
}

/// Checks `file` with `args`: the JSON line, the exit status and the wall time.
fn check(file: &Path, args: &[&str]) -> (serde_json::Value, Option<i32>, Duration) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .arg("check")
        .arg("--json")
        .args(args)
        .arg(file)
        .output()
        .expect("run scopecheck");
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().next().unwrap_or_else(|| {
        panic!(
            "no JSON for {} (status {:?}): {}",
            file.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let v = serde_json::from_str(line).expect("JSON");
    (v, out.status.code(), took)
}

/// The run ended in a verdict and no crash: either the whole search (`complete`, and then
/// `settled` must hold of the JSON line) or an honest Unknown that names the bound that cut it.
/// How closely the run keeps to `--timeout` is tests/bounds.rs' business; the limit here only
/// catches a run that does not end.
fn assert_verdict(
    v: &serde_json::Value,
    code: Option<i32>,
    took: Duration,
    settled: &dyn Fn(&serde_json::Value) -> bool,
) {
    assert!(code.is_some(), "killed by a signal");
    if v["complete"] == true {
        assert!(settled(v), "{v}");
    } else {
        assert_eq!(v["result"], "Unknown", "{v}");
        let why = v["incomplete_reason"].as_str().unwrap_or_default();
        assert!(why.contains("--timeout") || why.contains("memory"), "{why}");
    }
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

/// 10,000 stores in one PTX thread: one execution, whose final value is the last store's
/// (coherence follows program order at one location): `forall (x == 10000)` holds, if the
/// search gets that far within the bound.
#[test]
fn ten_thousand_stores_in_one_thread_end_in_a_verdict() {
    let body: String = (1..=10_000)
        .map(|i| format!(" st.relaxed.gpu x, {i} ;\n"))
        .collect();
    let src = format!("PTX Stores10k\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{body}forall (x == 10000)\n");
    let file = scratch("stores10k.litmus", &src);
    let (v, code, took) = check(&file, &["--timeout", "2s"]);
    assert_verdict(&v, code, took, &|v| {
        v["result"] == "Ok" && v["executions"] == 1
    });
}

/// 10,000 `atomicAdd`s on one word in one C thread (the revisiting search: each RMW a read and
/// a write), likewise.
#[test]
fn ten_thousand_rmws_on_one_word_end_in_a_verdict() {
    let body: String = (0..10_000).map(|_| "  atomicAdd(x, 1);\n").collect();
    let src = format!(
        "CUDA Rmw10k\n{{ int x = 0; }}\n\nP0@block 0, gpu 0 (int* x) {{\n{body}}}\n\nforall (x=10000)\n"
    );
    let file = scratch("rmw10k.litmus", &src);
    let (v, code, took) = check(&file, &["--timeout", "2s"]);
    // One execution, the adds in program order: x ends at 10,000.
    assert_verdict(&v, code, took, &|v| {
        v["result"] == "Ok" && v["executions"] == 1
    });
}

/// examples/cuda/hh-checked-pipeline.cu with 24 items instead of 4: the producer and consumer
/// blocks' loops unroll into long paths. The example's own reasoning holds for any N (each
/// item is published with release and read after an acquire of its flag), so the verdict is
/// the example's: Ok, complete.
#[test]
fn checked_pipeline_of_24_items_is_ok() {
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda/hh-checked-pipeline.cu");
    let src = std::fs::read_to_string(example).unwrap();
    assert!(
        src.contains("#define N 4\n"),
        "the example changed: update this test"
    );
    let file = scratch(
        "hh-checked-pipeline-24.cu",
        &src.replace("#define N 4\n", "#define N 24\n"),
    );
    let (v, code, _) = check(&file, &[]);
    assert_eq!(v["result"], "Ok", "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(code, Some(0), "{v}");
}
