//! The report of a native host run (`check --host native`, crates/cli/src/native_report.rs):
//! `Witness` and `Race` lines, miette diagnostics at the source, the JSON line's keys. The
//! programs are in tests/native_report (and crates/hostrun/tests/programs), each with its
//! verdict derived in its leading comment; the expected lines are derived beside each test.
//! Skipped, saying so, only without a C++ compiler.

use std::path::PathBuf;
use std::process::Command;

fn program(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let p = if name == "lost-update.cu" {
        dir.join("../hostrun/tests/programs").join(name)
    } else {
        dir.join("tests/native_report").join(name)
    };
    p.to_string_lossy().into_owned()
}

fn check(args: &[&str]) -> Option<(String, String, i32)> {
    if scopecheck_hostrun::find_compiler().is_none() {
        eprintln!("skipped: no C++ compiler on this machine");
        return None;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--host", "native"])
        .args(args)
        .output()
        .expect("scopecheck runs");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    ))
}

fn json(name: &str) -> Option<serde_json::Value> {
    let (out, err, _) = check(&["--json", &program(name)])?;
    Some(serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}{err}")))
}

/// two-phases.cu: the failing process saw outcome 1 of 2 at line 18 (both `inc` threads read
/// c=0 from the initial value, line 8), then the copy of line 21 (one outcome: `copy` read
/// in=1 from the initial value, line 9). The text gives each observation and its reads, in
/// the words of the interpreted report's `Witness` lines; the three races of line 8 are
/// `Race` lines.
#[test]
fn the_text_gives_the_witness_of_each_observation() {
    let p = program("two-phases.cu");
    let Some((out, err, _)) = check(&[&p]) else {
        return;
    };
    let witness: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("Witness ") || l.starts_with("Observed "))
        .collect();
    assert_eq!(
        witness,
        [
            format!("Observed {p}:18: outcome 1 of 2").as_str(),
            "Witness inc.b0.t0 line 8 (`*c`) read c=0 from the initial value",
            "Witness inc.b0.t1 line 8 (`*c`) read c=0 from the initial value",
            format!("Observed {p}:21: outcome 1 of 1").as_str(),
            "Witness copy.b0.t0 line 9 (`*in`) read in=1 from the initial value",
        ],
        "{out}{err}"
    );
    assert!(out.contains(&format!("Racy {p}: 3 races")), "{out}");
    assert!(
        out.contains(
            "Race data on c: inc.b0.t0 line 8 (`*c += 1`, write) and inc.b0.t1 line 8 (`*c += 1`, write) (launched at line 17)"
        ),
        "{out}"
    );
    assert!(out.contains("Result: No (racy)"), "{out}");
}

/// The failure as a diagnostic: the assertion of line 22 labelled, the observations of lines
/// 18 and 21 labelled with the outcome taken, and each witness read at its column (the
/// interpreted report's label words); then one diagnostic per race with both sides labelled.
#[test]
fn the_failure_is_a_diagnostic_at_the_assertion_with_its_reads() {
    let p = program("two-phases.cu");
    let Some((out, _, _)) = check(&[&p]) else {
        return;
    };
    let at = out
        .find("× error: the host program can fail: it aborts (SIGABRT)")
        .unwrap_or_else(|| panic!("{out}"));
    let diag = &out[at..];
    for label in [
        "inc.b0.t0 reads c=0 from the initial value",
        "inc.b0.t1 reads c=0 from the initial value",
        "copy.b0.t0 reads in=1 from the initial value",
        "the host observes outcome 1 of 2 here",
        "the host observes outcome 1 of 1 here",
        "this assertion fails",
    ] {
        assert!(diag.contains(label), "{label}: {diag}");
    }
    assert_eq!(out.matches("× error: data race on `c`").count(), 3, "{out}");
    assert!(out.contains("inc.b0.t1 writes c"), "{out}");
}

