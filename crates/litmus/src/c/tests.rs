//! Tests of the C dialect: the IR produced for small threads, errors with their positions,
//! the examples, and a never-panics property.

use crate::tests::{err_at, expected};
use crate::{parse, parse_with_warnings};
use scopecheck_ir::*;

fn ok_w(src: &str) -> (Program, Vec<Diagnostic>) {
    match parse_with_warnings(src) {
        Ok(p) => p,
        Err(e) => panic!(
            "unexpected error at {}:{}: {}",
            e.line(),
            e.column(),
            e.message
        ),
    }
}

fn ok(src: &str) -> Program {
    ok_w(src).0
}

/// One device thread with `params` and `body`; the body starts on line 3.
fn one(params: &str, body: &str) -> String {
    format!("C t\nP0 ({params}) {{\n{body}\n}}\nexists true\n")
}

pub(crate) fn kinds(p: &Program, t: usize) -> Vec<InstrKind> {
    p.threads[t].code.iter().map(|i| i.kind.clone()).collect()
}

pub(crate) fn reg(p: &Program, t: usize, name: &str) -> RegId {
    p.threads[t]
        .reg(name)
        .unwrap_or_else(|| panic!("no register {name} in {:?}", p.threads[t].registers))
}

pub(crate) fn at(loc: u32) -> Address {
    Address::loc(LocId(loc))
}

#[test]
fn examples_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/c");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let src = std::fs::read_to_string(&path).unwrap();
        let (p, w) = match parse_with_warnings(&src) {
            Ok(x) => x,
            Err(e) => panic!(
                "{}:{}:{}: {}",
                path.display(),
                e.line(),
                e.column(),
                e.message
            ),
        };
        // Only the local-memory example narrows a scope.
        let local = path.to_string_lossy().contains("local+barrier");
        assert_eq!(!w.is_empty(), local, "{}: {w:?}", path.display());
        assert!(p.arch.is_c());
        n += 1;
    }
    assert!(n >= 6);
}

fn dev(gpu: u32, cluster: u32, cta: u32, warp: Option<u32>) -> Placement {
    Placement::Device(DevicePlacement {
        gpu,
        cluster,
        cta,
        warp,
    })
}

fn load(dst: RegId, loc: u32, order: Order, scope: Scope) -> InstrKind {
    InstrKind::Load {
        dst,
        addr: at(loc),
        ty: IntType::S32,
        order,
        scope,
    }
}

fn store(loc: u32, value: Operand, order: Order, scope: Scope) -> InstrKind {
    InstrKind::Store {
        addr: at(loc),
        ty: IntType::S32,
        value,
        order,
        scope,
    }
}

const IMM1: Operand = Operand::Imm(1);

/// The access `k`, on a 32-bit unsigned location.
fn unsigned(mut k: InstrKind) -> InstrKind {
    if let InstrKind::Load { ty, .. } | InstrKind::Store { ty, .. } | InstrKind::Rmw { ty, .. } =
        &mut k
    {
        *ty = IntType::U32;
    }
    k
}

// ---- header, placement, initial state, parameters ----

#[test]
fn header_description_and_placements() {
    let p = ok(
        "OPENCL MP (* c *)\n\"desc\"\n{ x=1; [y]=2; int z = -3; 1:r0=5; P2:q=7; }\n\
        P0@wg 1, dev 0 (global int* x) { *x = 1; }\n\
        P1@sg 2, wg 1, dev 0, wi 5 (int* y) { int r0 = *y; }\n\
        P2@block 0, cluster 4, gpu 1 () { int q2 = q; }\n\
        P3@host (host int* h) { *h = 1; }\n\
        P4 (void) { }\n\
        P5@thread 3, warp 1, cta 2, device 2 () { }\n\
        exists (1:r0=1 /\\ P1:r0 == 1 /\\ x=2 /\\ [z]=0)",
    );
    assert_eq!(p.name, "MP");
    assert_eq!(p.description.as_deref(), Some("desc"));
    assert_eq!(p.arch, Arch::OpenCl);
    let pl: Vec<Placement> = p.threads.iter().map(|t| t.placement).collect();
    // Clusters: the named one is 4; the others get fresh numbers from 5 on, per (gpu, cta).
    assert_eq!(
        pl,
        vec![
            dev(0, 5, 1, None),
            dev(0, 5, 1, Some(2)),
            dev(1, 4, 0, None),
            Placement::Host,
            dev(0, 6, 0, None),
            dev(2, 7, 2, Some(1)),
        ]
    );
    let names: Vec<&str> = p.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["P0", "P1", "P2", "P3", "P4", "P5"]);
    let locs: Vec<(&str, Value, MemorySpace)> = p
        .locations
        .iter()
        .map(|l| (l.name.as_str(), l.init, l.space))
        .collect();
    assert_eq!(
        locs,
        vec![
            ("x", 1, MemorySpace::Global),
            ("y", 2, MemorySpace::Global),
            ("z", -3, MemorySpace::Global),
            ("h", 0, MemorySpace::HostMapped),
        ]
    );
    // The initial state's registers: P1's `r0` is the local it declares; P2's `q` is usable
    // without a declaration.
    assert_eq!(p.threads[1].init_regs, vec![(reg(&p, 1, "r0"), 5)]);
    assert_eq!(p.threads[2].init_regs, vec![(reg(&p, 2, "q"), 7)]);
    assert_eq!(
        kinds(&p, 2),
        vec![InstrKind::Mov {
            dst: reg(&p, 2, "q2"),
            src: Operand::Reg(reg(&p, 2, "q"))
        }]
    );
    assert_eq!(p.condition.quantifier, Quantifier::Exists);
    let mut obs = Vec::new();
    p.condition.prop.observables(&mut obs);
    assert_eq!(
        obs,
        vec![
            Observable::Reg(ThreadId(1), reg(&p, 1, "r0")),
            Observable::Loc(LocId(0)),
            Observable::Loc(LocId(2))
        ]
    );
    assert_eq!(p.threads[0].span.map(|s| (s.line, s.column)), Some((4, 1)));
}

#[test]
fn header_words_and_conditions() {
    for h in ["C", "CUDA", "OPENCL"] {
        let p = ok(&format!(
            "{h} T\nP0 (int* x) {{ int r = *x; }}\nlocations [x; 0:r;]\n~exists (0:r=1 \\/ ~(x != 0))"
        ));
        let dialect = if h == "OPENCL" { Arch::OpenCl } else { Arch::C };
        assert_eq!(p.arch, dialect);
        assert_eq!(p.condition.quantifier, Quantifier::NotExists);
        assert_eq!(p.extra_observables.len(), 2);
    }
    let p = ok("C T\nP0 () { }\nforall 0==0");
    assert_eq!(p.condition.quantifier, Quantifier::Forall);
    // A condition on a register the thread does not have.
    err_at(
        "C T\nP0 (int* x) { int r = *x; }\nexists (0:s=1)",
        3,
        11,
        "never uses register `s`",
    );
    err_at("C T\nP0 () { }\nexists (P3:r=1)", 3, 9, "no thread P3");
    err_at(
        "C T\nP0 () { }\nexists (x=1) junk",
        3,
        14,
        "nothing after the condition",
    );
}

