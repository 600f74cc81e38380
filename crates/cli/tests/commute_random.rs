//! The commuting-atomics reduction against the full search on random programs.
//!
//! Each program has two to four threads over two counters `c`, `d` (mostly updated by relaxed
//! RMWs of one operation whose result is dropped: what the reduction collapses) and two plain
//! or atomic locations `x`, `y`, with statements that must switch the reduction off for a
//! counter when they touch it (a load of it, a used result, an acquire or release RMW, another
//! operation, a store, an acquire fence or an SC fence after an update) and statements that
//! synchronize through `x` and `y` (release/acquire message passing, awaits), which order the
//! updates the reduction must count. Exploring one coherence order of the updates (`commute`)
//! must report exactly what exploring every order reports: the same verdict, final states,
//! condition counts, executions, races and hangs, under scoped C11 (the revisiting search, and
//! the hole search with symmetry where threads are copies) and PTX (the hole search).

use proptest::prelude::*;
use scopecheck_model::{check, CheckOptions, Engine, ModelKind, Verdict};

const RELAXED: &str = "cuda::memory_order_relaxed";
const ORDERS: [&str; 4] = [
    RELAXED,
    "cuda::memory_order_acquire",
    "cuda::memory_order_release",
    "cuda::memory_order_acq_rel",
];
const OPS: [&str; 6] = [
    "fetch_add",
    "fetch_or",
    "fetch_xor",
    "fetch_max",
    "fetch_min",
    "fetch_and",
];

/// One statement of a thread body (`last` holds the value the last read returned).
#[derive(Clone, Debug)]
enum Stmt {
    /// A relaxed update of a counter, result dropped: what the reduction collapses.
    Update {
        ctr: usize,
        value: i64,
    },
    /// The same RMW with an order other than relaxed, or with its result used.
    Observed {
        ctr: usize,
        value: i64,
        order: usize,
    },
    /// Another operation on the counter than the program's.
    OtherOp {
        ctr: usize,
        op: usize,
        value: i64,
    },
    /// A load of a counter (it may read an intermediate value).
    LoadCounter {
        ctr: usize,
    },
    /// A store to a counter.
    StoreCounter {
        ctr: usize,
        value: i64,
    },
    Load {
        loc: usize,
        acquire: bool,
    },
    Store {
        loc: usize,
        value: i64,
        release: bool,
    },
    Fence {
        order: usize,
    },
    FenceSc,
    /// `if (last == value)` update a counter.
    IfUpdate {
        value: i64,
        ctr: usize,
    },
    /// Wait until `x` or `y` holds `value`.
    Await {
        loc: usize,
        value: i64,
    },
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let two = 0..2usize;
    let val = 0..3i64;
    prop_oneof![
        8 => (two.clone(), 1..4i64).prop_map(|(ctr, value)| Stmt::Update { ctr, value }),
        1 => (two.clone(), val.clone(), 0..4usize)
            .prop_map(|(ctr, value, order)| Stmt::Observed { ctr, value, order }),
        1 => (two.clone(), 0..6usize, val.clone())
            .prop_map(|(ctr, op, value)| Stmt::OtherOp { ctr, op, value }),
        1 => two.clone().prop_map(|ctr| Stmt::LoadCounter { ctr }),
        1 => (two.clone(), val.clone()).prop_map(|(ctr, value)| Stmt::StoreCounter { ctr, value }),
        3 => (two.clone(), any::<bool>()).prop_map(|(loc, acquire)| Stmt::Load { loc, acquire }),
        3 => (two.clone(), 1..3i64, any::<bool>())
            .prop_map(|(loc, value, release)| Stmt::Store { loc, value, release }),
        1 => (1..4usize).prop_map(|order| Stmt::Fence { order }),
        1 => Just(Stmt::FenceSc),
        2 => (val, two.clone()).prop_map(|(value, ctr)| Stmt::IfUpdate { value, ctr }),
        1 => (two, 1..3i64).prop_map(|(loc, value)| Stmt::Await { loc, value }),
    ]
}

const CTRS: [&str; 2] = ["c", "d"];
const LOCS: [&str; 2] = ["x", "y"];

