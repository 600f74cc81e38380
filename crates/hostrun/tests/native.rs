//! Host programs checked on the native path, each with its verdict derived beside it (in the
//! program's leading comment and at its test). The tests skip, saying so, only where no C++
//! compiler exists.

use std::path::PathBuf;

use scopecheck_hostrun::{
    check, find_compiler, prepare, Ending, HostOptions, HostReport, Prepared,
};

fn run(name: &str) -> Option<HostReport> {
    if find_compiler().is_none() {
        eprintln!("skipped: no C++ compiler on this machine");
        return None;
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(name);
    let source = std::fs::read_to_string(&path).expect("the test program");
    let mut cuda = scopecheck_cuda::CudaOptions::default();
    cuda.compile.include.file_dir = path.parent().map(|p| p.to_path_buf());
    let opts = scopecheck_model::CheckOptions::default();
    let host = HostOptions {
        timeout: Some(std::time::Duration::from_secs(60)),
        ..HostOptions::default()
    };
    let r = check(&path, &source, &cuda, &opts, &host).unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!("{name}: {r:#?}");
    Some(r)
}

/// out[i] = 2*i by each thread of its own element: one outcome, the host's checks hold.
#[test]
fn copy_back_passes() {
    let Some(r) = run("copy-back.cu") else { return };
    assert!(r.complete(), "{r:?}");
    assert!(!r.failed());
    assert_eq!(r.processes.len(), 1);
    assert_eq!(r.processes[0].ending, Ending::Exit(0));
    assert!(r.processes[0].output.contains("ok"));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// Two plain `+= 1`: the host sees 1 or 2 (two outcomes, two processes); the one seeing 1
/// fails its assert (SIGABRT); the race is reported.
#[test]
fn lost_update_forks_and_fails() {
    let Some(r) = run("lost-update.cu") else {
        return;
    };
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.processes.len(), 2, "{r:?}");
    let failed: Vec<_> = r.processes.iter().filter(|p| p.failed()).collect();
    assert_eq!(failed.len(), 1, "{r:?}");
    assert_eq!(failed[0].ending, Ending::Signal(6), "assert aborts");
    assert!(failed[0].output.contains("h == 2"), "{}", failed[0].output);
    assert!(r.findings.iter().any(|f| f.is_race()), "{:?}", r.findings);
}

/// atomicAdd twice: always 2, one process, no race.
#[test]
fn atomic_count_passes() {
    let Some(r) = run("atomic-count.cu") else {
        return;
    };
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.processes.len(), 1, "{r:?}");
    assert!(!r.failed());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// fill then next on the default stream: out[i] = 10 * i + 1, one process, exit 0.
#[test]
fn two_launches_in_stream_order_pass() {
    let Some(r) = run("two-launches.cu") else {
        return;
    };
    assert!(r.complete() && !r.failed(), "{r:?}");
    assert_eq!(r.processes.len(), 1, "{r:?}");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// The initialiser through the shadow (3), cudaMemcpyToSymbol (10), four atomic adds: 14.
#[test]
fn symbols_are_copied_both_ways() {
    let Some(r) = run("symbol-counter.cu") else {
        return;
    };
    assert!(r.complete() && !r.failed(), "{r:?}");
    assert_eq!(r.processes.len(), 1, "{r:?}");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// A template class and an exiting error-check macro from a header found next to the file;
/// floats through a scalar argument: 2, 4, 6, 8.
#[test]
fn helper_header_class_and_check_macro_pass() {
    let Some(r) = run("class-wrapper.cu") else {
        return;
    };
    assert!(r.complete() && !r.failed(), "{r:?}");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// Plain message passing: the model allows flag seen 1 with data 0; that fork returns 1, and
/// the plain accesses race.
#[test]
fn plain_message_passing_fails_in_one_fork() {
    let Some(r) = run("mp-plain.cu") else { return };
    assert!(r.complete(), "{r:?}");
    assert!(r.processes.len() >= 2, "{r:?}");
    let failed: Vec<_> = r.processes.iter().filter(|p| p.failed()).collect();
    assert_eq!(failed.len(), 1, "only (1, 0) fails: {r:?}");
    assert_eq!(failed[0].ending, Ending::Exit(1));
    assert!(failed[0].output.contains("stale data"));
    assert!(r.findings.iter().any(|f| f.is_race()), "{:?}", r.findings);
}

/// Fenced message passing: outcomes (0, 0) and (1, 1), two processes, no failure, no race.
#[test]
fn fenced_message_passing_passes_in_both_forks() {
    let Some(r) = run("mp-fenced.cu") else { return };
    assert!(r.complete() && !r.failed(), "{r:?}");
    assert_eq!(r.processes.len(), 2, "{r:?}");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// An event waited for orders the consumer after the producer: {7, 7}, one process.
#[test]
fn stream_wait_event_orders_the_consumer() {
    let Some(r) = run("streams-events.cu") else {
        return;
    };
    assert!(r.complete() && !r.failed(), "{r:?}");
    assert_eq!(r.processes.len(), 1, "{r:?}");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// Without the wait the consumer races with the producer; the forks that copied a 0 fail.
#[test]
fn streams_without_the_wait_race_and_fail() {
    let Some(r) = run("streams-no-wait.cu") else {
        return;
    };
    assert!(r.complete(), "{r:?}");
    assert!(r.failed(), "{r:?}");
    assert!(
        r.processes.iter().any(|p| !p.failed()),
        "{{7, 7}} passes: {r:?}"
    );
    assert!(r.findings.iter().any(|f| f.is_race()), "{:?}", r.findings);
}

/// Mapped host memory named in the host code: the file needs the interpreted harness, at
/// the line of `cudaHostAllocMapped`.
#[test]
fn mapped_memory_needs_the_interpreted_harness() {
    if find_compiler().is_none() {
        return;
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs/mapped-refused.cu");
    let source = std::fs::read_to_string(&path).expect("the test program");
    match prepare(&path, &source, &scopecheck_cuda::CudaOptions::default()) {
        Ok(Prepared::Interpreted(c)) => {
            assert_eq!(c.line, 9, "{c}");
            assert!(c.why.contains("cudaHostAllocMapped"), "{c}");
        }
        other => panic!("expected the interpreted harness, got {other:?}"),
    }
}

/// Mapped host memory asked for by the flag's value is refused at its line when the call
/// runs; the process is stopped, not failed.
#[test]
fn an_unmodelled_call_is_refused_at_its_line() {
    let Some(r) = run("mapped-by-value.cu") else {
        return;
    };
    assert!(!r.complete() && !r.failed(), "{r:?}");
    assert!(
        r.findings
            .iter()
            .map(|f| f.to_string())
            .any(|f| f.contains("mapped-by-value.cu:10") && f.contains("cudaHostAlloc")),
        "{:?}",
        r.findings
    );
}

/// 0xff bytes are -1 per int; plus the thread index: {-1, 0, 1, 2}.
#[test]
fn memset_bytes_make_the_values() {
    let Some(r) = run("memset-ff.cu") else { return };
    assert!(r.complete() && !r.failed(), "{r:?}");
}

/// The host compiler's message names the user's file and line.
#[test]
fn a_host_compile_error_names_the_line() {
    if find_compiler().is_none() {
        return;
    }
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs/host-compile-error.cu");
    let source = std::fs::read_to_string(&path).unwrap();
    let e = check(
        &path,
        &source,
        &scopecheck_cuda::CudaOptions::default(),
        &scopecheck_model::CheckOptions::default(),
        &HostOptions::default(),
    )
    .expect_err("the host part does not compile");
    let msg = e.to_string();
    assert!(msg.contains("host-compile-error.cu:7"), "{msg}");
    assert!(msg.contains("undeclared"), "{msg}");
}

/// Managed memory written and read by the host directly, a `__managed__` total added to
/// atomically: {2, 4, 6, 8} and 20 in every execution, one process.
#[test]
fn managed_memory_goes_both_ways() {
    let Some(r) = run("managed-sum.cu") else {
        return;
    };
    assert!(r.complete() && !r.failed(), "{r:?}");
    assert_eq!(r.processes.len(), 1, "{r:?}");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// A plain `+=` on a `__managed__` total: 1, 2 or 3 seen after the sync (three outcomes); the
/// two forks that see less than 3 abort; the race is reported.
#[test]
fn a_racy_managed_total_fails_where_an_update_is_lost() {
    let Some(r) = run("managed-racy-sum.cu") else {
        return;
    };
    assert!(r.complete(), "{r:?}");
    assert_eq!(r.processes.len(), 3, "{r:?}");
    assert_eq!(
        r.processes.iter().filter(|p| p.failed()).count(),
        2,
        "{r:?}"
    );
    assert!(r.racy);
}