#[test]
fn initial_state_spaces_and_types() {
    let p = ok(
        "C T\n{ local int a; host int b = 1; managed int c=2; pageable int d; e@shared=3; \
         global int* f = 4; __shared__ int g; uint32_t h = 0x10; }\n\
         P0 (local int* a) { *a = 1; }\nexists true",
    );
    let sp: Vec<(MemorySpace, Value)> = p.locations.iter().map(|l| (l.space, l.init)).collect();
    assert_eq!(
        sp,
        vec![
            (MemorySpace::Shared, 0),
            (MemorySpace::HostMapped, 1),
            (MemorySpace::Managed, 2),
            (MemorySpace::HostPageable, 0),
            (MemorySpace::Shared, 3),
            (MemorySpace::Global, 4),
            (MemorySpace::Shared, 0),
            (MemorySpace::Global, 16),
        ]
    );
    err_at(
        "C T\n{ x=0; x=1; }\nP0 () {}\nexists true",
        2,
        8,
        "initialised twice",
    );
    err_at(
        "C T\n{ int* p = &x; }\nP0 () {}\nexists true",
        2,
        12,
        "not supported: pointer values",
    );
    err_at(
        "C T\n{ x@heap=0; }\nP0 () {}\nexists true",
        2,
        5,
        "unknown memory space `heap`",
    );
    err_at(
        "C T\n{ x=0 y=1; }\nP0 () {}\nexists true",
        2,
        7,
        "`;` between",
    );
    err_at(
        "C T\n{ 3:r0=0; }\nP0 () {}\nexists true",
        2,
        3,
        "no thread P3",
    );
    err_at(
        "C T\n{ 0:r0=0; P0:r0=1; }\nP0 () {}\nexists true",
        2,
        14,
        "initialised twice",
    );
}

#[test]
fn parameter_spaces_must_agree() {
    // The initial state's space and a parameter's.
    err_at(
        "C T\n{ local int x; }\nP0 (global int* x) { }\nexists true",
        3,
        5,
        "declared in global memory here but in local (shared) memory at line 2, column 3",
    );
    // Two threads: the default space is global.
    err_at(
        "C T\nP0 (int* x) { }\nP1 (managed int* x) { }\nexists true",
        3,
        5,
        "declared in managed memory",
    );
    // The same space twice is fine, and the parameter sets it.
    let p = ok("C T\n{ x=1; }\nP0 (host int* x) { }\nP1 (host atomic_int* x) { }\nexists true");
    assert_eq!(p.locations[0].space, MemorySpace::HostMapped);
    assert_eq!(p.locations[0].init, 1);
    err_at(
        "C T\nP0 (int* x, int* x) { }\nexists true",
        2,
        18,
        "declared twice",
    );
}

#[test]
fn parameter_types_give_orders_and_default_scopes() {
    let p = ok(&one(
        "int* a, volatile int* b, atomic_int* c, cuda::atomic<int, cuda::thread_scope_block>* d, \
         cuda::atomic<int>* e, cuda::atomic_ref<unsigned int, cuda::thread_scope_device>* f, \
         std::atomic<int>* g, atomic_uint* h, const volatile uint32_t* const i",
        "*a = 1; *b = 1; *c = 1; *d = 1; *e = 1; *f = 1; *g = 1; h[0] = 1; *i = 1;",
    ));
    assert_eq!(
        kinds(&p, 0),
        vec![
            store(0, IMM1, Order::Weak, Scope::Sys),
            store(1, IMM1, Order::Volatile, Scope::Sys),
            store(2, IMM1, Order::SeqCst, Scope::Gpu),
            store(3, IMM1, Order::SeqCst, Scope::Cta),
            store(4, IMM1, Order::SeqCst, Scope::Sys),
            // `unsigned int`, `atomic_uint` and `uint32_t` hold 32-bit unsigned values.
            unsigned(store(5, IMM1, Order::SeqCst, Scope::Gpu)),
            store(6, IMM1, Order::SeqCst, Scope::Sys),
            unsigned(store(7, IMM1, Order::SeqCst, Scope::Gpu)),
            unsigned(store(8, IMM1, Order::Volatile, Scope::Sys)),
        ]
    );
    assert_eq!(p.locations[5].ty, IntType::U32);
    assert_eq!(p.locations[0].ty, IntType::S32);
    err_at(&one("int x", ""), 2, 9, "expected `*`");
    err_at(
        &one("int** x", ""),
        2,
        9,
        "not supported: pointers to pointers",
    );
    err_at(
        &one("int& x", ""),
        2,
        8,
        "not supported: reference parameters",
    );
    err_at(
        &one("int* x[]", ""),
        2,
        11,
        "not supported: array parameters",
    );
    err_at(&one("foo* x", ""), 2, 5, "expected a parameter");
    err_at(
        &one("cuda::atomic<int, cuda::thread_scope_galaxy>* x", ""),
        2,
        23,
        "unknown thread scope",
    );
    err_at(
        &one("std::atomic<int, cuda::thread_scope_block>* x", ""),
        2,
        22,
        "takes no scope",
    );
}

#[test]
fn threads_are_named_in_order_and_only_threads_are_defined() {
    err_at(
        "C T\nP1 () { }\nexists true",
        2,
        1,
        "expected thread `P0`, found `P1`",
    );
    err_at(
        "C T\nint helper(int* x) { }\nP0 () { }\nexists true",
        2,
        1,
        "not supported: function definitions",
    );
    err_at(
        "C T\nP0@wg 0, wg 1 () { }\nexists true",
        2,
        10,
        "repeats a placement level",
    );
    err_at(
        "C T\nP0@core 0 () { }\nexists true",
        2,
        4,
        "a placement item",
    );
    err_at(
        "C T\nP0 () \nexists true",
        3,
        1,
        "`{` to open the thread body",
    );
    err_at("C T\nP0 () { *x = 1;\nexists true", 3, 8, "expected `;`");
    err_at(
        "C T\nP0 () { *x = 1; }\nexists true",
        2,
        10,
        "unknown name `x`",
    );
    err_at("C T\nP0 () { int r = 1;\n", 3, 1, "`}` to close the block");
    err_at("C T\n{ x=0; }\nexists true", 3, 1, "expected a thread");
    err_at("C\nP0 () { }\nexists true", 1, 2, "expected the test name");
}

// ---- plain accesses, expressions ----

