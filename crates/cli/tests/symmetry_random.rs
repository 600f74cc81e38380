//! Symmetry reduction against the full search on random programs with interchangeable threads.
//!
//! Each program has two or three copies of one random thread (each alone in its block, so they
//! are interchangeable) and maybe one other thread, over two locations, with a condition on
//! memory only. Exploring one order per orbit and weighting each kept execution by its images
//! (the hole search's symmetry reduction, which is what runs on such programs) must report
//! exactly what the revisiting search reports exploring every order: the same final states,
//! verdict, condition counts, executions, races and hangs. The same programs compiled to PTX
//! are checked by the hole search with and without the reduction.

use proptest::prelude::*;
use scopecheck_model::{check, CheckOptions, Engine, ModelKind, Verdict};

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
    Cas {
        loc: usize,
        expected: i64,
        value: i64,
        order: usize,
    },
    Fence {
        order: usize,
    },
    /// `if (last register read == value) { store }`
    IfStore {
        value: i64,
        loc: usize,
        store: i64,
        order: usize,
    },
    /// Wait until the location holds `value` (an await loop, explored by its exiting iteration).
    Await {
        loc: usize,
        value: i64,
    },
    /// `if (last register read == value)` divide by zero: a fault of the test.
    FaultIf {
        value: i64,
    },
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let loc = 0..2usize;
    let val = 0..3i64;
    let order = 0..4usize;
    prop_oneof![
        3 => (loc.clone(), order.clone()).prop_map(|(loc, order)| Stmt::Load { loc, order }),
        3 => (loc.clone(), val.clone(), order.clone())
            .prop_map(|(loc, value, order)| Stmt::Store { loc, value, order }),
        2 => (loc.clone(), order.clone()).prop_map(|(loc, order)| Stmt::FetchAdd { loc, order }),
        1 => (loc.clone(), val.clone(), order.clone())
            .prop_map(|(loc, value, order)| Stmt::Exchange { loc, value, order }),
        2 => (loc.clone(), val.clone(), val.clone(), order.clone()).prop_map(
            |(loc, expected, value, order)| Stmt::Cas { loc, expected, value, order }
        ),
        1 => order.clone().prop_map(|order| Stmt::Fence { order }),
        2 => (val.clone(), loc.clone(), val.clone(), order.clone()).prop_map(
            |(value, loc, store, order)| Stmt::IfStore { value, loc, store, order }
        ),
        1 => (loc, 1..3i64).prop_map(|(loc, value)| Stmt::Await { loc, value }),
        1 => (1..3i64).prop_map(|value| Stmt::FaultIf { value }),
    ]
}

const NAMES: [&str; 2] = ["x", "y"];

fn body(stmts: &[Stmt]) -> String {
    let mut out = String::new();
    for (i, n) in NAMES.iter().enumerate() {
        out += &format!("  cuda::atomic_ref<int, cuda::thread_scope_device> a{i}(*{n});\n");
    }
    out += "  int last = 0;\n";
    for (k, s) in stmts.iter().enumerate() {
        out += &match s {
            Stmt::Load { loc, order } => {
                format!("  last = a{loc}.load({});\n", ORDERS[[0, 1, 3, 1][*order]])
            }
            Stmt::Store { loc, value, order } => {
                // Stores take relaxed, release or seq_cst.
                let o = [0, 2, 3, 2][*order];
                format!("  a{loc}.store({value}, {});\n", ORDERS[o])
            }
            Stmt::FetchAdd { loc, order } => {
                format!("  last = a{loc}.fetch_add(1, {});\n", ORDERS[*order])
            }
            Stmt::Exchange { loc, value, order } => {
                format!("  last = a{loc}.exchange({value}, {});\n", ORDERS[*order])
            }
            Stmt::Cas {
                loc,
                expected,
                value,
                order,
            } => format!(
                "  int e{k} = {expected};\n  if (a{loc}.compare_exchange_strong(e{k}, {value}, {})) last = 7; else last = e{k};\n",
                ORDERS[*order]
            ),
            Stmt::Fence { order } => format!(
                "  cuda::atomic_thread_fence({}, cuda::thread_scope_device);\n",
                ORDERS[[1, 2, 3, 3][*order]]
            ),
            Stmt::IfStore {
                value,
                loc,
                store,
                order,
            } => format!(
                "  if (last == {value}) a{loc}.store({store}, {});\n",
                ORDERS[[0, 2, 3, 2][*order]]
            ),
            Stmt::Await { loc, value } => format!(
                "  while (a{loc}.load(cuda::memory_order_acquire) != {value}) {{ }}\n"
            ),
            Stmt::FaultIf { value } => {
                format!("  if (last == {value}) {{ int z{k} = 0; last = 5 / z{k}; }}\n")
            }
        };
    }
    out
}

