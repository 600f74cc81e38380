//! Random `.cu` launches, checked four ways: symmetry on and off, commuting atomics on and off.
//!
//! Each program is a host `scopecheck_main` that zeroes four device words, launches one kernel
//! of two to four single-thread blocks, copies the words back after the kernel and asserts a
//! random final state. The blocks of the launch run the same code, so the front-end gives them
//! the same IR and they form one class of interchangeable threads (`symmetry`), unless a
//! statement guarded by `blockIdx.x == 0` gives block 0 a role of its own. The kernel mixes the
//! updates the commuting reduction collapses (relaxed RMWs of one operation, result dropped, on
//! the counters `c`, `d`) with what must switch it off (loads of a counter, a used result,
//! another operation, a store, an acquire or SC fence) and with message passing and awaits on
//! `x`, `y`. The host's loads after the kernel read the counters' final values: the case where
//! a leaf's orbit (symmetry) and the orders its chains stand for (commute) must compose.
//!
//! The search with neither reduction is the oracle; each of the three other combinations must
//! report the same verdict, final states, condition counts, executions, races and hangs
//! (docs/explore.md, "Symmetry and commuting atomics").

use proptest::prelude::*;
use scopecheck_model::{check, CheckOptions, Engine, ModelKind, Verdict};

const RELAXED: &str = "cuda::memory_order_relaxed";
const ORDERS: [&str; 4] = [
    RELAXED,
    "cuda::memory_order_acquire",
    "cuda::memory_order_release",
    "cuda::memory_order_acq_rel",
];
const OPS: [&str; 4] = ["fetch_add", "fetch_or", "fetch_xor", "fetch_max"];
const CTRS: [&str; 2] = ["c", "d"];
const LOCS: [&str; 2] = ["x", "y"];

/// One statement of the kernel body (`last` holds the value the last read returned).
#[derive(Clone, Debug)]
enum Stmt {
    /// A relaxed update of a counter, result dropped: what the reduction collapses.
    Update {
        ctr: usize,
        value: i64,
    },
    /// The same RMW with its result kept.
    Observed {
        ctr: usize,
        value: i64,
    },
    /// Another operation on the counter than the program's.
    OtherOp {
        ctr: usize,
        op: usize,
    },
    /// A load of a counter in the kernel (it may read an intermediate value).
    LoadCounter {
        ctr: usize,
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
    /// An acquire, release or acq_rel fence, or (order 4) a seq_cst one.
    Fence {
        order: usize,
    },
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
    /// The statement for block 0 only: a role, so block 0 is no longer interchangeable.
    Block0(Box<Stmt>),
}

fn plain() -> impl Strategy<Value = Stmt> {
    let two = 0..2usize;
    prop_oneof![
        8 => (two.clone(), 1..3i64).prop_map(|(ctr, value)| Stmt::Update { ctr, value }),
        1 => (two.clone(), 1..3i64).prop_map(|(ctr, value)| Stmt::Observed { ctr, value }),
        1 => (two.clone(), 0..4usize).prop_map(|(ctr, op)| Stmt::OtherOp { ctr, op }),
        1 => two.clone().prop_map(|ctr| Stmt::LoadCounter { ctr }),
        2 => (two.clone(), any::<bool>()).prop_map(|(loc, acquire)| Stmt::Load { loc, acquire }),
        2 => (two.clone(), 1..3i64, any::<bool>())
            .prop_map(|(loc, value, release)| Stmt::Store { loc, value, release }),
        1 => (1..5usize).prop_map(|order| Stmt::Fence { order }),
        2 => (0..3i64, two.clone()).prop_map(|(value, ctr)| Stmt::IfUpdate { value, ctr }),
        1 => (two, 1..3i64).prop_map(|(loc, value)| Stmt::Await { loc, value }),
    ]
}

fn stmt() -> impl Strategy<Value = Stmt> {
    prop_oneof![
        9 => plain(),
        1 => plain().prop_map(|s| Stmt::Block0(Box::new(s))),
    ]
}

fn line(s: &Stmt, op: &str) -> String {
    match s {
        Stmt::Update { ctr, value } => format!("a{}.{op}({value}, {RELAXED});", CTRS[*ctr]),
        Stmt::Observed { ctr, value } => {
            format!("last = a{}.{op}({value}, {RELAXED});", CTRS[*ctr])
        }
        Stmt::OtherOp { ctr, op: other } => {
            format!("a{}.{}(1, {RELAXED});", CTRS[*ctr], OPS[*other])
        }
        Stmt::LoadCounter { ctr } => format!("last = a{}.load({RELAXED});", CTRS[*ctr]),
        Stmt::Load { loc, acquire } => format!(
            "last = a{}.load({});",
            LOCS[*loc],
            ORDERS[usize::from(*acquire)]
        ),
        Stmt::Store {
            loc,
            value,
            release,
        } => format!(
            "a{}.store({value}, {});",
            LOCS[*loc],
            ORDERS[2 * usize::from(*release)]
        ),
        Stmt::Fence { order } => format!(
            "cuda::atomic_thread_fence({}, cuda::thread_scope_device);",
            ORDERS
                .get(*order)
                .copied()
                .unwrap_or("cuda::memory_order_seq_cst")
        ),
        Stmt::IfUpdate { value, ctr } => {
            format!("if (last == {value}) a{}.{op}(1, {RELAXED});", CTRS[*ctr])
        }
        Stmt::Await { loc, value } => format!(
            "while (a{}.load(cuda::memory_order_acquire) != {value}) {{ }}",
            LOCS[*loc]
        ),
        Stmt::Block0(s) => format!("if (blockIdx.x == 0) {{ {} }}", line(s, op)),
    }
}

/// The `.cu` file: the kernel of `stmts` with the counters' operation `op`, launched as
/// `blocks` single-thread blocks, and a host assertion that the final state is `cond`.
fn program(stmts: &[Stmt], op: usize, blocks: usize, cond: [i64; 4]) -> String {
    let names = CTRS.iter().chain(&LOCS).copied().collect::<Vec<_>>();
    let mut src = String::from("__global__ void k(int *c, int *d, int *x, int *y) {\n");
    for n in &names {
        src += &format!("    cuda::atomic_ref<int, cuda::thread_scope_device> a{n}(*{n});\n");
    }
    src += "    int last = 0;\n";
    for s in stmts {
        src += &format!("    {}\n", line(s, OPS[op]));
    }
    src += "}\n\nvoid scopecheck_main() {\n    int *c, *d, *x, *y;\n";
    for n in &names {
        src +=
            &format!("    cudaMalloc(&{n}, sizeof(int));\n    cudaMemset({n}, 0, sizeof(int));\n");
    }
    src += &format!("    k<<<{blocks}, 1>>>(c, d, x, y);\n");
    for n in &names {
        src += &format!(
            "    int h{n};\n    cudaMemcpy(&h{n}, {n}, sizeof(int), cudaMemcpyDeviceToHost);\n"
        );
    }
    src += &format!(
        "    assert(!(hc == {} && hd == {} && hx == {} && hy == {}));\n}}\n",
        cond[0], cond[1], cond[2], cond[3]
    );
    src
}

/// What the four runs must agree on. A hang is compared by who spins where and who waits at
/// a barrier, not by its explanation: with the reduction a hang leaf can be reached first
/// with the host thread that waits for the kernel named as starved (`progress` OBE) where the
/// full search first explains it as a fair schedule nobody releases; both describe the same
/// spinning threads, and which explanation comes first depends on the leaf order.
fn summary(v: &Verdict) -> String {
    let hangs: Vec<String> = v
        .hangs
        .iter()
        .map(|h| format!("{:?} at barrier {:?}", h.spinning, h.at_barrier))
        .collect();
    format!(
        "{:?} states {:?} counts {}+{} in {} races {:?} hangs {:?} incomplete {:?}",
        v.outcome, v.states, v.positive, v.negative, v.executions, v.races, hangs, v.incomplete
    )
}

/// One to five statements, two to four blocks.
fn programs() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(stmt(), 1..6),
        0..OPS.len(),
        2..5usize,
        (0..7i64, 0..7i64, 0..3i64, 0..3i64),
    )
        .prop_map(|(stmts, op, blocks, (c, d, x, y))| program(&stmts, op, blocks, [c, d, x, y]))
}