#[test]
fn plain_accesses_and_expressions() {
    let p = ok(&one(
        "int* x, int* y",
        "int r0 = *x; int r1 = x[0] + 2 * r0; y[0] = r1 - 1; *y = -r0; int r2 = !r1; \
         int r3 = ~r2 ^ (r1 | 4) & 3; int r4 = r1 > r0; int r5 = r1 >= 2; int r6 = r0 < 1 == (r1 <= r0); \
         r6 = 2 + 3 * 4; r6 += r5; r6 -= 1; r6 *= 2; r6 &= 7; r6 |= 8; r6 ^= r6; r6++; --r6; \
         int r7 = true, r8 = false != r7;",
    ));
    let r = |n: &str| Operand::Reg(reg(&p, 0, n));
    let rid = |n: &str| reg(&p, 0, n);
    let t = |n: &str| reg(&p, 0, n);
    use BinOp::*;
    let bin = |dst: RegId, op: BinOp, a: Operand, b: Operand| InstrKind::Binary {
        dst,
        op,
        ty: IntType::S32,
        a,
        b,
    };
    assert_eq!(
        kinds(&p, 0),
        vec![
            load(rid("r0"), 0, Order::Weak, Scope::Sys),
            load(t("$t0"), 0, Order::Weak, Scope::Sys),
            bin(t("$t1"), Mul, Operand::Imm(2), r("r0")),
            bin(rid("r1"), Add, r("$t0"), r("$t1")),
            bin(t("$t2"), Sub, r("r1"), IMM1),
            store(1, r("$t2"), Order::Weak, Scope::Sys),
            bin(t("$t3"), Sub, Operand::Imm(0), r("r0")),
            store(1, r("$t3"), Order::Weak, Scope::Sys),
            bin(rid("r2"), Eq, r("r1"), Operand::Imm(0)),
            bin(t("$t4"), Xor, r("r2"), Operand::Imm(-1)),
            bin(t("$t5"), Or, r("r1"), Operand::Imm(4)),
            bin(t("$t6"), And, r("$t5"), Operand::Imm(3)),
            bin(rid("r3"), Xor, r("$t4"), r("$t6")),
            bin(rid("r4"), Lt, r("r0"), r("r1")),
            bin(rid("r5"), Le, Operand::Imm(2), r("r1")),
            bin(t("$t7"), Lt, r("r0"), IMM1),
            bin(t("$t8"), Le, r("r1"), r("r0")),
            bin(rid("r6"), Eq, r("$t7"), r("$t8")),
            InstrKind::Mov {
                dst: rid("r6"),
                src: Operand::Imm(14)
            },
            bin(rid("r6"), Add, r("r6"), r("r5")),
            bin(rid("r6"), Sub, r("r6"), IMM1),
            bin(rid("r6"), Mul, r("r6"), Operand::Imm(2)),
            bin(rid("r6"), And, r("r6"), Operand::Imm(7)),
            bin(rid("r6"), Or, r("r6"), Operand::Imm(8)),
            bin(rid("r6"), Xor, r("r6"), r("r6")),
            bin(rid("r6"), Add, r("r6"), IMM1),
            bin(rid("r6"), Sub, r("r6"), IMM1),
            InstrKind::Mov {
                dst: rid("r7"),
                src: IMM1
            },
            bin(rid("r8"), Ne, Operand::Imm(0), r("r7")),
        ]
    );
    // Spans point at the source of each instruction.
    let i = &p.threads[0].code[0];
    assert_eq!((i.span.line, i.span.column, i.text.as_str()), (3, 10, "*x"));
    assert_eq!(p.threads[0].code[5].text, "y[0] = r1 - 1;");
}

#[test]
fn compound_assignments_to_memory() {
    let p = ok(&one("int* x, atomic_int* a", "*x += 2; (*a)++; *a -= 3;"));
    let t = |n: &str| reg(&p, 0, n);
    assert_eq!(
        kinds(&p, 0),
        vec![
            load(t("$t0"), 0, Order::Weak, Scope::Sys),
            InstrKind::Binary {
                dst: t("$t1"),
                op: BinOp::Add,
                ty: IntType::S32,
                a: Operand::Reg(t("$t0")),
                b: Operand::Imm(2)
            },
            store(0, Operand::Reg(t("$t1")), Order::Weak, Scope::Sys),
            InstrKind::Rmw {
                dst: Some(t("$t2")),
                addr: at(1),
                ty: IntType::S32,
                kind: RmwKind::Op(RmwOp::Add, IMM1),
                order: Order::SeqCst,
                scope: Scope::Gpu
            },
            InstrKind::Rmw {
                dst: Some(t("$t3")),
                addr: at(1),
                ty: IntType::S32,
                kind: RmwKind::Op(RmwOp::Sub, Operand::Imm(3)),
                order: Order::SeqCst,
                scope: Scope::Gpu
            },
        ]
    );
    err_at(
        &one("atomic_int* a", "*a *= 2;"),
        3,
        1,
        "not supported: `*=` on an atomic",
    );
}

#[test]
fn address_dependencies_use_offset_registers() {
    let p = ok(&one(
        "int* x, int* y",
        "int r0 = *x; int r1 = y[r0 ^ r0]; int r2 = *(y + (r0 & 0));",
    ));
    let code = kinds(&p, 0);
    let InstrKind::Load { addr, .. } = code[2] else {
        panic!("{code:?}")
    };
    assert_eq!(
        addr,
        Address::Loc {
            loc: LocId(1),
            index: Some(reg(&p, 0, "$t0"))
        }
    );
    let InstrKind::Load { addr, .. } = code[4] else {
        panic!("{code:?}")
    };
    assert_eq!(addr.reg(), Some(reg(&p, 0, "$t1")));
    err_at(
        &one("int* x", "x[1] = 0;"),
        3,
        3,
        "`x[1]` leaves its location, which holds one value",
    );
    err_at(
        &one("int* x", "*(x - 1) = 0;"),
        3,
        2,
        "not supported: pointer arithmetic",
    );
}

#[test]
fn short_circuit_and_ternary() {
    // Pure operands: arithmetic on 0/1.
    let p = ok(&one(
        "",
        "int a = 1; int b = 2; int c = a && b; int d = a || 0;",
    ));
    let r = |n: &str| Operand::Reg(reg(&p, 0, n));
    let t = |n: &str| reg(&p, 0, n);
    assert_eq!(
        kinds(&p, 0)[2..],
        [
            InstrKind::Binary {
                dst: t("$t0"),
                op: BinOp::Ne,
                ty: IntType::S32,
                a: r("a"),
                b: Operand::Imm(0)
            },
            InstrKind::Binary {
                dst: t("$t1"),
                op: BinOp::Ne,
                ty: IntType::S32,
                a: r("b"),
                b: Operand::Imm(0)
            },
            InstrKind::Binary {
                dst: t("c"),
                op: BinOp::And,
                ty: IntType::S32,
                a: r("$t0"),
                b: r("$t1")
            },
            InstrKind::Binary {
                dst: t("$t2"),
                op: BinOp::Ne,
                ty: IntType::S32,
                a: r("a"),
                b: Operand::Imm(0)
            },
            InstrKind::Binary {
                dst: t("d"),
                op: BinOp::Or,
                ty: IntType::S32,
                a: r("$t2"),
                b: Operand::Imm(0)
            },
        ]
    );
    // With a load on the right: branches, so that the load happens only when needed.
    let p = ok(&one("int* x", "int a = 0; int c = a && *x;"));
    let t = |n: &str| reg(&p, 0, n);
    assert_eq!(
        kinds(&p, 0),
        vec![
            InstrKind::Mov {
                dst: t("a"),
                src: Operand::Imm(0)
            },
            InstrKind::Branch {
                cond: BranchCond::Eq(Operand::Reg(t("a")), Operand::Imm(0)),
                target: 6
            },
            load(t("$t1"), 0, Order::Weak, Scope::Sys),
            InstrKind::Branch {
                cond: BranchCond::Eq(Operand::Reg(t("$t1")), Operand::Imm(0)),
                target: 6
            },
            InstrKind::Mov {
                dst: t("$t0"),
                src: IMM1
            },
            InstrKind::Branch {
                cond: BranchCond::Always,
                target: 7
            },
            InstrKind::Mov {
                dst: t("$t0"),
                src: Operand::Imm(0)
            },
            InstrKind::Mov {
                dst: t("c"),
                src: Operand::Reg(t("$t0"))
            },
        ]
    );
    let p = ok(&one("int* x", "int a = *x; int c = a ? 5 : 6;"));
    let t = |n: &str| reg(&p, 0, n);
    assert_eq!(
        kinds(&p, 0)[1..],
        [
            InstrKind::Branch {
                cond: BranchCond::Eq(Operand::Reg(t("a")), Operand::Imm(0)),
                target: 4
            },
            InstrKind::Mov {
                dst: t("$t0"),
                src: Operand::Imm(5)
            },
            InstrKind::Branch {
                cond: BranchCond::Always,
                target: 5
            },
            InstrKind::Mov {
                dst: t("$t0"),
                src: Operand::Imm(6)
            },
            InstrKind::Mov {
                dst: t("c"),
                src: Operand::Reg(t("$t0"))
            },
        ]
    );
}

// ---- control flow ----