/// The JSON line: the interpreted report's keys (`result`, `complete`, `racy`, `races` with
/// both accesses' lines and columns, `witness`, `diagnostics`, `executions`) and the native
/// path's (`harness`, `processes`). In `inc(int *c) { *c += 1; }` the statement starts at
/// column 31 of line 8; the read `*c` too.
#[test]
fn the_json_line_has_the_interpreted_keys() {
    let Some(v) = json("two-phases.cu") else {
        return;
    };
    assert_eq!(v["harness"], "native");
    assert_eq!(v["result"], "No");
    assert_eq!(v["complete"], true);
    assert_eq!(v["incomplete_reason"], serde_json::Value::Null);
    assert_eq!(v["racy"], true);
    let races = v["races"].as_array().expect("races");
    assert_eq!(races.len(), 3, "{v}");
    for r in races {
        assert_eq!(r["kind"], "data");
        assert_eq!(r["location"], "c");
        for side in ["first", "second"] {
            assert_eq!(r[side]["line"], 8, "{r}");
            assert_eq!(r[side]["column"], 31, "{r}");
        }
    }
    let witness = v["witness"].as_array().expect("witness");
    let reads: Vec<String> = witness
        .iter()
        .map(|w| {
            format!(
                "{} {} {}={} {}",
                w["thread"].as_str().unwrap(),
                w["line"],
                w["location"].as_str().unwrap(),
                w["value"],
                w["from"].is_null()
            )
        })
        .collect();
    assert_eq!(
        reads,
        [
            "inc.b0.t0 8 c=0 true",
            "inc.b0.t1 8 c=0 true",
            "copy.b0.t0 9 in=1 true"
        ]
    );
    assert!(witness[0]["observed"]
        .as_str()
        .unwrap()
        .ends_with("two-phases.cu:18: outcome 1 of 2"));
    let kinds: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["requirement-fails", "data-race", "data-race", "data-race"]
    );
    assert_eq!(v["processes"].as_array().unwrap().len(), 2);
    // `inc`: both threads read the initial 0 (their writes then in either coherence order: 2
    // executions), or one reads the other's write (2 more): 4; `copy`: 1 in each of the 2
    // processes. 6 in all.
    assert_eq!(v["executions"], 6, "{v}");
}

