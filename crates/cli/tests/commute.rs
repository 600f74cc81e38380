//! The commuting-atomics reduction (docs/explore.md, "Commuting atomics") on hand-written
//! tests (crates/cli/tests/commute/), each with its expected result derived beside it: the
//! shapes it collapses, with their counts, and the shapes where the order of the updates can
//! be seen and it must not apply, where `--commute off` (every order) must report the same.

use std::path::Path;
use std::process::Command;

/// `check --json --model M --commute C` on one file of tests/commute; its JSON line.
fn check(file: &str, model: &str, commute: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/commute")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", model, "--commute", commute])
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next().unwrap_or_else(|| {
        panic!(
            "{file}: no output; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}: not JSON: {line}: {e}"))
}

/// The final states, as their JSON values.
fn states(v: &serde_json::Value) -> Vec<String> {
    v["states"]
        .as_array()
        .expect("states")
        .iter()
        .map(|s| s["values"].to_string())
        .collect()
}

/// Asserts result, execution count and completeness, and returns the verdict.
fn expect(file: &str, model: &str, result: &str, executions: u128) -> serde_json::Value {
    let v = check(file, model, "on");
    assert_eq!(v["result"], result, "{file} ({model}): {v}");
    assert_eq!(v["complete"], true, "{file} ({model}): {v}");
    let n: u128 = match &v["executions"] {
        serde_json::Value::String(s) => s.parse().expect("a count"),
        n => n.as_u64().expect("a count").into(),
    };
    assert_eq!(n, executions, "{file} ({model})");
    v
}

/// Asserts that exploring every order reports what the reduction reports: result, states,
/// counts, races, hangs.
fn same_as_every_order(file: &str, model: &str) {
    let (one, every) = (check(file, model, "on"), check(file, model, "off"));
    for key in [
        "result",
        "states",
        "positive",
        "negative",
        "executions",
        "complete",
        "racy",
        "races",
        "hangs",
    ] {
        assert_eq!(one[key], every[key], "{file} ({model}): {key}");
    }
}

/// 4 threads x 10 counters, one relaxed add of each by each thread: (4!)^10 coherence orders,
/// each consistent (nothing but program order relates the adds), one final state (every
/// counter 4). The leaf's single coherence order is fixed by the explorer, so the model
/// rejects none (the symmetric search enumerated and rejected orders before).
#[test]
fn four_threads_ten_counters() {
    for model in ["src11", "ptx"] {
        let v = expect("Counters+4x10.litmus", model, "Ok", 24u128.pow(10));
        assert_eq!(v["rejected"], serde_json::json!({}), "{model}");
        let v = expect("Counters+4x10.cu", model, "Ok", 24u128.pow(10));
        assert_eq!(states(&v).len(), 1, "{model}");
    }
}

/// 8 threads, one counter: 8! orders of the adds. The `.cu` form adds a host store of 0 before
/// the launch and a host load after it (which reads the last add, 8, in every order).
#[test]
fn eight_threads_one_counter() {
    for model in ["src11", "ptx"] {
        let v = expect("Counters+8x1.litmus", model, "Ok", 40320);
        assert_eq!(v["rejected"], serde_json::json!({}), "{model}");
        expect("Counters+8x1.cu", model, "Ok", 40320);
    }
}

/// max of m with 1, 3, 2 and min of n with the same, one of each per thread: 3! orders of each
/// location, 36 executions, m = 3 and n = 0 in all. Same as every order explored.
#[test]
fn max_and_min_commute() {
    for model in ["src11", "ptx"] {
        expect("Max-counters.litmus", model, "Ok", 36);
        same_as_every_order("Max-counters.litmus", model);
    }
}

/// Each thread updates c, d, c. The 6 orders of c times 2 of d are 12, but under scoped C11
/// two close a `po ∪ rf` cycle (P1's last c read by P0's first while P0's d is read by P1's
/// d, and the mirror image): 10 executions. PTX has no such axiom (No-Thin-Air is about
/// dependencies, and the results are unused): 12. Under scoped C11 the reduction sees the
/// entanglement and counts the combinations of orders that keep `po ∪ rf` acyclic.
#[test]
fn entangled_counters_are_counted_jointly() {
    expect("Entangled.litmus", "src11", "Ok", 10);
    expect("Entangled.litmus", "ptx", "Ok", 12);
    for model in ["src11", "ptx"] {
        same_as_every_order("Entangled.litmus", model);
    }
}

/// Where the order of the updates can be seen, the reduction must not apply; every verdict is
/// that of the full search, and the expected states show what the order decides:
/// a load of the counter reads 0, 1 or 2 (2 orders x 3 writes = 6 executions); kept results
/// are (0, 1) or (1, 0); an add and an or do not commute (c starts at 1: 2 or 4); release/acquire adds and an acquire fence after a relaxed add synchronize only in
/// the order where the releasing thread comes first (P1 reads data 1 there, races otherwise);
/// CTA-scope adds from two CTAs can lose an update under PTX (c = 1 or 2); a kernel thread's
/// load of the counter sees 0, 1 or 2.
#[test]
fn observed_orders_are_explored_in_full() {
    let v = expect("Load-of-counter.litmus", "src11", "Ok", 6);
    assert_eq!(states(&v).len(), 3);
    let v = expect("Used-result.litmus", "src11", "Ok", 2);
    assert_eq!(states(&v).len(), 2);
    // 1 + 1 = 2 then | 2 = 2; 1 | 2 = 3 then + 1 = 4.
    let v = expect("Mixed-operations.litmus", "src11", "No", 2);
    assert_eq!(states(&v), vec![r#"{"c":2}"#, r#"{"c":4}"#]);
    for file in [
        "Fence-after-update.litmus",
        "Release-acquire-updates.litmus",
    ] {
        let v = expect(file, "src11", "Ok", 3);
        assert_eq!(v["racy"], true, "{file}");
        assert_eq!(states(&v).len(), 2, "{file}");
    }
    let v = expect("Cta-scope-updates.litmus", "ptx", "Ok", 3);
    assert_eq!(states(&v), vec![r#"{"c":1}"#, r#"{"c":2}"#]);
    let v = expect("Kernel-reads-counter.cu", "src11", "No", 6);
    assert_eq!(states(&v).len(), 3);
    for file in [
        "Load-of-counter.litmus",
        "Used-result.litmus",
        "Mixed-operations.litmus",
        "Fence-after-update.litmus",
        "Release-acquire-updates.litmus",
        "Cta-scope-updates.litmus",
        "Kernel-reads-counter.cu",
    ] {
        for model in ["src11", "ptx"] {
            same_as_every_order(file, model);
        }
    }
}