#[test]
fn if_else_and_conditions_become_branches() {
    let p = ok(&one(
        "int* x",
        "int r = *x;\nif (r == 1 && r != 2) { *x = 2; } else if (!(r < 3)) { *x = 3; } else *x = 4;",
    ));
    let r = Operand::Reg(reg(&p, 0, "r"));
    assert_eq!(
        kinds(&p, 0),
        vec![
            load(reg(&p, 0, "r"), 0, Order::Weak, Scope::Sys),
            InstrKind::Branch {
                cond: BranchCond::Ne(r, IMM1),
                target: 5
            },
            InstrKind::Branch {
                cond: BranchCond::Eq(r, Operand::Imm(2)),
                target: 5
            },
            store(0, Operand::Imm(2), Order::Weak, Scope::Sys),
            InstrKind::Branch {
                cond: BranchCond::Always,
                target: 10
            },
            InstrKind::Binary {
                dst: reg(&p, 0, "$t0"),
                op: BinOp::Lt,
                ty: IntType::S32,
                a: r,
                b: Operand::Imm(3)
            },
            InstrKind::Branch {
                cond: BranchCond::Ne(Operand::Reg(reg(&p, 0, "$t0")), Operand::Imm(0)),
                target: 9
            },
            store(0, Operand::Imm(3), Order::Weak, Scope::Sys),
            InstrKind::Branch {
                cond: BranchCond::Always,
                target: 10
            },
            store(0, Operand::Imm(4), Order::Weak, Scope::Sys),
        ]
    );
    // A branch's span is its condition.
    let b = &p.threads[0].code[1];
    assert_eq!((b.span.line, b.span.column), (4, 5));
    // Constant conditions fold.
    let p = ok(&one("int* x", "if (1) { *x = 1; } if (0 == 1) { *x = 2; }"));
    assert_eq!(
        kinds(&p, 0),
        vec![
            store(0, IMM1, Order::Weak, Scope::Sys),
            InstrKind::Branch {
                cond: BranchCond::Always,
                target: 3
            },
            store(0, Operand::Imm(2), Order::Weak, Scope::Sys),
        ]
    );
}

#[test]
fn await_loops_are_one_load_and_one_backward_branch() {
    for (body, cond) in [
        (
            "while (atomic_load_explicit(f, memory_order_acquire, memory_scope_device) == 0) {}",
            BranchCond::Eq as fn(Operand, Operand) -> BranchCond,
        ),
        (
            "while (!atomic_load_explicit(f, memory_order_acquire, memory_scope_device));",
            BranchCond::Eq,
        ),
        (
            "while (atomic_load_explicit(f, memory_order_acquire) != 1) { }",
            BranchCond::Ne,
        ),
        (
            "for (; atomic_load_explicit(f, memory_order_acquire) != 1;) { ; }",
            BranchCond::Ne,
        ),
    ] {
        let p = ok(&one("global atomic_int* f", body));
        let t = reg(&p, 0, "$t0");
        let k = if cond(IMM1, IMM1) == BranchCond::Eq(IMM1, IMM1) && !body.contains("!= 1") {
            Operand::Imm(0)
        } else {
            IMM1
        };
        assert_eq!(
            kinds(&p, 0),
            vec![
                load(t, 0, Order::Acquire, Scope::Gpu),
                InstrKind::Branch {
                    cond: cond(Operand::Reg(t), k),
                    target: 0
                },
            ],
            "{body}"
        );
    }
    // do-while waits the same way.
    let p = ok(&one(
        "cuda::atomic<int, cuda::thread_scope_device>* f",
        "int r; do { r = f->load(cuda::std::memory_order_acquire); } while (r == 0);",
    ));
    let r = reg(&p, 0, "r");
    assert_eq!(
        kinds(&p, 0),
        vec![
            load(r, 0, Order::Acquire, Scope::Gpu),
            InstrKind::Branch {
                cond: BranchCond::Eq(Operand::Reg(r), Operand::Imm(0)),
                target: 0
            },
        ]
    );
}

#[test]
fn loops_with_bodies_break_continue_and_return() {
    let p = ok(&one(
        "int* x",
        "for (int i = 0; i < 3; i++) { if (i == 1) continue; if (*x) break; *x = i; }\n\
         while (1) { return; }",
    ));
    let i = Operand::Reg(reg(&p, 0, "i"));
    let t = |n: &str| reg(&p, 0, n);
    let br = |cond, target| InstrKind::Branch { cond, target };
    assert_eq!(
        kinds(&p, 0),
        vec![
            InstrKind::Mov {
                dst: t("i"),
                src: Operand::Imm(0)
            },
            InstrKind::Binary {
                dst: t("$t0"),
                op: BinOp::Lt,
                ty: IntType::S32,
                a: i,
                b: Operand::Imm(3)
            },
            br(BranchCond::Eq(Operand::Reg(t("$t0")), Operand::Imm(0)), 9),
            // `if (i == 1) continue;` goes to the step.
            br(BranchCond::Eq(i, IMM1), 7),
            load(t("$t1"), 0, Order::Weak, Scope::Sys),
            // `if (*x) break;` leaves the loop.
            br(BranchCond::Ne(Operand::Reg(t("$t1")), Operand::Imm(0)), 9),
            store(0, i, Order::Weak, Scope::Sys),
            InstrKind::Binary {
                dst: t("i"),
                op: BinOp::Add,
                ty: IntType::S32,
                a: i,
                b: IMM1
            },
            br(BranchCond::Always, 1),
            // while (1) { return; }
            br(BranchCond::Always, 11),
            br(BranchCond::Always, 9),
        ]
    );
    let p = ok(&one("int* x", "do { *x = 1; if (*x) break; } while (0);"));
    assert_eq!(
        kinds(&p, 0)[2],
        InstrKind::Branch {
            cond: BranchCond::Ne(Operand::Reg(reg(&p, 0, "$t0")), Operand::Imm(0)),
            target: 3
        }
    );
    assert_eq!(p.threads[0].code.len(), 3);
    err_at(&one("", "break;"), 3, 1, "`break` outside a loop");
    err_at(
        &one("", "if (1) { continue; }"),
        3,
        10,
        "`continue` outside a loop",
    );
    err_at(
        &one("", "return 1;"),
        3,
        8,
        "not supported: returning a value",
    );
    err_at(&one("", "do { } 1;"), 3, 8, "`while (condition);`");
}

#[test]
fn locals_are_scoped_and_shadowing_gets_a_fresh_register() {
    let p = ok(&one("", "int r = 1; { int r = 2; r = 3; } r = 4;"));
    assert_eq!(p.threads[0].registers, ["r", "r#2"]);
    assert_eq!(
        kinds(&p, 0)[2],
        InstrKind::Mov {
            dst: RegId(1),
            src: Operand::Imm(3)
        }
    );
    assert_eq!(
        kinds(&p, 0)[3],
        InstrKind::Mov {
            dst: RegId(0),
            src: Operand::Imm(4)
        }
    );
    err_at(&one("", "int r = 1; int r = 2;"), 3, 16, "already declared");
    err_at(&one("", "{ int q = 1; } q = 2;"), 3, 16, "unknown name `q`");
    err_at(&one("int* x", "x = 0;"), 3, 1, "assigning to the pointer");
    err_at(&one("int* x", "int r = x;"), 3, 9, "`x` is a pointer");
    err_at(
        &one("int* x", "int r = 1; *r = 2;"),
        3,
        13,
        "`r` is a local value",
    );
}

