//! Host programs in the style of real tests (tests/programs/real: std::vector buffers,
//! classes wrapping device memory, host templates, error-check macros and helpers that print
//! and exit, a helper header found with -I, verifying loops, multi-stream pipelines, managed
//! memory, zero-copy, host threads), each checked on the native path. Each program's leading
//! comment derives its verdict; the table below asserts it. The tests skip, saying so, only
//! where no C++ compiler exists.

use std::path::PathBuf;

use scopecheck_hostrun::{find_compiler, prepare, Ending, HostOptions, HostReport, Prepared};

/// What a program's check must give.
enum Expect {
    /// Every outcome exits 0: one process (the host sees one outcome), no race, complete.
    Pass,
    /// As `Pass`, but a race is reported: the host's checks hold in every outcome although
    /// the kernel races.
    PassRacy,
    /// Some process fails: `processes` processes at least, `failed` of them failed (at least
    /// one), each failed one ending as `ending` when given; a race reported when `race`.
    Fail {
        processes: usize,
        failed: usize,
        ending: Option<Ending>,
        race: bool,
    },
    /// The host code touches memory a running kernel may access: the interpreted harness, for
    /// a reason at this line.
    Interpreted { line: usize },
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/programs/real")
}

fn options(path: &std::path::Path) -> scopecheck_cuda::CudaOptions {
    let mut cuda = scopecheck_cuda::CudaOptions::default();
    cuda.compile.include.file_dir = path.parent().map(|p| p.to_path_buf());
    // As a project's build passes `-I include`.
    cuda.compile.include.dirs.push(dir().join("include"));
    cuda
}

fn check(name: &str, expect: Expect) {
    if find_compiler().is_none() {
        eprintln!("skipped: no C++ compiler on this machine");
        return;
    }
    let path = dir().join(name);
    let source = std::fs::read_to_string(&path).expect("the test program");
    let prepared =
        prepare(&path, &source, &options(&path)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let native = match (prepared, expect) {
        (Prepared::Interpreted(c), Expect::Interpreted { line }) => {
            assert_eq!(c.line, line, "{name}: {c}");
            return;
        }
        (Prepared::Interpreted(c), _) => panic!("{name}: sent to the interpreted harness: {c}"),
        (Prepared::Native(n), e) => (n, e),
    };
    let (native, expect) = native;
    let host = HostOptions {
        timeout: Some(std::time::Duration::from_secs(120)),
        ..HostOptions::default()
    };
    let r: HostReport = native
        .run(&scopecheck_model::CheckOptions::default(), &host)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!("{name}: {r:#?}");
    assert!(r.complete(), "{name}: not complete: {r:?}");
    let race = r.findings.iter().any(|f| f.is_race());
    match expect {
        Expect::Pass => {
            assert!(!r.failed(), "{name}: {r:?}");
            assert_eq!(r.processes.len(), 1, "{name}: {r:?}");
            assert_eq!(r.processes[0].ending, Ending::Exit(0), "{name}");
            assert!(!race && !r.racy, "{name}: {:?}", r.findings);
        }
        Expect::PassRacy => {
            assert!(!r.failed(), "{name}: {r:?}");
            assert_eq!(r.processes.len(), 1, "{name}: {r:?}");
            assert!(race && r.racy, "{name}: {:?}", r.findings);
        }
        Expect::Fail {
            processes,
            failed,
            ending,
            race: racy,
        } => {
            assert!(r.failed(), "{name}: {r:?}");
            assert!(r.processes.len() >= processes, "{name}: {r:?}");
            let bad: Vec<_> = r.processes.iter().filter(|p| p.failed()).collect();
            assert!(bad.len() >= failed.max(1), "{name}: {r:?}");
            if let Some(e) = ending {
                assert!(bad.iter().all(|p| p.ending == e), "{name}: {bad:?}");
            }
            assert_eq!(race, racy, "{name}: {:?}", r.findings);
        }
        Expect::Interpreted { .. } => panic!("{name}: ran natively, expected interpreted"),
    }
}

macro_rules! programs {
    ($($test:ident: $file:literal => $expect:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check($file, $expect);
            }
        )*
    };
}

const SIGABRT: u32 = 6;

programs! {
    vec_add: "vec-add.cu" => Expect::Pass;
    short_copy_back: "short-copy-back.cu" => Expect::Fail {
        processes: 1, failed: 1, ending: Some(Ending::Exit(1)), race: false };
    raii_buffer: "raii-buffer.cu" => Expect::Pass;
    host_templates: "host-templates.cu" => Expect::Pass;
    check_macro_exit: "check-macro-exit.cu" => Expect::Fail {
        processes: 1, failed: 1, ending: Some(Ending::Exit(2)), race: false };
    helper_header: "helper-header.cu" => Expect::Pass;
    atomic_histogram: "atomic-histogram.cu" => Expect::Pass;
    racy_histogram: "racy-histogram.cu" => Expect::Fail {
        processes: 4, failed: 3, ending: Some(Ending::Signal(SIGABRT)), race: true };
    stream_pipeline: "stream-pipeline.cu" => Expect::Pass;
    event_chain: "event-chain.cu" => Expect::Pass;
    event_chain_missing_wait: "event-chain-missing-wait.cu" => Expect::Fail {
        processes: 2, failed: 1, ending: Some(Ending::Signal(SIGABRT)), race: true };
    managed_scale: "managed-scale.cu" => Expect::Pass;
    managed_early_read: "managed-early-read.cu" => Expect::Interpreted { line: 15 };
    managed_global_poll: "managed-global-poll.cu" => Expect::Interpreted { line: 13 };
    zero_copy_register: "zero-copy-register.cu" => Expect::Interpreted { line: 12 };
    worker_thread: "worker-thread.cu" => Expect::Interpreted { line: 18 };
    stream_query_poll: "stream-query-poll.cu" => Expect::Interpreted { line: 15 };
    symbols: "symbols.cu" => Expect::Pass;
    lastblock_fenced: "lastblock-fenced.cu" => Expect::Pass;
    lastblock_unfenced: "lastblock-unfenced.cu" => Expect::Fail {
        processes: 2, failed: 1, ending: Some(Ending::Signal(SIGABRT)), race: true };
    cmdline_args: "cmdline-args.cu" => Expect::Pass;
    event_timer: "event-timer.cu" => Expect::Pass;
    device_query: "device-query.cu" => Expect::Pass;
    host_globals: "host-globals.cu" => Expect::Pass;
    exit_in_helper_racy: "exit-in-helper-racy.cu" => Expect::Fail {
        processes: 2, failed: 1, ending: Some(Ending::Exit(1)), race: true };
    grid_stride_atomic: "grid-stride-atomic.cu" => Expect::Pass;
    d2d_copy: "d2d-copy.cu" => Expect::Pass;
    cas_max: "cas-max.cu" => Expect::PassRacy;
    block_reduce: "block-reduce.cu" => Expect::Pass;
    block_reduce_nosync: "block-reduce-nosync.cu" => Expect::Fail {
        processes: 2, failed: 1, ending: Some(Ending::Signal(SIGABRT)), race: true };
    stream_vector: "stream-vector.cu" => Expect::Pass;
    config_struct: "config-struct.cu" => Expect::Pass;
    mp_flag_fenced: "mp-flag-fenced.cu" => Expect::Pass;
    launch_kernel_api: "launch-kernel-api.cu" => Expect::Pass;
}
