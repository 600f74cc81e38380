//! Tests of the forms accepted for compatibility with litmus files written for other tools
//! (issue 12): several strings after the header, `ld r, N`, labels in C threads, a
//! compare-exchange whose expected value is in memory, atomic functions on non-atomic
//! objects, arrays in the initial state, and per-file option comments.

use crate::c::tests::{at, kinds, reg};
use crate::tests::err_at;
use crate::{parse_test, parse_with_warnings, Test};
use scopecheck_ir::*;

#[track_caller]
fn test(src: &str) -> Test {
    match parse_test(src) {
        Ok(t) => t,
        Err(e) => panic!(
            "unexpected error at {}:{}: {}",
            e.line(),
            e.column(),
            e.message
        ),
    }
}

#[track_caller]
fn ok(src: &str) -> Program {
    test(src).program
}

fn names(p: &Program) -> Vec<&str> {
    p.locations.iter().map(|l| l.name.as_str()).collect()
}

/// One C device thread with `params` and `body`; the body starts on line 3.
fn c_one(params: &str, body: &str) -> String {
    format!("C t\nP0 ({params}) {{\n{body}\n}}\nexists true\n")
}

// ---- several strings after the header ----

#[test]
fn strings_after_the_description_are_docs_in_both_dialects() {
    let t = test("PTX t\n\"a description\"\n\"https://example.org/t.litmus\" \"third\"\n{ x=0; }\nP0 ;\nexists true\n");
    assert_eq!(t.program.description.as_deref(), Some("a description"));
    assert_eq!(t.docs, ["https://example.org/t.litmus", "third"]);
    let t = test(
        "OPENCL t\n\"desc\"\n\"source: a paper\"\nP0 (global int* x) { *x = 1; }\nexists true\n",
    );
    assert_eq!(t.program.description.as_deref(), Some("desc"));
    assert_eq!(t.docs, ["source: a paper"]);
    assert!(test("C t\nP0 () { }\nexists true\n").docs.is_empty());
    // A string anywhere else is still an error.
    err_at(
        "PTX t\n{ x=0; }\n\"late\"\nP0 ;\nexists true\n",
        3,
        1,
        "expected thread `P0`",
    );
}

// ---- `ld r, N` ----

#[test]
fn constant_load_is_a_register_move() {
    let src =
        "PTX t\n{ x=0; }\nP0 ;\n ld r0, 1 ;\n ld %r1, -3 ;\n ld r2, x ;\nexists (P0:r0 == 1)\n";
    let p = ok(src);
    assert_eq!(
        kinds(&p, 0),
        vec![
            InstrKind::Mov {
                dst: RegId(0),
                src: Operand::Imm(1)
            },
            InstrKind::Mov {
                dst: RegId(1),
                src: Operand::Imm(-3)
            },
            InstrKind::Load {
                dst: RegId(2),
                addr: at(0),
                ty: IntType::S32,
                order: Order::Weak,
                scope: Scope::Sys
            },
        ]
    );
    assert_eq!(p.threads[0].code[0].text, "ld r0, 1");
    // With qualifiers a constant load would claim an order or a width: refused, at the first.
    for (instr, col) in [
        ("ld.relaxed.gpu r0, 1", 4),
        ("ld.u64 r0, 1", 4),
        ("ld.weak r0, 1", 4),
    ] {
        err_at(
            &format!("PTX t\nP0 ;\n {instr} ;\nexists true\n"),
            3,
            col,
            "takes no qualifiers",
        );
    }
    // The register comes first, as in every load.
    err_at(
        "PTX t\nP0 ;\n ld 1, r0 ;\nexists true\n",
        3,
        5,
        "expected a register",
    );
}

// ---- arrays in the initial state ----