#[test]
fn comments_in_every_style() {
    let p = ok(
        "C T (* a *)\n// line\n/* block\n */ P0 (int* x) { (* c *) int r = (*x); // c\n\
         /* c */ r = (*(x)); }\nexists true",
    );
    assert_eq!(p.threads[0].code.len(), 2);
    err_at("C T\nP0 () { /* open\n", 2, 9, "unterminated comment");
    err_at(
        "C T\nP0 () { int r = 1 $ 2; }\nexists true",
        2,
        19,
        "unexpected character `$`",
    );
    err_at(
        "C T\nP0 () { int r = 12ab; }\nexists true",
        2,
        17,
        "invalid number `12ab`",
    );
}

// ---- OpenCL calls ----

#[test]
fn opencl_atomics_with_orders_and_scopes() {
    let p = ok(&one(
        "global atomic_int* x",
        "int a = atomic_load(x);\n\
         int b = atomic_load_explicit(x, memory_order_relaxed);\n\
         atomic_store(x, 1);\n\
         atomic_store_explicit(x, 2, memory_order_release, memory_scope_work_item);\n\
         int c = atomic_exchange_explicit(x, 3, memory_order_acq_rel, memory_scope_sub_group);\n\
         atomic_fetch_add(x, 1);\n\
         int d = atomic_fetch_sub_explicit(x, 1, memory_order_acquire, memory_scope_work_group);\n\
         atomic_fetch_and_explicit(x, 1, memory_order_seq_cst, memory_scope_device);\n\
         atomic_fetch_or_explicit(x, 1, memory_order_consume, memory_scope_all_svm_devices);\n\
         atomic_fetch_xor(x, 1); atomic_fetch_min(x, 1); atomic_fetch_max(x, 1);\n\
         atomic_init(x, 9);",
    ));
    let t = |n: &str| reg(&p, 0, n);
    let rmw = |dst: RegId, op: RmwOp, v: Value, order: Order, scope: Scope| InstrKind::Rmw {
        dst: Some(dst),
        addr: at(0),
        ty: IntType::S32,
        kind: RmwKind::Op(op, Operand::Imm(v)),
        order,
        scope,
    };
    assert_eq!(
        kinds(&p, 0),
        vec![
            load(t("a"), 0, Order::SeqCst, Scope::Gpu),
            load(t("b"), 0, Order::Relaxed, Scope::Gpu),
            store(0, IMM1, Order::SeqCst, Scope::Gpu),
            store(0, Operand::Imm(2), Order::Release, Scope::Thread),
            rmw(t("c"), RmwOp::Exch, 3, Order::AcqRel, Scope::Warp),
            rmw(t("$t0"), RmwOp::Add, 1, Order::SeqCst, Scope::Gpu),
            rmw(t("d"), RmwOp::Sub, 1, Order::Acquire, Scope::Cta),
            rmw(t("$t1"), RmwOp::And, 1, Order::SeqCst, Scope::Gpu),
            rmw(t("$t2"), RmwOp::Or, 1, Order::Acquire, Scope::Sys),
            rmw(t("$t3"), RmwOp::Xor, 1, Order::SeqCst, Scope::Gpu),
            rmw(t("$t4"), RmwOp::Min, 1, Order::SeqCst, Scope::Gpu),
            rmw(t("$t5"), RmwOp::Max, 1, Order::SeqCst, Scope::Gpu),
            store(0, Operand::Imm(9), Order::Weak, Scope::Sys),
        ]
    );
}