fn program(shared: &[Stmt], copies: usize, other: &Option<Vec<Stmt>>, cond: (i64, i64)) -> String {
    let mut src = String::from("CUDA Random\n{ x=0; y=0; }\n\n");
    let params = "(int* x, int* y)";
    let mut t = 0;
    for _ in 0..copies {
        src += &format!("P{t}@block {t}, gpu 0 {params} {{\n{}}}\n\n", body(shared));
        t += 1;
    }
    if let Some(o) = other {
        src += &format!("P{t}@block {t}, gpu 0 {params} {{\n{}}}\n\n", body(o));
    }
    src += &format!("exists (x={} /\\ y={})\n", cond.0, cond.1);
    src
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

/// A random program with interchangeable threads: two or three copies of one thread body,
/// maybe one other thread, and a condition on memory.
fn programs() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(stmt(), 1..4),
        2..4usize,
        prop::option::of(prop::collection::vec(stmt(), 1..4)),
        (0..3i64, 0..3i64),
    )
        .prop_map(|(shared, copies, other, cond)| program(&shared, copies, &other, cond))
}

/// Checks `src` under `model` without symmetry reduction (`full`: the engine that then runs)
/// and with it, and asserts both report the same, unless a timeout cut either.
fn agree(src: &str, model: Option<ModelKind>, full: Engine) -> Result<(), TestCaseError> {
    let p =
        scopecheck_litmus::parse(src).map_err(|e| TestCaseError::fail(format!("{e:?}\n{src}")))?;
    let run = |engine, symmetry| {
        let timeout = Some(std::time::Duration::from_secs(2));
        let opts = CheckOptions {
            model,
            engine,
            symmetry,
            timeout,
            ..CheckOptions::default()
        };
        check(&p, &opts)
            .map(|v| (v.is_complete(), summary(&v)))
            .map_err(|e| format!("{e:?}"))
    };
    let (full, reduced) = (run(full, false), run(Engine::Auto, true));
    // A search the timeout cut proves nothing either way.
    let cut = |r: &Result<(bool, String), String>| matches!(r, Ok((false, _)));
    prop_assume!(!cut(&full) && !cut(&reduced));
    prop_assert_eq!(
        &reduced,
        &full,
        "with symmetry reduction vs without ({:?})\n{}",
        model,
        src
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Scoped C11: the revisiting search explores every order.
    #[test]
    fn symmetry_reduction_reports_what_the_full_search_reports(src in programs()) {
        agree(&src, None, Engine::Graphs)?;
    }

    /// Under PTX both runs are the hole search: with the reduction (one state per orbit)
    /// and without it (every order).
    #[test]
    fn symmetry_reduction_under_ptx_reports_what_the_hole_search_reports(src in programs()) {
        agree(&src, Some(ModelKind::Ptx), Engine::Auto)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Under PTX the candidate enumerator, which builds each execution whole and judges it,
    /// is the oracle of everything the hole search prunes: orbits, and branches where a
    /// spinner can no longer read the latest write (faults of other threads included).
    #[test]
    fn the_hole_search_under_ptx_reports_what_the_candidate_enumerator_reports(src in programs()) {
        agree(&src, Some(ModelKind::Ptx), Engine::Candidates)?;
    }
}
