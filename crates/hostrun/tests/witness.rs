//! The device execution behind each outcome (its witness) and the findings as data: each
//! test's expected reads derived beside it from the model (scoped C11: a plain read may read
//! any write not hidden from it by happens-before, or the value memory held when the
//! launches began). The tests skip, saying so, only where no C++ compiler exists.

use std::path::PathBuf;

use scopecheck_hostrun::finding::{Finding, RaceKind, Read};
use scopecheck_hostrun::{check, find_compiler, Ending, HostOptions, HostReport, Step};

fn run(name: &str) -> Option<(HostReport, String)> {
    if find_compiler().is_none() {
        eprintln!("skipped: no C++ compiler on this machine");
        return None;
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(name);
    let source = std::fs::read_to_string(&path).expect("the test program");
    let cuda = scopecheck_cuda::CudaOptions::default();
    let opts = scopecheck_model::CheckOptions::default();
    let host = HostOptions {
        timeout: Some(std::time::Duration::from_secs(60)),
        ..HostOptions::default()
    };
    let r = check(&path, &source, &cuda, &opts, &host).unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!("{name}: {r:#?}");
    Some((r, source))
}

/// The witness of a process's observations, as (line, observation's outcome, reads).
fn observed(steps: &[Step]) -> Vec<(u32, usize, usize, Vec<Read>)> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Observed {
                at,
                outcome,
                of,
                witness,
            } => Some((at.line, *outcome, *of, witness.to_vec())),
            Step::Stopped(_) => None,
        })
        .collect()
}

/// One read as `thread line location=value from` (`from`: `init` or `thread line`).
fn shown(r: &Read) -> String {
    let from = match &r.from {
        Some(w) => format!("{} {}", w.thread, w.site.line),
        None => "init".into(),
    };
    format!(
        "{} {} {}={} {from}",
        r.thread, r.site.line, r.location, r.value
    )
}

/// lost-update.cu: two threads of `inc` (line 6) each do a plain `*c += 1` on a word the host
/// set to 0. The host sees 2 (one thread read the other's write) or 1 (both read 0, the
/// memory's value when the launch began): two outcomes at the synchronization (line 13).
/// The process that sees 1 fails its assert, and its witness is that execution: both threads
/// read c=0 from the initial value. The allocation is called by the parameter it is passed
/// to, `c`.
#[test]
fn the_failing_fork_carries_the_execution_that_led_there() {
    let Some((r, _)) = run("lost-update.cu") else {
        return;
    };
    let failed: Vec<_> = r.processes.iter().filter(|p| p.failed()).collect();
    assert_eq!(failed.len(), 1, "{r:?}");
    assert_eq!(failed[0].ending, Ending::Signal(6));
    let steps = observed(&failed[0].path);
    assert_eq!(steps.len(), 1, "one observation: {steps:?}");
    let (line, _, of, reads) = &steps[0];
    assert_eq!((*line, *of), (13, 2));
    let reads: Vec<String> = reads.iter().map(shown).collect();
    assert_eq!(reads, ["inc.b0.t0 6 c=0 init", "inc.b0.t1 6 c=0 init"]);
    // The passing fork saw 2: one thread read the other's write.
    let passed: Vec<_> = r.processes.iter().filter(|p| !p.failed()).collect();
    let steps = observed(&passed[0].path);
    let reads: Vec<String> = steps[0].3.iter().map(shown).collect();
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert!(
        reads.contains(&"inc.b0.t1 6 c=1 inc.b0.t0 6".to_string())
            || reads.contains(&"inc.b0.t0 6 c=1 inc.b0.t1 6".to_string()),
        "{reads:?}"
    );
}

/// lost-update.cu's race: the two `*c += 1` of line 6 conflict and nothing orders them, a
/// data race on `c`, found at the launch of line 12; each side a site on line 6 whose span
/// in the file is inside `*c += 1`.
#[test]
fn a_race_is_data_with_both_accesses_placed() {
    let Some((r, source)) = run("lost-update.cu") else {
        return;
    };
    let races: Vec<_> = r.findings.iter().filter(|f| f.is_race()).collect();
    assert!(!races.is_empty(), "{:?}", r.findings);
    for f in races {
        let Finding::Race {
            kind,
            first,
            second,
            launched_at,
        } = f
        else {
            unreachable!()
        };
        assert_eq!(*kind, RaceKind::Data);
        assert_eq!(launched_at.line, 12);
        for a in [first, second] {
            assert_eq!((a.location.as_str(), a.site.line), ("c", 6), "{a:?}");
            let span = a.site.span(&source).expect("a place in the file");
            let text = &source[span.offset..span.offset + span.len];
            assert!(text.starts_with("*c"), "{text:?}");
        }
        assert!(first.write || second.write, "a race has a write");
    }
}

/// mp-plain.cu: block 0 writes data (line 9) then flag (10), block 1 reads flag (12) then
/// data (13), all plain. The host's copy (line 26) sees (flag, data) as block 1 read them;
/// (1, 0) is allowed (nothing orders the accesses), and in it the host returns 1. That
/// process's witness: block 1 read flag=1 from block 0's line 10, and data=0 from the initial
/// value. The outcome is one of several at line 26.
#[test]
fn the_witness_of_stale_data_reads_the_flag_from_its_writer() {
    let Some((r, _)) = run("mp-plain.cu") else {
        return;
    };
    let failed: Vec<_> = r.processes.iter().filter(|p| p.failed()).collect();
    assert_eq!(failed.len(), 1, "{r:?}");
    assert_eq!(failed[0].ending, Ending::Exit(1));
    let steps = observed(&failed[0].path);
    assert_eq!(steps.len(), 1, "{steps:?}");
    let (line, _, of, reads) = &steps[0];
    assert_eq!(*line, 26);
    assert!(*of > 1, "the host sees more than one outcome");
    let reads: Vec<String> = reads.iter().map(shown).collect();
    assert_eq!(
        reads,
        ["mp.b1.t0 12 flag=1 mp.b0.t0 10", "mp.b1.t0 13 data=0 init"]
    );
}