#[test]
fn compare_exchange_updates_expected_after_computing_the_result() {
    let p = ok(&one(
        "atomic_int* x",
        "int e = 0; int ok = atomic_compare_exchange_strong_explicit(x, &e, 1, \
         memory_order_acq_rel, memory_order_relaxed, memory_scope_work_group);\n\
         atomic_compare_exchange_weak(x, &e, 2);",
    ));
    let r = |n: &str| Operand::Reg(reg(&p, 0, n));
    let t = |n: &str| reg(&p, 0, n);
    assert_eq!(
        kinds(&p, 0),
        vec![
            InstrKind::Mov {
                dst: t("e"),
                src: Operand::Imm(0)
            },
            InstrKind::Rmw {
                dst: Some(t("$t0")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Cas {
                    expected: r("e"),
                    new: IMM1
                },
                order: Order::AcqRel,
                scope: Scope::Cta
            },
            InstrKind::Binary {
                dst: t("ok"),
                op: BinOp::Eq,
                ty: IntType::S32,
                a: r("$t0"),
                b: r("e")
            },
            InstrKind::Mov {
                dst: t("e"),
                src: r("$t0")
            },
            InstrKind::Rmw {
                dst: Some(t("$t1")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Cas {
                    expected: r("e"),
                    new: Operand::Imm(2)
                },
                order: Order::SeqCst,
                scope: Scope::Gpu
            },
            InstrKind::Binary {
                dst: t("$t2"),
                op: BinOp::Eq,
                ty: IntType::S32,
                a: r("$t1"),
                b: r("e")
            },
            InstrKind::Mov {
                dst: t("e"),
                src: r("$t1")
            },
        ]
    );
    err_at(
        &one("atomic_int* x", "atomic_compare_exchange_strong(x, 0, 1);"),
        3,
        35,
        "expected `&expected`",
    );
    err_at(
        &one(
            "atomic_int* x, atomic_int* y",
            "atomic_compare_exchange_strong(x, &y, 1);",
        ),
        3,
        36,
        "is the address of the pointer `y`",
    );
    err_at(
        &one(
            "atomic_int* x, atomic_int* y",
            "atomic_compare_exchange_strong(x, y, 1);",
        ),
        3,
        35,
        "is a non-atomic object",
    );
}

#[test]
fn opencl_fences_and_barriers() {
    let p = ok(&one(
        "",
        "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);\n\
         atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_acquire, memory_scope_work_group);\n\
         atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_acq_rel, memory_scope_all_svm_devices);\n\
         atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_sub_group);\n\
         barrier(CLK_LOCAL_MEM_FENCE); work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_group);\n\
         atomic_thread_fence(memory_order_seq_cst);",
    ));
    let fence = |order, scope, global, shared| InstrKind::Fence {
        order,
        scope,
        spaces: FenceSpaces { global, shared },
    };
    // A barrier keeps its flags: they name the regions its entry and exit fences order.
    let bar = |global, shared| InstrKind::Barrier {
        id: Operand::Imm(0),
        kind: BarrierKind::Sync,
        count: None,
        spaces: FenceSpaces { global, shared },
    };
    assert_eq!(
        kinds(&p, 0),
        vec![
            fence(FenceOrder::Release, Scope::Gpu, true, false),
            fence(FenceOrder::Acquire, Scope::Cta, false, true),
            fence(FenceOrder::AcqRel, Scope::Sys, true, true),
            fence(FenceOrder::Sc, Scope::Warp, true, false),
            bar(false, true),
            bar(true, false),
            fence(FenceOrder::Sc, Scope::Gpu, true, true),
        ]
    );
    err_at(
        &one(
            "",
            "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_relaxed, memory_scope_device);",
        ),
        3,
        46,
        "memory_order_relaxed orders nothing",
    );
    err_at(
        &one(
            "",
            "atomic_work_item_fence(CLK_FOO, memory_order_release, memory_scope_device);",
        ),
        3,
        24,
        "expected fence flags",
    );
    err_at(
        &one(
            "",
            "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release);",
        ),
        3,
        1,
        "takes 3 arguments",
    );
    err_at(&one("", "barrier();"), 3, 1, "takes 1 argument");
}

#[test]
fn order_and_scope_errors() {
    err_at(
        &one(
            "atomic_int* x",
            "atomic_load_explicit(x, memory_order_release);",
        ),
        3,
        25,
        "memory_order_release is not a valid order for a load",
    );
    err_at(
        &one(
            "atomic_int* x",
            "atomic_store_explicit(x, 1, memory_order_acquire);",
        ),
        3,
        29,
        "not a valid order for a store",
    );
    let e = err_at(
        &one(
            "atomic_int* x",
            "atomic_load_explicit(x, memory_order_fast);",
        ),
        3,
        25,
        "expected a memory order",
    );
    assert!(expected(&e).contains(&"memory_order_acquire"));
    err_at(
        &one(
            "atomic_int* x",
            "atomic_load_explicit(x, memory_order_relaxed, memory_scope_galaxy);",
        ),
        3,
        47,
        "expected a memory scope",
    );
    err_at(
        &one("atomic_int* x", "atomic_load(x, memory_order_relaxed);"),
        3,
        1,
        "takes 1 argument",
    );
    err_at(
        &one("atomic_int* x", "atomic_load_explicit(x);"),
        3,
        1,
        "takes 2 to 3 arguments",
    );
    err_at(
        &one("int* x", "atomic_load(x);"),
        3,
        13,
        "needs a pointer to an atomic type",
    );
    err_at(
        &one("atomic_int* x", "atomic_frobnicate(x);"),
        3,
        1,
        "not supported: call to `atomic_frobnicate`",
    );
    err_at(
        &one("", "printf(1);"),
        3,
        1,
        "not supported: call to `printf`",
    );
}

// ---- CUDA calls ----

#[test]
fn cuda_legacy_atomics_fences_and_barriers() {
    let p = ok(&one(
        "int* x",
        "int a = atomicAdd(x, 1); atomicSub_block(x, 1); atomicExch_system(x, 2);\n\
         atomicMin(x, 1); atomicMax(x, 1); atomicInc(x, 5); atomicDec(x, 5);\n\
         atomicAnd(x, 1); atomicOr_block(x, 0); atomicXor(x, 1);\n\
         int b = atomicCAS_system(x, 0, 1);\n\
         __threadfence_block(); __threadfence(); __threadfence_system(); __syncthreads();\n\
         int c = __ldcg(x); __stcg(x, c);",
    ));
    let t = |n: &str| reg(&p, 0, n);
    let rmw = |dst: &str, op: RmwOp, v: Value, scope: Scope| InstrKind::Rmw {
        dst: Some(t(dst)),
        addr: at(0),
        ty: IntType::S32,
        kind: RmwKind::Op(op, Operand::Imm(v)),
        order: Order::Relaxed,
        scope,
    };
    let fence = |scope| InstrKind::Fence {
        order: FenceOrder::Sc,
        scope,
        spaces: FenceSpaces::ALL,
    };
    assert_eq!(
        kinds(&p, 0),
        vec![
            rmw("a", RmwOp::Add, 1, Scope::Gpu),
            rmw("$t0", RmwOp::Sub, 1, Scope::Cta),
            rmw("$t1", RmwOp::Exch, 2, Scope::Sys),
            rmw("$t2", RmwOp::Min, 1, Scope::Gpu),
            rmw("$t3", RmwOp::Max, 1, Scope::Gpu),
            rmw("$t4", RmwOp::Inc, 5, Scope::Gpu),
            rmw("$t5", RmwOp::Dec, 5, Scope::Gpu),
            rmw("$t6", RmwOp::And, 1, Scope::Gpu),
            rmw("$t7", RmwOp::Or, 0, Scope::Cta),
            rmw("$t8", RmwOp::Xor, 1, Scope::Gpu),
            InstrKind::Rmw {
                dst: Some(t("b")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Cas {
                    expected: Operand::Imm(0),
                    new: IMM1
                },
                order: Order::Relaxed,
                scope: Scope::Sys
            },
            fence(Scope::Cta),
            fence(Scope::Gpu),
            fence(Scope::Sys),
            InstrKind::Barrier {
                id: Operand::Imm(0),
                kind: BarrierKind::Sync,
                count: None,
                spaces: scopecheck_ir::FenceSpaces::ALL,
            },
            load(t("c"), 0, Order::Weak, Scope::Sys),
            store(0, Operand::Reg(t("c")), Order::Weak, Scope::Sys),
        ]
    );
    err_at(&one("int* x", "atomicAdd(x);"), 3, 1, "takes 2 arguments");
    err_at(
        &one("int* x", "atomicAdd(&x, 1);"),
        3,
        11,
        "address of the pointer itself",
    );
    err_at(
        &one("int* x", "atomicAdd_gpu(x, 1);"),
        3,
        1,
        "not supported: call to `atomicAdd_gpu`",
    );
    // `&x[0]` and `&*x` are the pointer too.
    let p = ok(&one("int* x", "atomicAdd(&x[0], 1); atomicAdd(&*x, 1);"));
    assert_eq!(p.threads[0].code.len(), 2);
}

#[test]
fn libcu_members_refs_and_fences() {
    let p = ok(&one(
        "cuda::atomic<int, cuda::thread_scope_block>* x, global int* y",
        "int a = x->load(); int b = x->load(cuda::memory_order_relaxed);\n\
         x->store(1, cuda::std::memory_order_release); x->store(2);\n\
         int c = x->exchange(3, std::memory_order_acq_rel); x->fetch_add(1); x->fetch_max(4, cuda::std::memory_order_seq_cst);\n\
         int e = 0; bool ok = x->compare_exchange_strong(e, 5, cuda::std::memory_order_acquire);\n\
         cuda::atomic_ref<int, cuda::thread_scope_device> r(*y);\n\
         int d = r.load(cuda::std::memory_order_acquire); r.store(1); int f = r; r = 2; (&r)->fetch_sub(1);\n\
         cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_block);\n\
         cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel);",
    ));
    let t = |n: &str| reg(&p, 0, n);
    let r = |n: &str| Operand::Reg(reg(&p, 0, n));
    assert_eq!(
        kinds(&p, 0),
        vec![
            load(t("a"), 0, Order::SeqCst, Scope::Cta),
            load(t("b"), 0, Order::Relaxed, Scope::Cta),
            store(0, IMM1, Order::Release, Scope::Cta),
            store(0, Operand::Imm(2), Order::SeqCst, Scope::Cta),
            InstrKind::Rmw {
                dst: Some(t("c")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Op(RmwOp::Exch, Operand::Imm(3)),
                order: Order::AcqRel,
                scope: Scope::Cta
            },
            InstrKind::Rmw {
                dst: Some(t("$t0")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Op(RmwOp::Add, IMM1),
                order: Order::SeqCst,
                scope: Scope::Cta
            },
            InstrKind::Rmw {
                dst: Some(t("$t1")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Op(RmwOp::Max, Operand::Imm(4)),
                order: Order::SeqCst,
                scope: Scope::Cta
            },
            InstrKind::Mov {
                dst: t("e"),
                src: Operand::Imm(0)
            },
            InstrKind::Rmw {
                dst: Some(t("$t2")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Cas {
                    expected: r("e"),
                    new: Operand::Imm(5)
                },
                order: Order::Acquire,
                scope: Scope::Cta
            },
            InstrKind::Binary {
                dst: t("ok"),
                op: BinOp::Eq,
                ty: IntType::S32,
                a: r("$t2"),
                b: r("e")
            },
            InstrKind::Mov {
                dst: t("e"),
                src: r("$t2")
            },
            load(t("d"), 1, Order::Acquire, Scope::Gpu),
            store(1, IMM1, Order::SeqCst, Scope::Gpu),
            load(t("f"), 1, Order::SeqCst, Scope::Gpu),
            store(1, Operand::Imm(2), Order::SeqCst, Scope::Gpu),
            InstrKind::Rmw {
                dst: Some(t("$t3")),
                addr: at(1),
                ty: IntType::S32,
                kind: RmwKind::Op(RmwOp::Sub, IMM1),
                order: Order::SeqCst,
                scope: Scope::Gpu
            },
            InstrKind::Fence {
                order: FenceOrder::Sc,
                scope: Scope::Cta,
                spaces: FenceSpaces::ALL
            },
            InstrKind::Fence {
                order: FenceOrder::AcqRel,
                scope: Scope::Sys,
                spaces: FenceSpaces::ALL
            },
        ]
    );
    let p = ok(&one(
        "std::atomic<int>* g",
        "int r = g->load(std::memory_order::acquire);",
    ));
    assert_eq!(
        kinds(&p, 0),
        vec![load(reg(&p, 0, "r"), 0, Order::Acquire, Scope::Sys)]
    );
    err_at(&one("int* y", "y->load();"), 3, 1, "needs an atomic object");
    err_at(
        &one("atomic_int* y", "y->wait(0);"),
        3,
        4,
        "not supported: member function `wait`",
    );
    err_at(
        &one("atomic_int* y", "int r = y->value;"),
        3,
        12,
        "not supported: member `value`",
    );
    err_at(
        &one("atomic_int* y", "cuda::atomic_ref<int> r = *y;"),
        3,
        25,
        "`(` and the object",
    );
    err_at(
        &one("atomic_int* y", "atomic_int z = 0;"),
        3,
        1,
        "not supported: atomic local variables",
    );
    err_at(
        &one("atomic_int* y", "int* p = y;"),
        3,
        4,
        "not supported: pointer and reference local variables",
    );
}

#[test]
fn host_threads_operate_at_system_scope() {
    let (p, w) = ok_w(
        "C T\nP0@host (host std::atomic<int>* f, host atomic_int* g, managed int* h) {\n\
         int a = f->load(std::memory_order_acquire);\n\
         atomic_store_explicit(g, 1, memory_order_release);\n\
         atomic_store_explicit(g, 2, memory_order_release, memory_scope_device);\n\
         std::atomic_thread_fence(std::memory_order_seq_cst);\n\
         *g = 3; *h = 4;\n}\nexists true",
    );
    assert_eq!(p.threads[0].placement, Placement::Host);
    let t = |n: &str| reg(&p, 0, n);
    assert_eq!(
        kinds(&p, 0),
        vec![
            load(t("a"), 0, Order::Acquire, Scope::Sys),
            store(1, IMM1, Order::Release, Scope::Sys),
            store(1, Operand::Imm(2), Order::Release, Scope::Sys),
            InstrKind::Fence {
                order: FenceOrder::Sc,
                scope: Scope::Sys,
                spaces: FenceSpaces::ALL
            },
            store(1, Operand::Imm(3), Order::SeqCst, Scope::Sys),
            store(2, Operand::Imm(4), Order::Weak, Scope::Sys),
        ]
    );
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].line(), w[0].column()), (5, 51));
    assert!(w[0]
        .message
        .contains("host thread operates at system scope"));
    err_at(
        "C T\nP0@host () { __syncthreads(); }\nexists true",
        2,
        14,
        "device function",
    );
    err_at(
        "C T\nP0@host (int* x) { atomicAdd(x, 1); }\nexists true",
        2,
        20,
        "device function",
    );
}

// ---- memory spaces ----

#[test]
fn shared_locations_belong_to_one_cta() {
    // Two threads of one CTA: fine.
    ok("C T\nP0@block 0 (local int* s) { *s = 1; }\nP1@block 0 (local int* s) { int r = *s; }\nexists true");
    // Another CTA: an error at that thread's access.
    err_at(
        "C T\nP0@wg 0 (local int* s) { *s = 1; }\nP1@wg 1 (local int* s) {\n  int r = 0;\n  r = *s; }\nexists true",
        5,
        7,
        "private to one block",
    );
    // A host thread.
    err_at(
        "C T\n{ s@shared=0; }\nP0 (int* x) { }\nP1@host (int* y) { }\nP2@host (int* z, local int* s) { *z = 1; *s = 2; }\nexists true",
        5,
        42,
        "host thread P2 cannot touch",
    );
    // Declared but untouched by the other CTA: fine.
    ok("C T\nP0@wg 0 (local int* s) { *s = 1; }\nP1@wg 1 (local int* s) { }\nexists true");
    // Host-mapped and pageable locations may be touched by device threads.
    ok("C T\nP0 (host int* h, pageable int* p) { *h = 1; *p = 1; }\nP1@host (host int* h) { *h = 2; }\nexists true");
}

#[test]
fn wide_scopes_on_shared_memory_are_narrowed_with_a_warning() {
    let (p, w) = ok_w(&one(
        "local atomic_int* s, cuda::atomic<int>* g",
        "atomic_store_explicit(s, 1, memory_order_release, memory_scope_device);\n\
         int r = atomic_fetch_add_explicit(s, 1, memory_order_relaxed, memory_scope_work_group);\n\
         *s = 2; g->store(1);\n\
         atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_acq_rel, memory_scope_device);\n\
         atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_acq_rel, memory_scope_device);",
    ));
    let scopes: Vec<Scope> = p.threads[0]
        .code
        .iter()
        .map(|i| match i.kind {
            InstrKind::Store { scope, .. }
            | InstrKind::Rmw { scope, .. }
            | InstrKind::Fence { scope, .. } => scope,
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        scopes,
        [
            Scope::Cta,
            Scope::Cta,
            Scope::Cta,
            Scope::Sys,
            Scope::Cta,
            Scope::Gpu
        ]
    );
    let at: Vec<(u32, u32)> = w.iter().map(|w| (w.line(), w.column())).collect();
    assert_eq!(at, [(3, 1), (5, 1), (6, 1)]);
    assert!(w[0].message.contains("`s`") && w[0].message.contains("scope gpu"));
    // `parse` drops the warnings.
    assert!(parse(&one("local atomic_int* s", "*s = 1;")).is_ok());
}

// ---- types and undefined behaviour ----

/// Division, remainder and shifts compute in C's types; their constant forms fold, and a
/// constant expression C leaves undefined is an error where it is written.
#[test]
fn division_and_shifts_fold_and_undefined_constants_are_errors() {
    let p = ok(&one(
        "unsigned* x",
        "int r = 7 / 2 % 2; unsigned u = *x; u >>= 1; int s = -16 >> 2;",
    ));
    let code = kinds(&p, 0);
    // 7 / 2 = 3, 3 % 2 = 1; `u >>= 1` is an unsigned (logical) shift; -16 >> 2 is -4.
    assert_eq!(
        code[0],
        InstrKind::Mov {
            dst: reg(&p, 0, "r"),
            src: IMM1
        }
    );
    assert!(code.contains(&InstrKind::Binary {
        dst: reg(&p, 0, "u"),
        op: BinOp::Shr,
        ty: IntType::U32,
        a: Operand::Reg(reg(&p, 0, "u")),
        b: IMM1
    }));
    assert_eq!(
        code.last(),
        Some(&InstrKind::Mov {
            dst: reg(&p, 0, "s"),
            src: Operand::Imm(-4)
        })
    );
    err_at(
        &one("", "int r = 1 << 40;"),
        3,
        9,
        "this constant expression is undefined",
    );
    err_at(
        &one("", "int r = 2147483647 + 1;"),
        3,
        9,
        "signed integer overflow",
    );
    err_at(&one("", "int r = 1 / 0;"), 3, 9, "division by zero");
}

/// Mixing `int` and `unsigned` compares in unsigned (the usual arithmetic conversions), and
/// assigning an `unsigned` to an `int` converts it.
#[test]
fn conversions_follow_c() {
    let p = ok(&one("unsigned* x", "int r = *x; int c = *x < -1;"));
    let code = kinds(&p, 0);
    let t0 = reg(&p, 0, "$t0");
    assert_eq!(
        code[1],
        InstrKind::Binary {
            dst: reg(&p, 0, "r"),
            op: BinOp::Or,
            ty: IntType::S32,
            a: Operand::Reg(t0),
            b: Operand::Imm(0)
        }
    );
    let InstrKind::Binary { op, ty, .. } = code[3] else {
        panic!("{code:?}")
    };
    assert_eq!((op, ty), (BinOp::Lt, IntType::U32));
    // Locations of two widths are refused.
    err_at(
        "C T\nP0 (int* x) { }\nP1 (long long* x) { }\nexists true",
        3,
        16,
        "mixed-size",
    );
}

// ---- unsupported constructs ----

#[test]
fn unsupported_constructs_are_named() {
    for (body, col, needle) in [
        ("goto L;", 1, "not supported: goto"),
        ("L: }", 4, "a statement after the label `L:`"),
        ("L: ; L: ;", 6, "label `L` is defined twice"),
        ("switch (1) { }", 1, "not supported: switch"),
        ("struct s v;", 1, "not supported: structs"),
        ("int r = sizeof(int);", 9, "not supported: sizeof"),
        ("int r = (int)1;", 9, "not supported: casts"),
        ("int a[2];", 6, "not supported: local arrays"),
        (
            "int r = 1; int q = r++;",
            21,
            "`;` at the end of the statement",
        ),
        (
            "int r = ++1;",
            9,
            "not supported: `++` inside an expression",
        ),
        ("float f = 1;", 1, "not supported: floating point"),
        ("int r = &r;", 9, "not supported: address values"),
        (
            "local int r = 1;",
            1,
            "not supported: memory spaces on local variables",
        ),
        (
            "int r = (1)(2);",
            12,
            "not supported: calling something other",
        ),
        ("else { }", 1, "`else` without"),
    ] {
        err_at(&one("int* x", body), 3, col, needle);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("int r = {}1{};", "(".repeat(5000), ")".repeat(5000));
    let e = parse(&one("", &deep)).unwrap_err();
    assert!(e.message.contains("nested too deeply"), "{}", e.message);
}

#[test]
fn deep_blocks() {
    let deep = format!("{}{}", "{".repeat(5000), "}".repeat(5000));
    assert!(parse(&one("", &deep)).is_err());
}

#[test]
fn deep_unary() {
    let deep = format!("int r = {}1;", "!".repeat(5000));
    assert!(parse(&one("", &deep)).is_err());
}

#[test]
fn deep_ok() {
    let deep = format!("int r = {}1{};", "(".repeat(45), ")".repeat(45));
    ok(&one("", &deep));
    let deep = format!("int r = {}1;", "!".repeat(95));
    ok(&one("", &deep));
    let deep = format!("{}{}", "{".repeat(95), "}".repeat(95));
    ok(&one("", &deep));
    let deep = format!("{};", "if (1) while (0) ".repeat(47));
    ok(&one("", &deep));
    let deep = format!("{};", "if (1) for (;;) ".repeat(5000));
    assert!(parse(&one("", &deep)).is_err());
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    const SEEDS: [&str; 4] = [
        "OPENCL MP\n\"d\"\n{ data=0; local int s; 1:r0=0; }\nP0@wg 0, dev 0 (global int* data, global atomic_int* flag, local atomic_int* s) {\n  *data = 7; atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device);\n  atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_acq_rel, memory_scope_device);\n  atomic_fetch_add_explicit(s, 1, memory_order_relaxed, memory_scope_device);\n}\nP1@sg 1, wg 1, dev 0 (global int* data, global atomic_int* flag) {\n  while (atomic_load_explicit(flag, memory_order_acquire, memory_scope_device) == 0) {}\n  int r0 = *data; int e = 0; int ok = atomic_compare_exchange_strong(flag, &e, 2);\n}\nlocations [data;]\nexists (1:r0=0 /\\ P1:ok == 1)\n",
        "CUDA CAS (* c *)\n{ lock=0; }\nP0@block 0, cluster 1, gpu 0 (int* lock, volatile int* c) {\n  for (int i = 0; i < 2 && *c != 3; i++) { if (atomicCAS_block(lock, 0, 1) == 0) { *c += 1; __threadfence(); atomicExch(lock, 0); } else continue; }\n  do { int r = 1; } while (0);\n}\nP1@host (host std::atomic<int>* f) { int r = f->load(std::memory_order_acquire); std::atomic_thread_fence(std::memory_order_seq_cst); }\nforall (lock=0 \\/ ~(0:i != 2))\n",
        "C LIBCU\nP0@warp 0, block 1, gpu 0 (cuda::atomic<int, cuda::thread_scope_device>* f, int* d) {\n  cuda::atomic_ref<int, cuda::thread_scope_block> r(d[0]);\n  int v = f->exchange(1, cuda::std::memory_order_acq_rel) ? r.load() : -r;\n  f->compare_exchange_weak(v, 3); cuda::atomic_thread_fence(cuda::std::memory_order_release, cuda::thread_scope_device);\n  __syncthreads(); if (!(v >= 2 || v < -1)) return;\n}\n~exists (0:v=1)\n",
        "C T\n{ x=1; }\nP0 () { }\nexists 0==0\n",
    ];

    use crate::mutate::{apply, Mutation};

    fn mutation() -> impl Strategy<Value = Mutation> {
        crate::mutate::mutation(b";|:,.@{}[]()=!~/\\\"*+-&<>^?%0123456789rPx \n")
    }

    const PIECES: &[&str] = &[
        "P0",
        "P1",
        "@",
        "host",
        "wg",
        "0",
        "1",
        "dev",
        "block",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ",",
        "int",
        "*",
        "x",
        "r",
        "=",
        "==",
        "!",
        "&&",
        "||",
        "atomic_int",
        "local",
        "atomic_load_explicit",
        "memory_order_acquire",
        "memory_scope_device",
        "while",
        "if",
        "else",
        "for",
        "do",
        "break",
        "continue",
        "->",
        "load",
        ".",
        "exists",
        "~",
        "/\\",
        "0:r",
        "cuda::atomic",
        "<",
        ">",
        "cuda::thread_scope_block",
        "atomicCAS",
        "__syncthreads",
        "return",
        "?",
        ":",
        "&",
        "-",
        "+",
        "\"d\"",
        "(*",
        "*)",
        "//",
        "\n",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn parse_never_panics(seed in 0..SEEDS.len(), muts in prop::collection::vec(mutation(), 1..8)) {
            let src = apply(SEEDS[seed], &muts);
            if let Err(e) = parse_with_warnings(&src) {
                prop_assert!(e.span.expect("a span").offset + e.span.expect("a span").len <= src.len());
                prop_assert!(e.line() >= 1 && e.column() >= 1);
                prop_assert!(!e.message.is_empty());
            }
        }

        #[test]
        fn parse_never_panics_on_grammar_soup(
            pieces in prop::collection::vec(prop::sample::select(PIECES.to_vec()), 0..60)
        ) {
            let src = format!("C soup\n{}", pieces.join(" "));
            let _ = parse_with_warnings(&src);
        }
    }

    #[test]
    fn seeds_parse() {
        for s in SEEDS {
            ok(s);
        }
    }
}