/// spin-forever.cu: the one thread spins at line 8 reading flag=0 and nothing sets it: a hang
/// (under the fair scheduler, which it needs none of) at line 8, the process stopped, the
/// result Unknown with the reason. (Its host's `std::vector` keeps the interpreted harness
/// from taking the file over.)
#[test]
fn a_hang_is_reported_at_its_line_and_the_result_is_unknown() {
    let p = program("spin-forever.cu");
    let Some((out, err, _)) = check(&[&p]) else {
        return;
    };
    assert!(
        out.contains(
            "Hang wait.b0.t0 spins forever at line 8 (`atomicAdd((int *)flag, 0) == 0`) reading flag=0"
        ),
        "{out}{err}"
    );
    assert!(
        out.contains("× error: a thread can wait forever (under fair)"),
        "{out}"
    );
    assert!(out.contains("wait.b0.t0 waits forever here"), "{out}");
    assert!(out.contains("Result: Unknown"), "{out}");
    let Some(v) = json("spin-forever.cu") else {
        return;
    };
    assert_eq!(v["result"], "Unknown");
    assert_eq!(v["complete"], false);
    assert!(v["incomplete_reason"]
        .as_str()
        .unwrap()
        .contains("the host waits forever"));
    let hang = &v["hangs"][0];
    assert_eq!(hang["waiting"][0]["line"], 8, "{v}");
    assert_eq!(hang["waiting"][0]["waits"]["flag"], 0, "{v}");
}
/// fault-index.cu: the kernel stores to a[5] of a 2-element allocation (line 10) in its one
/// execution: a fault at line 10, labelled there, naming the allocation by its parameter `a`
/// (not the explored program's name for it); the process is stopped and the result Unknown.
#[test]
fn a_fault_is_a_diagnostic_at_its_instruction() {
    let p = program("fault-index.cu");
    let Some((out, err, _)) = check(&[&p]) else {
        return;
    };
    assert!(
        out.contains("× error: a fault on the device: k.b0.t0 line 10 (`a[i] = 1`)"),
        "{out}{err}"
    );
    assert!(
        out.contains("index 5 is out of bounds of `a` (2 elements)"),
        "{out}"
    );
    assert!(out.contains("10 │   a[i] = 1;"), "{out}");
    assert!(!out.contains("scopecheck_m"), "{out}");
    assert!(out.contains("Result: Unknown"), "{out}");
}
/// kernel-assert.cu: the kernel's assert (line 12) fails in the execution where thread 1 reads
/// y=1 from thread 0's relaxed exchange (line 11) but x=0 from the initial value; the host's one
/// process exits 0. The result is No (racy), and the witness is that execution, in thread
/// order: t0's exchange read y=0 (initial), t1's atomicAdd read y=1 from t0's line 11, t1's
/// `*x` read x=0 (initial).
#[test]
fn a_failing_kernel_assert_is_reported_with_its_execution() {
    let p = program("kernel-assert.cu");
    let Some((out, err, _)) = check(&[&p]) else {
        return;
    };
    let witness: Vec<&str> = out.lines().filter(|l| l.starts_with("Witness ")).collect();
    assert_eq!(
        witness,
        [
            "Witness k.b0.t0 line 11 (`atomicExch(y, 1)`) read y=0 from the initial value",
            "Witness k.b0.t1 line 12 (`atomicAdd(y, 0)`) read y=1 from k.b0.t0 line 11 (`atomicExch(y, 1)`)",
            "Witness k.b0.t1 line 12 (`*x`) read x=0 from the initial value",
        ],
        "{out}{err}"
    );
    assert!(out.contains("  the program: exit 0"), "{out}");
    assert!(
        out.contains("× error: an assertion in a kernel can fail"),
        "{out}"
    );
    assert!(
        out.contains("k.b0.t1 reads x=0 from the initial value"),
        "{out}"
    );
    assert!(out.contains("Result: No (racy)"), "{out}");
}

/// examples/cuda/hh-checked-pipeline-broken.cu forks into 16 outcomes at line 71: the
/// processes are listed in the order of their outcomes, 1 to 16 (not as strings, where
/// "outcome 10" sorts before "outcome 2").
#[test]
fn processes_are_listed_in_the_order_of_their_outcomes() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/cuda/hh-checked-pipeline-broken.cu");
    let Some((out, err, _)) = check(&[p.to_str().unwrap()]) else {
        return;
    };
    let listed: Vec<usize> = out
        .lines()
        .filter(|l| l.ends_with(": FAILED") || l.ends_with(": exit 0"))
        .filter_map(|l| {
            let rest = l.split(":71: outcome ").nth(1)?;
            rest.split(' ').next()?.parse().ok()
        })
        .collect();
    assert_eq!(listed, (1..=16).collect::<Vec<_>>(), "{out}{err}");
}

/// Every failed process carries the device execution that led there: in lost-update.cu the
/// one failing fork (it saw c=1 at line 13) has the witness of both `inc` threads reading c=0
/// from the initial value (line 6), the same as the report's `witness`; the passing fork
/// (c=2) has none.
#[test]
fn each_failed_process_has_its_witness_in_json() {
    let Some(v) = json("lost-update.cu") else {
        return;
    };
    let processes = v["processes"].as_array().unwrap();
    assert_eq!(processes.len(), 2, "{v}");
    for p in processes {
        let reads: Vec<String> = p["witness"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                format!(
                    "{} {} {}={}",
                    w["thread"].as_str().unwrap(),
                    w["line"],
                    w["location"].as_str().unwrap(),
                    w["value"]
                )
            })
            .collect();
        if p["failed"] == true {
            assert_eq!(reads, ["inc.b0.t0 6 c=0", "inc.b0.t1 6 c=0"], "{p}");
            assert_eq!(p["witness"], v["witness"]);
        } else {
            assert!(reads.is_empty(), "{p}");
        }
    }
}