#[test]
fn ptx_arrays_in_the_initial_state() {
    let src = "PTX t\n{ int a[3]; b={1,2}; uint64_t c[2] = {7}; }\nP0 ;\n ld r0, [a+2] ;\n ld r1, [b+r0] ;\n st a, 5 ;\n st.u64 [c+1], 9 ;\nexists (a[0] == 5 /\\ b[1] == 2 /\\ [c] == 0)\n";
    // `[c]` names the array, which is an error; the rest is read first without it.
    let ok_src = src.replace(" /\\ [c] == 0", "");
    let p = ok(&ok_src);
    assert_eq!(
        names(&p),
        ["a[0]", "a[1]", "a[2]", "b[0]", "b[1]", "c[0]", "c[1]"]
    );
    let inits: Vec<Value> = p.locations.iter().map(|l| l.init).collect();
    assert_eq!(inits, [0, 0, 0, 1, 2, 7, 0]);
    assert_eq!(
        p.arrays,
        vec![
            Array {
                name: "a".into(),
                first: LocId(0),
                len: 3
            },
            Array {
                name: "b".into(),
                first: LocId(3),
                len: 2
            },
            Array {
                name: "c".into(),
                first: LocId(5),
                len: 2
            },
        ]
    );
    let code = kinds(&p, 0);
    assert_eq!(code[0].address(), Some(&at(2)));
    assert_eq!(
        code[1].address(),
        Some(&Address::Loc {
            loc: LocId(3),
            index: Some(RegId(0))
        })
    );
    assert_eq!(code[2].address(), Some(&at(0)));
    assert_eq!(code[3].address(), Some(&at(6)));
    // A typed access types the whole array.
    assert_eq!(p.locations[5].ty, IntType::U64);
    assert_eq!(p.locations[6].ty, IntType::U64);
    assert_eq!(p.locations[0].ty, IntType::S32);
    let cond: Vec<Observable> = {
        let mut v = Vec::new();
        p.condition.prop.observables(&mut v);
        v
    };
    assert_eq!(cond, [Observable::Loc(LocId(0)), Observable::Loc(LocId(4))]);
    err_at(src, 8, 36, "`c` is an array of 2 elements");
    // An array of one element is one location of that name.
    assert_eq!(
        names(&ok("PTX t\n{ x[1]={4}; }\nP0 ;\nexists (x == 4)\n")),
        ["x"]
    );
    for (init, col, needle) in [
        ("int a[2] = {1,2,3};", 17, "`a` has 2 elements but 3 values"),
        ("int a[0];", 7, "at least one element"),
        ("int a[2] = 5;", 12, "the array's values in braces"),
        ("a={1 2};", 6, "`,` or `}`"),
        ("a={};", 1, "at least one element"),
        ("a={1,2}; a=3;", 10, "initialised twice"),
    ] {
        err_at(
            &format!("PTX t\n{{ {init} }}\nP0 ;\nexists true\n"),
            2,
            col + 2,
            needle,
        );
    }
    err_at(
        "PTX t\n{ a={1,2}; }\nP0 ;\n ld r0, [a+2] ;\nexists true\n",
        4,
        12,
        "element 2 is out of bounds of `a`, which has 2 elements",
    );
    err_at(
        "PTX t\n{ a={1,2}; }\nP0 ;\nexists (a[2] == 0)\n",
        4,
        11,
        "element 2 is out of bounds",
    );
    err_at(
        "PTX t\n{ x=0; }\nP0 ;\nexists (x[1] == 0)\n",
        4,
        9,
        "`x` is not an array",
    );
}

#[test]
fn c_arrays_in_the_initial_state() {
    let src = "C t\n{ int a[4] = {0,1,2}; b={5,6}; local int s[2]; }\nP0 (int* a, unsigned* b, local int* s) {\n  a[1] = 7; int r = a[3]; int i = 1; int q = b[i]; *(a + 2) = 1; s[1] = 3;\n}\nexists (a[1]=7 /\\ b[1]=6 /\\ 0:r=0)\n";
    let p = ok(src);
    assert_eq!(
        names(&p),
        ["a[0]", "a[1]", "a[2]", "a[3]", "b[0]", "b[1]", "s[0]", "s[1]"]
    );
    let inits: Vec<Value> = p.locations.iter().map(|l| l.init).collect();
    assert_eq!(inits, [0, 1, 2, 0, 5, 6, 0, 0]);
    let lens: Vec<(u32, u32)> = p.arrays.iter().map(|a| (a.first.0, a.len)).collect();
    assert_eq!(lens, [(0, 4), (4, 2), (6, 2)]);
    // Spaces and types hold for every element.
    assert!(p.locations[6..]
        .iter()
        .all(|l| l.space == MemorySpace::Shared));
    assert!(p.locations[4..6].iter().all(|l| l.ty == IntType::U32));
    let code = kinds(&p, 0);
    let i = reg(&p, 0, "i");
    let addrs: Vec<Address> = code.iter().filter_map(|k| k.address().copied()).collect();
    assert_eq!(
        addrs,
        [
            at(1),
            at(3),
            Address::Loc {
                loc: LocId(4),
                index: Some(i)
            },
            at(2),
            at(7),
        ]
    );
    for (body, col, needle) in [
        (
            "a[4] = 1;",
            3,
            "`a[4]` is out of bounds of an array of 4 elements",
        ),
        (
            "int r = *(a + 5);",
            15,
            "out of bounds of an array of 4 elements",
        ),
        ("int r = a[-1];", 11, "out of bounds"),
    ] {
        err_at(
            &format!("C t\n{{ int a[4]; }}\nP0 (int* a) {{\n{body}\n}}\nexists true\n"),
            4,
            col,
            needle,
        );
    }
    for (init, col, needle) in [
        (
            "int a[2] = {1, 2, 3};",
            19,
            "`a` has 2 elements but 3 values",
        ),
        ("int a[0];", 7, "at least one element"),
        ("int a[2] = 7;", 12, "the array's values in braces"),
        ("int a[2]; a = 1;", 11, "initialised twice"),
    ] {
        err_at(
            &format!("C t\n{{ {init} }}\nP0 () {{ }}\nexists true\n"),
            2,
            col + 2,
            needle,
        );
    }
    err_at(
        "C t\n{ int a[2]; }\nP0 (int* a) { }\nexists (a=0)\n",
        4,
        9,
        "`a` is an array of 2 elements: name one",
    );
}

