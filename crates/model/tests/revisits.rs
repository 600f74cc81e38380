//! The revisiting search (`scopecheck_explore`'s `revisit` module) on small scoped-C11 programs
//! whose executions are counted by hand in each test's comment. Each program makes revisits: a
//! write added after a read of its location that the read then takes, the read's thread cut
//! back to just before it. `scripts/test` also runs this file in a debug build, where the
//! explorer's debug checks (a cut-back thread's next step asks for the read it was cut at; a
//! replay emits the events its path recorded) are on: the release build of CI compiles them
//! out, and a wrong check once fired on every revisit unseen.
//!
//! Each program is also checked with the hole search (`Engine::Holes`, reads that wait for
//! their writes, no revisits) as a second opinion on the same counts and states.

use scopecheck_model::{check, CheckOptions, Engine, Outcome, Verdict};

/// The verdict of `src` under its own model (scoped C11 for these), every thread order
/// explored (no symmetry: the revisiting search runs only where no threads are interchangeable).
fn verdict(src: &str, engine: Engine) -> Verdict {
    let p = scopecheck_litmus::parse(src).unwrap_or_else(|e| panic!("{e:?}"));
    let opts = CheckOptions {
        engine,
        symmetry: false,
        ..CheckOptions::default()
    };
    check(&p, &opts).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The final states' values, in the condition's observable order, sorted.
fn states(v: &Verdict) -> Vec<Vec<i64>> {
    let mut s: Vec<Vec<i64>> = v
        .states
        .iter()
        .map(|s| s.values.iter().map(|&(_, x)| x).collect())
        .collect();
    s.sort();
    s
}

/// Checks `src` with the revisiting search: complete, race-free, `executions` executions with
/// final states `want`, and `outcome`; the hole search must find the same.
fn expect(src: &str, executions: u128, want: &[&[i64]], outcome: Outcome) {
    let v = verdict(src, Engine::Graphs);
    assert!(v.is_complete(), "{:?}", v.incomplete);
    assert!(!v.is_racy(), "{:?}", v.races);
    assert_eq!(v.executions, executions);
    assert_eq!(
        states(&v),
        want.iter().map(|s| s.to_vec()).collect::<Vec<_>>()
    );
    assert_eq!(v.outcome, outcome);
    let holes = verdict(src, Engine::Holes);
    assert_eq!(holes.executions, v.executions);
    assert_eq!(states(&holes), states(&v));
}

/// Store buffering between two host threads with `std::atomic<int>` (seq_cst, system scope).
/// Each load reads the initial 0 or the other thread's 1: four reads-from choices, one write
/// per location besides the initial one, so one coherence order each. Both loads reading 0
/// closes a cycle in the seq_cst order (each store precedes its thread's load, and each load
/// precedes the other's store in `fr`), so 3 executions with 3 distinct states remain. The
/// search runs P0 first (its load reads 0), then P1's store revisits that load: P0 is cut back
/// to its store and its next step is the load.
#[test]
fn store_buffering_seq_cst_revisits_a_plain_load() {
    let src = "CUDA SB+host\n{ host int x = 0; host int y = 0; }\n\n\
        P0@host (host std::atomic<int>* x, host std::atomic<int>* y) {\n  x->store(1);\n  int r0 = y->load();\n}\n\n\
        P1@host (host std::atomic<int>* x, host std::atomic<int>* y) {\n  y->store(1);\n  int r0 = x->load();\n}\n\n\
        exists (0:r0=0 /\\ 1:r0=0)\n";
    expect(src, 3, &[&[0, 1], &[1, 0], &[1, 1]], Outcome::No);
}

/// Two GPUs exchange into one location (`atomicExch_system`, relaxed, system scope). The two
/// RMWs are ordered in coherence and atomicity makes the later read the earlier's write: P0
/// first gives P0:r0=0, P1:r0=1; P1 first gives P1:r0=0, P0:r0=2. 2 executions, 2 states.
/// P1's exchange revisits P0's RMW read, whose write is then added anew (the revisit's pending
/// write).
#[test]
fn exchanges_revisit_an_rmw_read() {
    let src = "CUDA Exch\n{ x=0; }\n\n\
        P0@block 0, gpu 0 (int* x) {\n  int r0 = atomicExch_system(x, 1);\n}\n\n\
        P1@block 0, gpu 1 (int* x) {\n  int r0 = atomicExch_system(x, 2);\n}\n\n\
        exists (0:r0=0 /\\ 1:r0=0)\n";
    expect(src, 2, &[&[0, 1], &[2, 0]], Outcome::No);
}

/// Message passing through relaxed device-scope atomics with a `__threadfence()` (a seq_cst
/// device-scope fence) on each side, the reader written first. Each relaxed load reads 0 or 1
/// (one write per location besides the initial one): 4 choices. Where the flag load reads 1,
/// the writer's fence synchronizes with the reader's (fence, store; load reading it, fence), so
/// the data store happens before the data load, which then cannot read the initial write that
/// store overwrites in coherence: (flag 1, data 0) is forbidden, 3 executions and 3 states.
/// The reader runs first and reads 0 twice; the writer's data store revisits the data load,
/// and the reader cut back to its fence steps straight to that load again.
#[test]
fn message_passing_with_fences_revisits_the_load_after_a_fence() {
    let src = "CUDA MP+fences\n{ data=0; flag=0; }\n\n\
        P0@block 1, gpu 0 (int* data, int* flag) {\n\
          cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);\n\
          cuda::atomic_ref<int, cuda::thread_scope_device> d(*data);\n\
          int r0 = f.load(cuda::std::memory_order_relaxed);\n\
          __threadfence();\n\
          int r1 = d.load(cuda::std::memory_order_relaxed);\n}\n\n\
        P1@block 0, gpu 0 (int* data, int* flag) {\n\
          cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);\n\
          cuda::atomic_ref<int, cuda::thread_scope_device> d(*data);\n\
          d.store(1, cuda::std::memory_order_relaxed);\n\
          __threadfence();\n\
          f.store(1, cuda::std::memory_order_relaxed);\n}\n\n\
        exists (0:r0=1 /\\ 0:r1=0)\n";
    expect(src, 3, &[&[0, 0], &[0, 1], &[1, 1]], Outcome::No);
}

/// Message passing into an await loop (release store of 1, acquire load), with a third thread
/// storing 2 to the flag, relaxed. An iteration that reads 0 goes round with nothing changed (a
/// pure iteration): it is no execution of its own, and only exiting iterations count
/// (docs/explore.md, "Loops by behaviour"). The loop exits reading 1 or 2, and the two flag
/// stores take either coherence order, neither constrained by anything else (2 x 2 cases):
/// - reading 1, P1's release store synchronizes with the acquire load: the data store happens
///   before the data load, which reads 1 (2 executions, one per coherence order);
/// - reading 2, P2's relaxed store starts no release sequence of P1's, so nothing orders the
///   data accesses: the data load reads 0 or 1 (4 executions).
///
/// 6 executions; r0 ends 0 or 1, so `exists (0:r0=0)` holds. No hang: a spinner reading 0
/// reads no coherence-latest write, 1 and 2 being made in every execution. The loop's read is
/// deferred while it would block (P1 runs first), reads 1, and P2's store then revisits it,
/// deleting the data load after it.
#[test]
fn an_await_loop_read_is_revisited_by_a_later_flag_store() {
    let atomics = "  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);\n\
                   cuda::atomic_ref<int, cuda::thread_scope_device> d(*data);\n";
    let src = format!(
        "CUDA MP+await+2\n{{ data=0; flag=0; }}\n\n\
        P0@block 1, gpu 0 (int* data, int* flag) {{\n{atomics}\
          while (f.load(cuda::std::memory_order_acquire) == 0) {{}}\n\
          int r0 = d.load(cuda::std::memory_order_relaxed);\n}}\n\n\
        P1@block 0, gpu 0 (int* data, int* flag) {{\n{atomics}\
          d.store(1, cuda::std::memory_order_relaxed);\n\
          f.store(1, cuda::std::memory_order_release);\n}}\n\n\
        P2@block 2, gpu 0 (int* data, int* flag) {{\n{atomics}\
          f.store(2, cuda::std::memory_order_relaxed);\n}}\n\n\
        exists (0:r0=0)\n"
    );
    expect(&src, 6, &[&[0], &[1]], Outcome::Ok);
    assert!(verdict(&src, Engine::Graphs).hangs.is_empty());
}
