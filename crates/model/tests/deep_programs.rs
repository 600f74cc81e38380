//! Programs whose executions are deep: hundreds of events in one thread, or many atomics on one
//! word. The explorer's depth-first search once made a call per event and overflowed the stack
//! on these (a test thread has 2 MiB); it now keeps its own stack, so each ends in a verdict.
//! Each expectation is derived in its comment; where the search is too large to finish in a
//! test, a bound cuts it and the verdict must say so (Unknown, incomplete), never Ok.

use scopecheck_model::{check, CheckOptions, Outcome, Verdict};

fn verdict(src: &str, opts: &CheckOptions) -> Verdict {
    let p = scopecheck_litmus::parse(src).unwrap_or_else(|e| panic!("{e:?}"));
    check(&p, opts).unwrap_or_else(|e| panic!("{e:?}"))
}

/// One PTX thread storing 1..=n to x in order.
fn ptx_stores(n: usize) -> String {
    let body: String = (1..=n)
        .map(|i| format!(" st.relaxed.gpu x, {i} ;\n"))
        .collect();
    format!("PTX Stores{n}\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{body}exists (x == {n})\n")
}

/// One C thread storing 1..=n to x in order.
fn c_stores(n: usize) -> String {
    let body: String = (1..=n).map(|i| format!("  *x = {i};\n")).collect();
    format!("CUDA Stores{n}\n{{ int x = 0; }}\n\nP0@block 0, gpu 0 (int* x) {{\n{body}}}\n\nexists (x={n})\n")
}

/// `threads` C threads of one block, each adding 1 to x `adds` times.
fn c_adds(threads: usize, adds: usize, prop: &str) -> String {
    let mut src = format!("CUDA Adds{threads}x{adds}\n{{ int x = 0; }}\n\n");
    for t in 0..threads {
        src.push_str(&format!("P{t}@block 0, gpu 0 (int* x) {{\n"));
        for _ in 0..adds {
            src.push_str("  atomicAdd(x, 1);\n");
        }
        src.push_str("}\n\n");
    }
    src.push_str(prop);
    src
}

/// A single thread has one execution: the last of its stores is the final value (coherence
/// follows program order at one location), so `exists (x == n)` holds.
fn one_thread_of_stores(src: &str) {
    let v = verdict(src, &CheckOptions::default());
    assert_eq!(v.outcome, Outcome::Ok);
    assert_eq!(v.executions, 1);
    assert_eq!(v.states.len(), 1);
    assert!(v.incomplete.is_none());
}

#[test]
fn ptx_thread_of_281_stores() {
    one_thread_of_stores(&ptx_stores(281));
}

#[test]
fn ptx_thread_of_300_stores() {
    one_thread_of_stores(&ptx_stores(300));
}

#[test]
fn c_thread_of_206_stores() {
    one_thread_of_stores(&c_stores(206));
}

/// One thread loading x 406 times with nothing writing it: every load reads the initial 0, one
/// execution.
#[test]
fn ptx_thread_of_406_loads() {
    let body: String = (0..406)
        .map(|i| format!(" ld.relaxed.gpu r{i}, x ;\n"))
        .collect();
    let src = format!("PTX Loads406\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{body}exists (P0:r405 == 0)\n");
    let v = verdict(&src, &CheckOptions::default());
    assert_eq!(v.outcome, Outcome::Ok);
    assert_eq!(v.executions, 1);
}

/// Many atomics on one word: every interleaving of the atomic adds ends with x equal to their
/// number, but there are far too many to finish in a test (4 threads x 11: 44!/(11!)^4 orders)
/// when each is explored (`commute: false`; the commuting-atomics reduction explores one, see
/// `atomic_adds_in_one_order`), so the search is cut after 200 executions. `forall` then cannot be confirmed: Unknown, with
/// the cut said, and every execution found had x = 44 (no negative one).
#[test]
fn four_threads_of_11_atomics_cut_honestly() {
    let opts = CheckOptions {
        max_executions: Some(200),
        commute: false,
        ..CheckOptions::default()
    };
    let v = verdict(&c_adds(4, 11, "forall (x=44)\n"), &opts);
    assert_eq!(v.outcome, Outcome::Unknown);
    assert!(v.incomplete.is_some());
    assert_eq!(v.negative, 0);
    assert!(v.positive > 0);
}

/// Two threads of 14 `atomicAdd`s on one word: as above (28!/(14!)^2 orders of the adds).
#[test]
fn two_threads_of_14_atomic_adds_cut_honestly() {
    let opts = CheckOptions {
        max_executions: Some(200),
        commute: false,
        ..CheckOptions::default()
    };
    let v = verdict(&c_adds(2, 14, "forall (x=28)\n"), &opts);
    assert_eq!(v.outcome, Outcome::Unknown);
    assert!(v.incomplete.is_some());
    assert_eq!(v.negative, 0);
}

/// The same adds with the commuting-atomics reduction (docs/explore.md, "Commuting atomics"):
/// their results are unused, so one order is explored and the execution counts all
/// 44!/(11!)^4 (resp. 28!/(14!)^2 = C(28, 14)) orders: Ok and complete.
#[test]
fn atomic_adds_in_one_order() {
    let v = verdict(&c_adds(4, 11, "forall (x=44)\n"), &CheckOptions::default());
    assert_eq!(v.outcome, Outcome::Ok);
    assert!(v.incomplete.is_none());
    let factorial = |n: u128| (1..=n).product::<u128>();
    // 44! overflows u128: divide as we go, C(44,11) C(33,11) C(22,11).
    let choose = |n: u128, k: u128| (0..k).fold(1u128, |acc, i| acc * (n - i) / (i + 1));
    assert_eq!(
        v.executions,
        choose(44, 11) * choose(33, 11) * choose(22, 11)
    );
    let v = verdict(&c_adds(2, 14, "forall (x=28)\n"), &CheckOptions::default());
    assert_eq!(v.outcome, Outcome::Ok);
    assert_eq!(v.executions, factorial(28) / factorial(14) / factorial(14));
}
