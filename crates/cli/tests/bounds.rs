//! Issue 31: counts are exact, and every bound bounds. Each test runs the `scopecheck` binary
//! on a generated program whose count or cost is known by hand.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scopecheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("run scopecheck")
}

/// The one JSON verdict line `out` printed.
fn verdict(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "one verdict: {text}");
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("not JSON: {text}: {e}"))
}

/// Writes `source` to a fresh file named `name` in this test's scratch directory.
fn write(name: &str, source: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bounds");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, source).unwrap();
    path
}

/// Each thread in a cluster of its own on one GPU: threads are interchangeable only when
/// nothing else shares their cluster (docs/explore.md, "Symmetry").
fn own_cluster(t: usize) -> String {
    format!("cta {t},cluster {t},gpu 0")
}

/// A PTX litmus test: thread `t` runs `columns[t]` (one instruction per row), placed at
/// `place(t)`.
fn ptx_test(
    name: &str,
    init: &str,
    columns: &[Vec<String>],
    condition: &str,
    place: fn(usize) -> String,
) -> String {
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    let header: Vec<String> = (0..columns.len())
        .map(|t| format!("P{t}@{}", place(t)))
        .collect();
    let mut s = format!("PTX {name}\n{{ {init} }}\n {} ;\n", header.join(" | "));
    for r in 0..rows {
        let row: Vec<&str> = columns
            .iter()
            .map(|c| c.get(r).map_or("", String::as_str))
            .collect();
        s += &format!(" {} ;\n", row.join(" | "));
    }
    s + condition + "\n"
}

/// One store and 29 loads of its location, each in its own thread: each load reads the
/// initial 0 or the 1, independently of the others (one location, relaxed accesses, no other
/// constraint), so there are exactly 2^29 = 536870912 executions. The 29 loaders are
/// interchangeable: symmetry reduction explores 30 orbits (k loaders reading 1, of C(29, k)
/// executions each), whose sizes must add up to 2^29 exactly: 29! overflows 64 bits, and the
/// count was 300 before sizes were computed exactly. Every execution ends with x == 1, the
/// only write: all are positive.
#[test]
fn twenty_nine_interchangeable_loaders_have_two_to_the_29_executions() {
    let mut columns = vec![vec!["st.relaxed.gpu x, 1".to_string()]];
    for _ in 0..29 {
        columns.push(vec!["ld.relaxed.gpu r0, x".to_string()]);
    }
    let source = ptx_test(
        "store+29-loaders",
        "x=0;",
        &columns,
        "exists (x == 1)",
        own_cluster,
    );
    let path = write("store+29-loaders.litmus", &source);
    let out = scopecheck(&["check", "--json", path.to_str().unwrap()]);
    let v = verdict(&out);
    assert_eq!(v["symmetry_classes"], serde_json::json!([29]), "{v}");
    assert_eq!(v["executions"], 536_870_912u64, "{v}");
    assert_eq!(v["positive"], 536_870_912u64, "{v}");
    assert_eq!(v["negative"], 0, "{v}");
    assert_eq!(v["counts_at_least"], false, "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(v["result"], "Ok", "{v}");
}

/// 70 loaders: 2^70 executions, past 64 bits: the counts are exact but printed as decimal
/// strings (docs/json.md).
#[test]
fn counts_past_64_bits_are_exact_strings() {
    let mut columns = vec![vec!["st.relaxed.gpu x, 1".to_string()]];
    for _ in 0..70 {
        columns.push(vec!["ld.relaxed.gpu r0, x".to_string()]);
    }
    let source = ptx_test(
        "store+70-loaders",
        "x=0;",
        &columns,
        "exists (x == 1)",
        own_cluster,
    );
    let path = write("store+70-loaders.litmus", &source);
    let out = scopecheck(&["check", "--json", path.to_str().unwrap()]);
    let v = verdict(&out);
    let two_to_70 = (1u128 << 70).to_string();
    assert_eq!(v["executions"], two_to_70.as_str(), "{v}");
    // Every execution ends with x == 1 (the only write): all are positive.
    assert_eq!(v["positive"], two_to_70.as_str(), "{v}");
    assert_eq!(v["negative"], 0, "{v}");
    assert_eq!(v["counts_at_least"], false, "{v}");
}

/// Ten threads of one CTA each store a different value to one word: one leaf, whose
/// coherence orders number 10! = 3628800, all consistent. The bounds were asked only between
/// leaves, so neither stopped the judge of this one (48 s and 4.1 GB for `--timeout 2s`).
fn ten_stores() -> PathBuf {
    let columns: Vec<Vec<String>> = (0..10)
        .map(|t| vec![format!("st.relaxed.gpu x, {}", t + 1)])
        .collect();
    // One CTA: the threads are not interchangeable, every order is explored.
    let source = ptx_test("10-stores", "x=0;", &columns, "exists (x == 11)", |_| {
        "cta 0,gpu 0".into()
    });
    write("10-stores.litmus", &source)
}

/// `--max-executions N` hands on exactly N executions and says the search was cut: the
/// condition (`x == 11`, which no store writes) is not settled, so Unknown.
#[test]
fn max_executions_stops_at_exactly_n_inside_one_leaf() {
    let path = ten_stores();
    let start = std::time::Instant::now();
    let out = scopecheck(&[
        "check",
        "--json",
        "--max-executions",
        "1000",
        path.to_str().unwrap(),
    ]);
    let v = verdict(&out);
    assert_eq!(v["executions"], 1000, "{v}");
    assert_eq!(v["complete"], false, "{v}");
    assert_eq!(v["result"], "Unknown", "{v}");
    let reason = v["incomplete_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("--max-executions 1000"), "{v}");
    assert!(start.elapsed().as_secs_f64() < 2.0, "{:?}", start.elapsed());
}

/// `--timeout 1s` ends the judge of that leaf within 10% or 1 s, with Unknown.
#[test]
fn timeout_stops_inside_one_leaf() {
    let path = ten_stores();
    let start = std::time::Instant::now();
    let out = scopecheck(&["check", "--json", "--timeout", "1s", path.to_str().unwrap()]);
    let took = start.elapsed().as_secs_f64();
    let v = verdict(&out);
    assert_eq!(v["complete"], false, "{v}");
    assert_eq!(v["result"], "Unknown", "{v}");
    let reason = v["incomplete_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("--timeout"), "{v}");
    assert!(took < 2.0, "took {took} s for --timeout 1s");
}
