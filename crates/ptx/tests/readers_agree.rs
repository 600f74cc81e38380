//! The two PTX readers agree: an instruction written in the litmus dialect
//! (`scopecheck_litmus`) and the same instruction in a PTX module (`scopecheck_ptx`) lower to
//! the same memory-model event: same kind, order, scope, type, operation. Both read their
//! spellings and defaults from the one table, `scopecheck_ir::ptx`; this test fails when one
//! reader starts to give an opcode or qualifier another meaning than the other.

use scopecheck_ir::{InstrKind, LocId, Program, RmwKind};
use scopecheck_ptx::lower::{lower, Arg, Launch};

/// The memory-model content of an event, without registers and addresses (which the two
/// readers spell differently: a location name in the dialect, a pointer in a module).
fn event(kind: &InstrKind) -> Option<String> {
    Some(match kind {
        InstrKind::Load {
            ty, order, scope, ..
        } => format!("load {ty:?} {order:?} {scope:?}"),
        InstrKind::Store {
            ty, order, scope, ..
        } => format!("store {ty:?} {order:?} {scope:?}"),
        InstrKind::Rmw {
            dst,
            kind,
            ty,
            order,
            scope,
            ..
        } => {
            let op = match kind {
                RmwKind::Op(op, _) => format!("{op:?}"),
                RmwKind::Cas { .. } => "cas".to_string(),
            };
            let returns = dst.is_some();
            format!("rmw {op} returns={returns} {ty:?} {order:?} {scope:?}")
        }
        InstrKind::Fence {
            order,
            scope,
            spaces,
        } => format!("fence {order:?} {scope:?} {spaces:?}"),
        InstrKind::Barrier {
            id,
            kind,
            count,
            spaces,
        } => format!("barrier {id:?} {kind:?} {count:?} {spaces:?}"),
        _ => return None,
    })
}

/// The events of thread `t` of `p`.
fn events(p: &Program, t: usize) -> Vec<String> {
    p.threads[t]
        .code
        .iter()
        .filter_map(|i| event(&i.kind))
        .collect()
}

/// `litmus` as the only instruction of a one-thread litmus test over location `x`, and
/// `module` as the only instruction (after reading its parameter into `%rd1`) of a kernel
/// given a pointer to that same `x`; the events of each.
fn both(litmus: &str, module: &str) -> (Vec<String>, Vec<String>) {
    let test = format!("PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n {litmus} ;\nexists (x == 0)\n");
    let mut program = scopecheck_litmus::parse(&test)
        .unwrap_or_else(|e| panic!("the dialect reads `{litmus}`: {e}"));
    let from_litmus = events(&program, 0);
    let text = format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 k_param_0)\n{{\n\
         .reg .pred %p<2>;\n.reg .b32 %r<3>;\n.reg .b64 %rd<3>;\n\
         ld.param.u64 %rd1, [k_param_0];\n{module};\nret;\n}}\n"
    );
    let m = scopecheck_ptx::parse(&text).unwrap_or_else(|e| panic!("`{module}`: {e}"));
    let x = program
        .locations
        .iter()
        .position(|l| l.name == "x")
        .expect("the test declares x");
    let launch = Launch {
        kernel: "k".into(),
        grid: [1; 3],
        block: [1; 3],
        cluster: [1; 3],
        gpu: 0,
        args: vec![Arg::Pointer(LocId(x as u32))],
        first_thread: 1,
        shared_bytes: 0,
    };
    let threads = lower(&m, &launch, &mut program)
        .unwrap_or_else(|e| panic!("`{module}` lowers: {}", e.message));
    assert_eq!(threads.len(), 1);
    let from_module = events(&program, threads[0].0 as usize);
    (from_litmus, from_module)
}

#[test]
fn one_instruction_means_the_same_in_both_readers() {
    // Each pair is one PTX instruction in the dialect's spelling and in a module's (typed,
    // with its state space, through a register pointer). Each lowers to exactly one event,
    // so both lists have one element and must be equal.
    let cases = [
        ("fence.sc.gpu", "fence.sc.gpu"),
        ("fence.acq_rel.cta", "fence.acq_rel.cta"),
        // No semantics: `.acq_rel`, the table's default.
        ("fence.sys", "fence.sys"),
        ("membar.gl", "membar.gl"),
        ("membar.cta", "membar.cta"),
        (
            "ld.acquire.gpu.u32 r0, x",
            "ld.acquire.gpu.global.u32 %r1, [%rd1]",
        ),
        (
            "ld.relaxed.cluster.u32 r0, x",
            "ld.relaxed.cluster.global.u32 %r1, [%rd1]",
        ),
        ("ld.weak.u32 r0, x", "ld.weak.global.u32 %r1, [%rd1]"),
        (
            "ld.volatile.u32 r0, x",
            "ld.volatile.global.u32 %r1, [%rd1]",
        ),
        (
            "st.release.sys.u32 x, 1",
            "st.release.sys.global.u32 [%rd1], 1",
        ),
        ("st.u32 x, 1", "st.global.u32 [%rd1], 1"),
        // No semantics and no scope on an RMW: `.relaxed.gpu`, the table's default.
        (
            "atom.add.u32 r0, x, 1",
            "atom.global.add.u32 %r1, [%rd1], 1",
        ),
        (
            "atom.acq_rel.gpu.cas.b32 r0, x, 0, 1",
            "atom.acq_rel.gpu.global.cas.b32 %r1, [%rd1], 0, 1",
        ),
        (
            "atom.acquire.sys.exch.b32 r0, x, 2",
            "atom.acquire.sys.global.exch.b32 %r1, [%rd1], 2",
        ),
        (
            "red.release.cta.max.s32 x, 1",
            "red.release.cta.global.max.s32 [%rd1], 1",
        ),
        ("bar.sync 0", "bar.sync 0"),
        ("barrier.sync 1, 32", "barrier.sync 1, 32"),
        ("bar.arrive 2, 32", "bar.arrive 2, 32"),
    ];
    for (litmus, module) in cases {
        let (a, b) = both(litmus, module);
        assert_eq!(a.len(), 1, "`{litmus}`: {a:?}");
        assert_eq!(a, b, "`{litmus}` vs `{module}`");
    }
}