/// Checks `src` under `model` four ways and asserts the three reduced runs report what the
/// run with neither reduction reports, unless a timeout cut one.
fn agree(src: &str, model: Option<ModelKind>) -> Result<(), TestCaseError> {
    let (p, _) = scopecheck_cuda::parse_cuda(src)
        .map_err(|e| TestCaseError::fail(format!("{e:?}\n{src}")))?;
    let run = |symmetry, commute| {
        let opts = CheckOptions {
            model,
            engine: Engine::Auto,
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
    let neither = run(false, false);
    prop_assume!(!cut(&neither));
    for (symmetry, commute) in [(true, false), (false, true), (true, true)] {
        let reduced = run(symmetry, commute);
        prop_assume!(!cut(&reduced));
        prop_assert_eq!(
            &reduced,
            &neither,
            "symmetry {} commute {} vs neither ({:?})\n{}",
            symmetry,
            commute,
            model,
            src
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Scoped C11 (the language view's model).
    #[test]
    fn a_launch_reports_the_same_with_either_reduction(src in programs()) {
        agree(&src, None)?;
    }

    /// PTX's model on the same programs.
    #[test]
    fn a_launch_reports_the_same_with_either_reduction_under_ptx(src in programs()) {
        agree(&src, Some(ModelKind::Ptx))?;
    }
}

/// The case that failed before the forms named blocks by their reads of a blind update:
/// 4 blocks each add 1 to one counter the host reads after the kernel. One class of 4
/// blocks; the reduction explores one order of the 4 adds and counts 4! = 24; the leaf's host
/// read reads the last add of that order, but which block made it is the representative's
/// choice, so the leaf is its own orbit (size 1): 24 executions in all four runs.
#[test]
fn four_blocks_adding_to_a_counter_read_by_the_host() {
    let src = program(&[Stmt::Update { ctr: 0, value: 1 }], 0, 4, [4, 0, 0, 0]);
    let (p, _) = scopecheck_cuda::parse_cuda(&src).expect("parses");
    for (symmetry, commute) in [(false, false), (true, false), (false, true), (true, true)] {
        let opts = CheckOptions {
            symmetry,
            commute,
            ..CheckOptions::default()
        };
        let v = check(&p, &opts).expect("checks");
        assert!(v.is_complete(), "{symmetry} {commute}");
        assert_eq!(v.executions, 24, "symmetry {symmetry} commute {commute}");
        assert_eq!(v.states.len(), 1, "symmetry {symmetry} commute {commute}");
    }
}