fn body(stmts: &[Stmt], op: usize) -> String {
    let mut out = String::new();
    for n in CTRS.iter().chain(&LOCS) {
        out += &format!("  cuda::atomic_ref<int, cuda::thread_scope_device> a{n}(*{n});\n");
    }
    out += "  int last = 0;\n";
    let op = OPS[op];
    for s in stmts {
        out += &match s {
            Stmt::Update { ctr, value } => {
                format!("  a{}.{op}({value}, {RELAXED});\n", CTRS[*ctr])
            }
            Stmt::Observed { ctr, value, order } => {
                format!("  last = a{}.{op}({value}, {});\n", CTRS[*ctr], ORDERS[*order])
            }
            Stmt::OtherOp { ctr, op, value } => {
                format!("  a{}.{}({value}, {RELAXED});\n", CTRS[*ctr], OPS[*op])
            }
            Stmt::LoadCounter { ctr } => format!("  last = a{}.load({RELAXED});\n", CTRS[*ctr]),
            Stmt::StoreCounter { ctr, value } => {
                format!("  a{}.store({value}, {RELAXED});\n", CTRS[*ctr])
            }
            Stmt::Load { loc, acquire } => format!(
                "  last = a{}.load({});\n",
                LOCS[*loc],
                ORDERS[usize::from(*acquire)]
            ),
            Stmt::Store {
                loc,
                value,
                release,
            } => format!(
                "  a{}.store({value}, {});\n",
                LOCS[*loc],
                ORDERS[2 * usize::from(*release)]
            ),
            Stmt::Fence { order } => format!(
                "  cuda::atomic_thread_fence({}, cuda::thread_scope_device);\n",
                ORDERS[*order]
            ),
            Stmt::FenceSc => "  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);\n".to_string(),
            Stmt::IfUpdate { value, ctr } => {
                format!("  if (last == {value}) a{}.{op}(1, {RELAXED});\n", CTRS[*ctr])
            }
            Stmt::Await { loc, value } => format!(
                "  while (a{}.load(cuda::memory_order_acquire) != {value}) {{ }}\n",
                LOCS[*loc]
            ),
        };
    }
    out
}

/// A program of `threads` bodies (a body may repeat, making copies interchangeable), with the
/// counters' update operation `op` and a condition on every location.
fn program(threads: &[Vec<Stmt>], op: usize, cond: [i64; 4]) -> String {
    let mut src = String::from("CUDA Random\n{ c=0; d=0; x=0; y=0; }\n\n");
    let params = "(int* c, int* d, int* x, int* y)";
    for (t, b) in threads.iter().enumerate() {
        src += &format!("P{t}@block {t}, gpu 0 {params} {{\n{}}}\n\n", body(b, op));
    }
    src += &format!(
        "exists (c={} /\\ d={} /\\ x={} /\\ y={})\n",
        cond[0], cond[1], cond[2], cond[3]
    );
    src
}

fn summary(v: &Verdict) -> String {
    format!(
        "{:?} states {:?} counts {}+{} in {} races {:?} hangs {:?} incomplete {:?}",
        v.outcome, v.states, v.positive, v.negative, v.executions, v.races, v.hangs, v.incomplete
    )
}

/// Two to four threads; with one chance in three the first two are copies of one body.
fn programs() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::collection::vec(stmt(), 1..5), 2..5),
        any::<bool>(),
        0..6usize,
        (0..7i64, 0..7i64, 0..3i64, 0..3i64),
    )
        .prop_map(|(mut threads, copy, op, (c, d, x, y))| {
            if copy {
                threads[1] = threads[0].clone();
            }
            program(&threads, op, [c, d, x, y])
        })
}

/// Checks `src` under `model` with every order of the updates (`--commute off`, no symmetry:
/// `full` is the engine that then runs) and with the reduction, with and without symmetry,
/// and asserts all report the same, unless a timeout cut one.
fn agree(src: &str, model: Option<ModelKind>, full: Engine) -> Result<(), TestCaseError> {
    let p =
        scopecheck_litmus::parse(src).map_err(|e| TestCaseError::fail(format!("{e:?}\n{src}")))?;
    let run = |engine, symmetry, commute| {
        let opts = CheckOptions {
            model,
            engine,
            symmetry,
            commute,
            timeout: Some(std::time::Duration::from_secs(3)),
            ..CheckOptions::default()
        };
        check(&p, &opts)
            .map(|v| (v.is_complete(), summary(&v)))
            .map_err(|e| format!("{e:?}"))
    };
    let cut = |r: &Result<(bool, String), String>| matches!(r, Ok((false, _)));
    let every = run(full, false, false);
    prop_assume!(!cut(&every));
    for symmetry in [false, true] {
        let one = run(Engine::Auto, symmetry, true);
        prop_assume!(!cut(&one));
        prop_assert_eq!(
            &one,
            &every,
            "one order of the updates (symmetry {}) vs every order ({:?})\n{}",
            symmetry,
            model,
            src
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Scoped C11: the revisiting search (and the hole search under symmetry) against the
    /// revisiting search exploring every order.
    #[test]
    fn one_order_of_commuting_updates_reports_what_every_order_reports(src in programs()) {
        agree(&src, None, Engine::Graphs)?;
    }

    /// PTX: the hole search with and without the reduction.
    #[test]
    fn one_order_of_commuting_updates_under_ptx_reports_what_every_order_reports(src in programs()) {
        agree(&src, Some(ModelKind::Ptx), Engine::Auto)?;
    }
}