// ---- labels in C threads ----

#[test]
fn c_labels_are_accepted_before_statements() {
    let p = ok(&c_one(
        "int* x",
        "B1: barrier(CLK_GLOBAL_MEM_FENCE);\nL0: *x = 1;\nL1: L2: { int r = *x; }\nif (1) E: ;",
    ));
    let code = kinds(&p, 0);
    assert!(matches!(code[0], InstrKind::Barrier { .. }), "{code:?}");
    assert!(matches!(code[1], InstrKind::Store { .. }), "{code:?}");
    assert!(matches!(code[2], InstrKind::Load { .. }), "{code:?}");
    assert_eq!(code.len(), 3);
    // The instruction's text is the statement's, without its label.
    assert_eq!(p.threads[0].code[1].text, "*x = 1;");
    // Labels are per thread; goto stays refused.
    ok("C t\nP0 () { L: ; }\nP1 () { L: ; }\nexists true\n");
    err_at(
        &c_one("int* x", "L: ;\ngoto L;"),
        4,
        1,
        "not supported: goto",
    );
}

// ---- compare-exchange with the expected value in memory ----

#[test]
fn compare_exchange_reads_and_on_failure_writes_the_expected_object() {
    let (p, w) = parse_with_warnings(&c_one(
        "atomic_int* x, int* e",
        "int ok = atomic_compare_exchange_strong_explicit(x, e, 1, memory_order_acquire, memory_order_relaxed);",
    ))
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    let r = |n: &str| Operand::Reg(reg(&p, 0, n));
    assert_eq!(
        kinds(&p, 0),
        vec![
            InstrKind::Load {
                dst: reg(&p, 0, "$t0"),
                addr: at(1),
                ty: IntType::S32,
                order: Order::Weak,
                scope: Scope::Sys
            },
            InstrKind::Rmw {
                dst: Some(reg(&p, 0, "$t1")),
                addr: at(0),
                ty: IntType::S32,
                kind: RmwKind::Cas {
                    expected: r("$t0"),
                    new: Operand::Imm(1)
                },
                order: Order::Acquire,
                scope: Scope::Gpu
            },
            InstrKind::Binary {
                dst: reg(&p, 0, "ok"),
                op: BinOp::Eq,
                ty: IntType::S32,
                a: r("$t1"),
                b: r("$t0")
            },
            // Success leaves `*e` alone: the store of the value found is on the failure path.
            InstrKind::Branch {
                cond: BranchCond::Ne(r("ok"), Operand::Imm(0)),
                target: 5
            },
            InstrKind::Store {
                addr: at(1),
                value: r("$t1"),
                ty: IntType::S32,
                order: Order::Weak,
                scope: Scope::Sys
            },
        ]
    );
    // An element of an array, and the weak form with a volatile expected object.
    let p = ok("C t\n{ int e[2]; }\nP0 (atomic_int* x, int* e, volatile int* v) {\n  atomic_compare_exchange_weak(x, &e[1], 2); atomic_compare_exchange_strong(x, v, 3);\n}\nexists true\n");
    let code = kinds(&p, 0);
    assert_eq!(code[0].address(), Some(&at(1)));
    assert_eq!(code[1].address(), Some(&at(2)));
    assert_eq!(code[4].address(), Some(&at(1)));
    assert!(matches!(
        code[5],
        InstrKind::Load {
            order: Order::Volatile,
            ..
        }
    ));
    err_at(
        &c_one(
            "atomic_long* x, int* e",
            "atomic_compare_exchange_strong(x, e, 1);",
        ),
        3,
        35,
        "the expected value is a `int` but the object holds `long long` values",
    );
    err_at(
        &c_one(
            "atomic_int* x",
            "int r = 0; atomic_compare_exchange_strong(x, r, 1);",
        ),
        3,
        46,
        "expected `&r`",
    );
    err_at(
        &c_one(
            "atomic_int* x",
            "atomic_compare_exchange_strong(x, 1 + 2, 1);",
        ),
        3,
        35,
        "expected a pointer",
    );
}

