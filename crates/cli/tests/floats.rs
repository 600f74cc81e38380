//! Float and double values in both views of a `.cu` file (issue 33, deliverables 3 and 5):
//! tests/floats/, each file with its expected verdict reasoned beside it. `--model both`
//! checks the language-level view (scoped C11) and the PTX view (NVRTC's code, PTX model),
//! and says whether they disagree. Needs NVRTC, as tests/nvrtc_view.rs does.

use std::path::Path;
use std::process::Command;

fn check(file: &str) -> (i32, serde_json::Value, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/floats");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .current_dir(&root)
        .args(["check", "--model", "both", "--json", file])
        .output()
        .expect("run scopecheck");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{file}: {e}: {stdout} {stderr}"));
    (out.status.code().unwrap_or(-1), v, stderr)
}

/// The verdicts of both views, in order src11, ptx, with no disagreement between them.
fn both_agree(file: &str) -> Vec<serde_json::Value> {
    let (_, v, err) = check(file);
    let verdicts = v["verdicts"].as_array().cloned().unwrap_or_default();
    let models: Vec<&str> = verdicts
        .iter()
        .filter_map(|x| x["model"].as_str())
        .collect();
    assert_eq!(models, ["src11", "ptx"], "{file}: {v} {err}");
    assert_eq!(v["disagreements"], serde_json::json!([]), "{file}: {v}");
    verdicts
}

/// The values location `loc` ends with, over the final states.
fn finals(verdict: &serde_json::Value, loc: &str) -> Vec<f64> {
    let mut out: Vec<f64> = verdict["states"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["values"][loc].as_f64())
        .collect();
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out.dedup();
    out
}

/// Two threads `atomicAdd(d, 0.5f)`: 0.5 + 0.5 is exactly 1.0 in binary32, in either order,
/// so the host's `*d == 1.0f` holds in every execution, in both views (before, 0.5f was read
/// as the integer 0 with a warning and both views answered No).
#[test]
fn two_halves_make_one_in_both_views() {
    for v in both_agree("half-sum.cu") {
        assert_eq!(v["result"], "Ok", "{v}");
        assert_eq!(finals(&v, "d"), [1.0], "{v}");
    }
}

/// Three atomic adds of 1e8f, 1.0f and -1e8f: 1e8 + 1 rounds back to 1e8 (the floats there
/// are 8 apart) and -1e8 + 1 to -1e8, so the 1 survives only when it comes last, after the
/// two big ones cancelled: the final value is 0.0 in four orders and 1.0 in two, both
/// reachable in both views, and the assertion that it is one of them holds.
#[test]
fn the_order_of_float_atomic_adds_decides_the_sum() {
    for v in both_agree("float-order.cu") {
        assert_eq!(v["result"], "Ok", "{v}");
        assert_eq!(finals(&v, "d"), [0.0, 1.0], "{v}");
        assert_eq!(v["executions"], 6, "{v}");
    }
}

/// 0.0f / 0.0f is NaN: `==` false, `!=` true, `<` false, `isnan` true (IEEE: NaN is
/// unordered with everything, itself included).
#[test]
fn nan_is_unordered_in_both_views() {
    for v in both_agree("nan-compare.cu") {
        assert_eq!(v["result"], "Ok", "{v}");
    }
}

/// Three `atomicAdd(double*, 0.1)`: every order computes (0.1 + 0.1) + 0.1, which rounds to
/// 0.30000000000000004, not to the double nearest 0.3.
#[test]
fn double_atomics_round_as_doubles() {
    for v in both_agree("double-atomics.cu") {
        assert_eq!(v["result"], "Ok", "{v}");
        assert_eq!(finals(&v, "d"), [0.300_000_000_000_000_04], "{v}");
    }
}

/// C's truncation, the conversion intrinsics' rounding modes (-2.5: rd -3, rn -2), int to
/// float to nearest even and up (2^24 + 1 has no float), float to double exactly: the same
/// values in both views (PTX's `cvt.rzi`, `cvt.rmi`, `cvt.rn`, `cvt.rp`, `cvt.f64.f32`).
#[test]
fn conversions_round_in_every_mode() {
    for v in both_agree("conversions.cu") {
        assert_eq!(v["result"], "Ok", "{v}");
        assert_eq!(finals(&v, "g[1]"), [16_777_218.0], "{v}");
    }
}

/// A device `assert` that an unordered read sees the writer's flag fails in the execution
/// where the read comes first: No in both views (in the PTX view through NVRTC's
/// `__assertfail`), with `printf` ignored.
#[test]
fn a_failed_device_assert_is_a_failed_requirement_in_both_views() {
    let (_, v, _) = check("device-assert.cu");
    let verdicts = v["verdicts"].as_array().cloned().unwrap_or_default();
    assert_eq!(verdicts.len(), 2, "{v}");
    for x in &verdicts {
        assert_eq!(x["result"], "No", "{x}");
        assert_eq!(
            (x["positive"].as_u64(), x["negative"].as_u64()),
            (Some(1), Some(1)),
            "{x}"
        );
    }
    assert_eq!(v["disagreements"], serde_json::json!([]), "{v}");
    assert!(
        v["warnings"].to_string().contains("printf is ignored"),
        "{v}"
    );
}

/// `__trap()` on thread 1 aborts the kernel: a fault reported at its line (2).
#[test]
fn trap_is_a_fault_at_its_line() {
    let (code, v, _) = check("trap.cu");
    assert_ne!(code, 0);
    assert_eq!(v["line"], 2, "{v}");
    assert!(v["error"].as_str().unwrap_or("").contains("trap"), "{v}");
}
