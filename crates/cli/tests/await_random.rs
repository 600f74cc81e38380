//! The revisiting search against the hole search on random programs whose threads are all
//! different (no symmetry reduction anywhere) and wait: await loops on a value, CAS retry
//! loops (a lock's acquire), and stores and RMWs that may or may not release them.
//!
//! Under scoped C11 the revisiting search is what runs on such programs; the hole search
//! (`Engine::Holes`) explores the same programs by another argument (reads wait for writes to
//! come instead of being revisited). Both must report the same final states, verdict,
//! condition counts, executions, races, hangs and completeness. This is the guard for any
//! change to how the revisiting search treats blocked iterations (issue 32): a spinner
//! whose blocked iteration a later write unblocks, one that no write ever unblocks (a hang),
//! and one that a later write makes stale.

use proptest::prelude::*;
use scopecheck_model::{check, CheckOptions, Engine, Verdict};

const ORDERS: [&str; 4] = [
    "cuda::memory_order_relaxed",
    "cuda::memory_order_acquire",
    "cuda::memory_order_release",
    "cuda::memory_order_seq_cst",
];

/// One statement of a thread body (`last` holds the value the last read returned).
#[derive(Clone, Debug)]
enum Stmt {
    Load {
        loc: usize,
        order: usize,
    },
    Store {
        loc: usize,
        value: i64,
        order: usize,
    },
    FetchAdd {
        loc: usize,
        order: usize,
    },
    Exchange {
        loc: usize,
        value: i64,
        order: usize,
    },
    /// Wait until the location holds `value`.
    Await {
        loc: usize,
        value: i64,
        order: usize,
    },
    /// Retry a compare-and-swap from `expected` to `value` until it succeeds.
    CasLoop {
        loc: usize,
        expected: i64,
        value: i64,
    },
    /// Test-and-test-and-set on the location: wait for 0, then CAS 0 -> 1, again on failure.
    Ttas {
        loc: usize,
    },
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let loc = 0..2usize;
    let val = 0..3i64;
    let order = 0..4usize;
    prop_oneof![
        2 => (loc.clone(), order.clone()).prop_map(|(loc, order)| Stmt::Load { loc, order }),
        4 => (loc.clone(), val.clone(), order.clone())
            .prop_map(|(loc, value, order)| Stmt::Store { loc, value, order }),
        2 => (loc.clone(), order.clone()).prop_map(|(loc, order)| Stmt::FetchAdd { loc, order }),
        1 => (loc.clone(), val.clone(), order.clone())
            .prop_map(|(loc, value, order)| Stmt::Exchange { loc, value, order }),
        3 => (loc.clone(), val.clone(), order.clone())
            .prop_map(|(loc, value, order)| Stmt::Await { loc, value, order }),
        2 => (loc.clone(), val.clone(), val.clone())
            .prop_map(|(loc, expected, value)| Stmt::CasLoop { loc, expected, value }),
        1 => loc.prop_map(|loc| Stmt::Ttas { loc }),
    ]
}

fn body(stmts: &[Stmt]) -> String {
    let mut out = String::new();
    for (i, n) in ["x", "y"].iter().enumerate() {
        out += &format!("  cuda::atomic_ref<int, cuda::thread_scope_device> a{i}(*{n});\n");
    }
    out += "  int last = 0;\n";
    for (k, s) in stmts.iter().enumerate() {
        out += &match s {
            Stmt::Load { loc, order } => {
                format!("  last = a{loc}.load({});\n", ORDERS[[0, 1, 3, 1][*order]])
            }
            Stmt::Store { loc, value, order } => {
                format!("  a{loc}.store({value}, {});\n", ORDERS[[0, 2, 3, 2][*order]])
            }
            Stmt::FetchAdd { loc, order } => {
                format!("  last = a{loc}.fetch_add(1, {});\n", ORDERS[*order])
            }
            Stmt::Exchange { loc, value, order } => {
                format!("  last = a{loc}.exchange({value}, {});\n", ORDERS[*order])
            }
            Stmt::Await { loc, value, order } => format!(
                "  while (a{loc}.load({}) != {value}) {{ }}\n",
                ORDERS[[0, 1, 3, 1][*order]]
            ),
            Stmt::CasLoop {
                loc,
                expected,
                value,
            } => format!(
                "  while (true) {{ int e{k} = {expected}; if (a{loc}.compare_exchange_strong(e{k}, {value}, cuda::memory_order_acquire)) break; }}\n"
            ),
            Stmt::Ttas { loc } => format!(
                "  while (true) {{\n    while (a{loc}.load(cuda::memory_order_relaxed) != 0) {{ }}\n    int e{k} = 0;\n    if (a{loc}.compare_exchange_strong(e{k}, 1, cuda::memory_order_acquire)) break;\n  }}\n"
            ),
        };
    }
    out
}

/// Two or three threads, each its own body in its own block, and a condition on memory.
fn program(threads: &[Vec<Stmt>], cond: (i64, i64)) -> String {
    let mut src = String::from("CUDA AwaitRandom\n{ x=0; y=0; }\n\n");
    for (t, stmts) in threads.iter().enumerate() {
        src += &format!(
            "P{t}@block {t}, gpu 0 (int* x, int* y) {{\n{}}}\n\n",
            body(stmts)
        );
    }
    src += &format!("exists (x={} /\\ y={})\n", cond.0, cond.1);
    src
}

fn programs() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::collection::vec(stmt(), 1..5), 2..4),
        (0..3i64, 0..3i64),
    )
        .prop_map(|(threads, cond)| program(&threads, cond))
}

/// What a comparison looks at.
fn summary(v: &Verdict) -> String {
    format!(
        "{:?} states {:?} counts {}+{} in {} races {:?} hangs {:?} complete {}",
        v.outcome,
        v.states,
        v.positive,
        v.negative,
        v.executions,
        v.races,
        v.hangs,
        v.is_complete()
    )
}

/// Checks `src` with the revisiting search and with the hole search, without symmetry, and
/// asserts both report the same, unless a timeout cut either.
fn agree(src: &str) -> Result<(), TestCaseError> {
    let p =
        scopecheck_litmus::parse(src).map_err(|e| TestCaseError::fail(format!("{e:?}\n{src}")))?;
    let run = |engine| {
        let opts = CheckOptions {
            engine,
            symmetry: false,
            timeout: Some(std::time::Duration::from_secs(2)),
            ..CheckOptions::default()
        };
        check(&p, &opts)
            .map(|v| (v.is_complete(), summary(&v)))
            .map_err(|e| format!("{e:?}"))
    };
    let (revisits, holes) = (run(Engine::Graphs), run(Engine::Holes));
    // A search the timeout cut proves nothing either way.
    let cut = |r: &Result<(bool, String), String>| matches!(r, Ok((false, _)));
    prop_assume!(!cut(&revisits) && !cut(&holes));
    prop_assert_eq!(
        &revisits,
        &holes,
        "revisiting search vs hole search\n{}",
        src
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn the_revisiting_search_reports_what_the_hole_search_reports_on_waiting_threads(
        src in programs()
    ) {
        agree(&src)?;
    }
}