// ---- atomic functions on non-atomic objects ----

#[test]
fn atomic_functions_on_plain_objects_warn_but_cuda_atomics_do_not() {
    let (p, w) = parse_with_warnings(&c_one(
        "int* x",
        "int r = atomic_fetch_add(x, 1);\nint e = 0; atomic_compare_exchange_strong_explicit(x, &e, 1, memory_order_relaxed, memory_order_relaxed);",
    ))
    .unwrap();
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!((w[0].line(), w[0].column()), (3, 26));
    assert_eq!((w[1].line(), w[1].column()), (4, 52));
    for w in &w {
        assert!(
            w.message.contains("non-atomic")
                && w.message.contains("undefined")
                && w.message
                    .contains("treats it as an atomic read-modify-write"),
            "{}",
            w.message
        );
    }
    assert_eq!(
        kinds(&p, 0)[0],
        InstrKind::Rmw {
            dst: Some(reg(&p, 0, "r")),
            addr: at(0),
            ty: IntType::S32,
            kind: RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
            order: Order::SeqCst,
            scope: Scope::Gpu
        }
    );
    // CUDA's atomics are defined on plain `int*`.
    let (_, w) = parse_with_warnings(&c_one(
        "int* x",
        "int r = atomicAdd(x, 1); atomicCAS(x, 0, 1); atomicExch_block(x, 2);",
    ))
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    // Loads and stores still need an atomic object.
    err_at(
        &c_one("int* x", "atomic_store(x, 1);"),
        3,
        14,
        "needs a pointer to an atomic type",
    );
}

// ---- option comments ----

#[test]
fn option_comments_are_returned_with_their_positions() {
    let t = test("PTX t (* options: --its off *)\n(* options: --unroll 3\n  --progress fair *)\n(* expect: Ok -- options: not these *)\nP0 ;\nexists true\n(* options: --model=ptx *)\n");
    let words: Vec<(&str, u32, u32)> = t
        .options
        .iter()
        .map(|w| (w.word.as_str(), w.span.line, w.span.column))
        .collect();
    assert_eq!(
        words,
        [
            ("--its", 1, 19),
            ("off", 1, 25),
            ("--unroll", 2, 13),
            ("3", 2, 22),
            ("--progress", 3, 3),
            ("fair", 3, 14),
            ("--model=ptx", 7, 13),
        ]
    );
    let src = "C t (* options: --its off *)\n\"d\"\n(*options:--unroll 4*)\nP0 (int* x) {\n  (* options: --progress fair *) *x = 1;\n}\nexists true (* options: --symmetry off *)\n";
    let t = test(src);
    let words: Vec<(&str, u32, u32)> = t
        .options
        .iter()
        .map(|w| (w.word.as_str(), w.span.line, w.span.column))
        .collect();
    assert_eq!(
        words,
        [
            ("--its", 1, 17),
            ("off", 1, 23),
            ("--unroll", 3, 11),
            ("4", 3, 20),
            ("--progress", 5, 15),
            ("fair", 5, 26),
            ("--symmetry", 7, 25),
            ("off", 7, 36),
        ]
    );
    for w in &t.options {
        assert_eq!(&src[w.span.offset..w.span.offset + w.span.len], w.word);
    }
    assert!(test("PTX t\nP0 ;\nexists true\n").options.is_empty());
}
