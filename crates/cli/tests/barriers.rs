//! CTA barriers used against the PTX ISA's rules (`barrier{.cta}`): what the ISA leaves
//! undefined or forbids is an error of the test at its line, found when the file is read (an
//! immediate) or when the execution gets there (a register). The rules that give executions
//! (rounds, counts, registers, reductions, hangs) are pinned by the corpus: tests/litmus/ptx
//! `Bar+*`, `BarRed+*`, `MP+bar.*`.

use std::path::Path;
use std::process::Command;

/// Checks `source` (one PTX litmus test) and returns the JSON line and the exit status.
fn check(name: &str, source: &str) -> (serde_json::Value, Option<i32>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("barriers");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.litmus"));
    std::fs::write(&file, source).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", file.to_str().unwrap()])
        .output()
        .expect("run scopecheck");
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .unwrap_or_default();
    (line, out.status.code())
}

fn error_of(v: &serde_json::Value) -> &str {
    v["error"].as_str().unwrap_or_default()
}

/// Two threads give barrier 1 of their CTA different counts: the rule (one count per
/// barrier of a CTA) makes that an error, reported at the second arrival the search meets.
#[test]
fn mixed_counts_on_one_barrier_are_an_error() {
    let (v, code) = check(
        "mixed",
        "PTX Mixed\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n bar.sync 1, 2  | bar.sync 1, 4 ;\nexists (x == 0)\n",
    );
    assert_eq!(code, Some(1), "{v}");
    assert!(
        error_of(&v).contains("barrier 1 is used with a thread count of 4 here and of 2 by P0"),
        "{v}"
    );
    assert_eq!(v["line"], 4, "{v}");
}

/// Barriers of other CTAs are other barriers: counts may differ between them.
#[test]
fn counts_of_one_id_in_two_ctas_are_independent() {
    let (v, code) = check(
        "two-ctas",
        "PTX TwoCtas\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n bar.sync 1, 1  | bar.sync 1, 2 ;\n st.weak x, 1   |               ;\nexists (x == 1)\n",
    );
    // No error: P0's round of one completes at once; P1's round of two never fills, so P1
    // hangs and no execution terminates (a vacuous No for the `exists`).
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["vacuous"], true, "{v}");
    assert_eq!(v["terminates"], false, "{v}");
    assert_eq!(v["hangs"][0]["thread"], "P1", "{v}");
}

/// A barrier number in a register is checked when it runs: 16 does not exist (0 to 15).
#[test]
fn a_register_barrier_number_out_of_range_faults() {
    let (v, code) = check(
        "id16",
        "PTX Id16\n{ x=0; }\n P0@cta 0,gpu 0 ;\n mov r1, 16 ;\n bar.sync r1 ;\nexists (x == 0)\n",
    );
    assert_eq!(code, Some(1), "{v}");
    assert!(
        error_of(&v).contains("barrier 16 does not exist: a CTA has barriers 0 to 15"),
        "{v}"
    );
    assert_eq!(v["line"], 5, "{v}");
}

/// A thread count in a register must be positive when it runs.
#[test]
fn a_register_thread_count_of_zero_faults() {
    let (v, code) = check(
        "count0",
        "PTX Count0\n{ x=0; }\n P0@cta 0,gpu 0 ;\n mov r2, 0 ;\n bar.arrive 1, r2 ;\nexists (x == 0)\n",
    );
    assert_eq!(code, Some(1), "{v}");
    assert!(
        error_of(&v).contains("a barrier's thread count must be positive, and 0 is not"),
        "{v}"
    );
}

/// Immediates are checked when the file is read: a barrier number above 15, a count of 0,
/// and `bar.arrive` without a count (the ISA requires one).
#[test]
fn immediate_operands_are_checked_when_read() {
    for (name, instr, message) in [
        ("imm16", "bar.sync 16", "barrier number 16 is out of range"),
        ("imm0", "bar.sync 1, 0", "thread count must be positive"),
        (
            "arrive",
            "bar.arrive 1",
            "the thread count (required for `arrive`)",
        ),
    ] {
        let (v, code) = check(
            name,
            &format!("PTX T\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n {instr} ;\nexists (x == 0)\n"),
        );
        assert_eq!(code, Some(1), "{name}: {v}");
        assert!(error_of(&v).contains(message), "{name}: {v}");
        assert_eq!(v["line"], 4, "{name}: {v}");
    }
}

/// A round that needs more arrivals than the CTA has threads can never fill: the hang's reason
/// says so with the count (both threads of CTA 0 wait at `bar.sync 1, 4`, none other exists).
#[test]
fn a_round_larger_than_its_cta_names_its_count() {
    let (v, code) = check(
        "toolarge",
        "PTX TooLarge\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n bar.sync 1, 4  | bar.sync 1, 4 ;\nexists (x == 0)\n",
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["terminates"], false, "{v}");
    let why = v["hangs"].to_string();
    assert!(
        why.contains("a round of 4 arrivals, but only 2 of its CTA's threads are waiting"),
        "{why}"
    );
}
