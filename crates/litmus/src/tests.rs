//! Tests of the PTX parser: one per construct and one per error, with exact positions.

use crate::parse;
use scopecheck_ir::*;

fn ok(src: &str) -> Program {
    match parse(src) {
        Ok(p) => p,
        Err(e) => panic!(
            "unexpected error at {}:{}: {}",
            e.line(),
            e.column(),
            e.message
        ),
    }
}

/// What an error's note says would have been accepted: the list of `expected one of: A, B`,
/// or the one of `expected A`; empty without such a note.
pub(crate) fn expected(e: &Diagnostic) -> Vec<&str> {
    let Some(note) = e.notes.iter().find(|n| n.starts_with("expected ")) else {
        return Vec::new();
    };
    match note.strip_prefix("expected one of: ") {
        Some(list) => list.split(", ").collect(),
        None => vec![&note["expected ".len()..]],
    }
}

pub(crate) fn err(src: &str) -> Diagnostic {
    match parse(src) {
        Ok(p) => panic!("expected an error, parsed {p:#?}"),
        Err(e) => e,
    }
}

/// Asserts an error's position and that its message contains `needle`.
#[track_caller]
pub(crate) fn err_at(src: &str, line: u32, column: u32, needle: &str) -> Diagnostic {
    let e = err(src);
    assert_eq!(
        (e.line(), e.column()),
        (line, column),
        "wrong position for error {:?}",
        e.message
    );
    assert!(
        e.message.contains(needle),
        "message {:?} does not contain {:?}",
        e.message,
        needle
    );
    e
}

const MP: &str = r#"PTX MP+rel.cta+acq.gpu
"message passing, release at
 CTA scope"
(* comments may appear anywhere *)
{ data=0; flag=0; P1:r0=0; }
 P0@cta 0,gpu 0         | P1@cta 1,gpu 0          ;
 st.weak data, 7        | ld.acquire.gpu r0, flag ;
 st.release.cta flag, 1 | ld.weak r1, data        ;
exists (P1:r0 == 1 /\ P1:r1 == 0)
"#;

/// A two-thread test around `code` (a table body of two columns), with condition `cond`.
fn two(code: &str, cond: &str) -> String {
    format!("PTX t\n{{ x=0; y=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n{code}\n{cond}\n")
}

/// One thread running `instr`, on line 4.
fn one(instr: &str) -> String {
    format!("PTX t\n{{ x=0; }}\nP0@cta 0,gpu 0 ;\n{instr} ;\nexists (true)\n")
}

fn code(p: &Program, t: usize) -> Vec<InstrKind> {
    p.threads[t].code.iter().map(|i| i.kind.clone()).collect()
}

fn only_instr(instr: &str) -> InstrKind {
    let p = ok(&one(instr));
    assert_eq!(p.threads[0].code.len(), 1);
    p.threads[0].code[0].kind.clone()
}

fn addr(loc: u32) -> Address {
    Address::loc(LocId(loc))
}

// ---- whole tests and sections ----

#[test]
fn parses_message_passing() {
    let p = ok(MP);
    assert_eq!(p.arch, Arch::Ptx);
    assert_eq!(p.name, "MP+rel.cta+acq.gpu");
    assert_eq!(
        p.description.as_deref(),
        Some("message passing, release at\n CTA scope")
    );
    assert_eq!(p.locations.len(), 2);
    assert_eq!(p.locations[0].name, "data");
    assert_eq!(p.locations[1].name, "flag");
    assert_eq!(p.threads.len(), 2);
    assert_eq!(p.threads[0].name, "P0");
    assert_eq!(p.threads[1].registers, vec!["r0", "r1"]);
    assert_eq!(p.threads[1].init_regs, vec![(RegId(0), 0)]);
    assert_eq!(
        code(&p, 0),
        vec![
            InstrKind::Store {
                addr: addr(0),
                ty: IntType::S32,
                value: Operand::Imm(7),
                order: Order::Weak,
                scope: Scope::Sys
            },
            InstrKind::Store {
                addr: addr(1),
                ty: IntType::S32,
                value: Operand::Imm(1),
                order: Order::Release,
                scope: Scope::Cta
            },
        ]
    );
    assert_eq!(
        code(&p, 1),
        vec![
            InstrKind::Load {
                dst: RegId(0),
                addr: addr(1),
                ty: IntType::S32,
                order: Order::Acquire,
                scope: Scope::Gpu
            },
            InstrKind::Load {
                dst: RegId(1),
                addr: addr(0),
                ty: IntType::S32,
                order: Order::Weak,
                scope: Scope::Sys
            },
        ]
    );
    let i = &p.threads[1].code[0];
    assert_eq!(i.text, "ld.acquire.gpu r0, flag");
    assert_eq!((i.span.line, i.span.column, i.span.len), (7, 27, 23));
    assert_eq!(&MP[i.span.offset..i.span.offset + i.span.len], i.text);
    assert_eq!(p.condition.quantifier, Quantifier::Exists);
    let r = |t, r| Term::Observable(Observable::Reg(ThreadId(t), RegId(r)));
    assert_eq!(
        p.condition.prop,
        Prop::And(
            Box::new(Prop::Cmp(r(1, 0), CmpOp::Eq, Term::Const(1))),
            Box::new(Prop::Cmp(r(1, 1), CmpOp::Eq, Term::Const(0))),
        )
    );
    assert_eq!(p.condition.span.map(|s| (s.line, s.column)), Some((9, 1)));
    assert!(p.extra_observables.is_empty());
}

#[test]
fn dialect_is_chosen_by_the_first_word() {
    for arch in ["C", "CUDA", "OPENCL"] {
        // The C dialect reads past the header: here it finds no thread.
        err_at(
            &format!("(* c *)\n  {arch} test\n{{}}"),
            3,
            3,
            "expected a thread",
        );
        err_at(
            &format!("{arch}\n"),
            1,
            arch.len() as u32 + 1,
            "expected the test name",
        );
    }
    let e = err_at("X86 test\n", 1, 1, "unknown architecture `X86`");
    assert_eq!(expected(&e), ["PTX", "C", "CUDA", "OPENCL"]);
    err_at("", 1, 1, "expected a litmus header");
    err_at("\n  { x=0; }", 2, 3, "expected a litmus header");
    err_at("PTX\n{ x=0; }", 1, 4, "expected the test name");
    err_at("PTX   \n", 1, 7, "expected the test name");
}

#[test]
fn header_name_stops_at_a_comment_and_a_bom_is_skipped() {
    let p = ok("\u{feff}PTX SB+fences (* store\n buffering *)\nP0 ;\nexists true");
    assert_eq!(p.name, "SB+fences");
    assert_eq!(p.description, None);
}

#[test]
fn init_entries_of_every_form() {
    let p = ok("PTX t\n{ a=1; int b = 2; uint32_t c=3; [d]=4; e@shared=5; f@global=6; g@host=7;\n  h@managed=-8; P0:r3=9; 0:%r4=10 }\nP0 ;\nexists (true)");
    let locs: Vec<(&str, MemorySpace, Value)> = p
        .locations
        .iter()
        .map(|l| (l.name.as_str(), l.space, l.init))
        .collect();
    assert_eq!(
        locs,
        vec![
            ("a", MemorySpace::Global, 1),
            ("b", MemorySpace::Global, 2),
            ("c", MemorySpace::Global, 3),
            ("d", MemorySpace::Global, 4),
            ("e", MemorySpace::Shared, 5),
            ("f", MemorySpace::Global, 6),
            ("g", MemorySpace::HostMapped, 7),
            ("h", MemorySpace::Managed, -8),
        ]
    );
    assert_eq!(
        p.locations[1].span.map(|s| (s.line, s.column)),
        Some((2, 12))
    );
    assert_eq!(p.threads[0].registers, vec!["r3", "r4"]);
    assert_eq!(p.threads[0].init_regs, vec![(RegId(0), 9), (RegId(1), 10)]);
    // Empty and missing initial states are fine.
    assert!(ok("PTX t\n{}\nP0 ;\nexists (true)").locations.is_empty());
    assert!(ok("PTX t\nP0 ;\nexists (true)").locations.is_empty());
}

#[test]
fn init_errors() {
    err_at(
        "PTX t\n{ x=0 y=0 }\nP0 ;\nexists true",
        2,
        7,
        "expected `;` between initial-state entries",
    );
    err_at(
        "PTX t\n{ x=0; x=1; }\nP0 ;\nexists true",
        2,
        8,
        "location `x` is initialised twice",
    );
    err_at(
        "PTX t\n{ x@local=0; }\nP0 ;\nexists true",
        2,
        5,
        "unknown memory space `local`",
    );
    err_at(
        "PTX t\n{ r0=0; }\nP0 ;\nexists true",
        2,
        3,
        "found register `r0`",
    );
    err_at(
        "PTX t\n{ x=y; }\nP0 ;\nexists true",
        2,
        5,
        "expected the location's initial value",
    );
    err_at(
        "PTX t\n{ P3:r0=1; }\nP0 | P1 ;\nexists true",
        2,
        3,
        "no thread P3 in this test",
    );
    err_at(
        "PTX t\n{ P0:r0=1; P0:%r0=2; }\nP0 ;\nexists true",
        2,
        12,
        "initialised twice",
    );
    err_at(
        "PTX t\n{ P0:x=1; }\nP0 ;\nexists true",
        2,
        6,
        "expected a register",
    );
    err_at(
        "PTX t\n{ x=0;\nP0 ;\nexists true",
        3,
        1,
        "expected `}` to close the initial state",
    );
}

#[test]
fn placement_rows() {
    let p = ok("PTX t\n{}\n P0@cta 0,gpu 0 | P1@warp 2, cta 0, gpu 0 | P2@cta 1,gpu 0 | P3 | P4@host | P5@cta 3,cluster 7,gpu 1 | P6@cta 2, gpu 1;\nexists (true)");
    let dev = |t: usize| match p.threads[t].placement {
        Placement::Device(d) => d,
        Placement::Host => panic!("host"),
    };
    assert_eq!(p.threads.len(), 7);
    assert_eq!((dev(0).gpu, dev(0).cta, dev(0).warp), (0, 0, None));
    assert_eq!((dev(1).cta, dev(1).warp), (0, Some(2)));
    // Same (gpu, cta): same cluster; other CTAs: clusters of their own, none equal to the
    // explicitly numbered 7.
    assert_eq!(dev(0).cluster, dev(1).cluster);
    assert_eq!(dev(0).cluster, dev(3).cluster);
    assert_ne!(dev(0).cluster, dev(2).cluster);
    assert_eq!(dev(5).cluster, 7);
    assert_eq!((dev(5).gpu, dev(5).cta), (1, 3));
    for t in [0, 2, 6] {
        assert_ne!(dev(t).cluster, 7);
    }
    assert_ne!(dev(6).cluster, dev(2).cluster);
    assert_eq!(p.threads[4].placement, Placement::Host);
    // Cluster scope equals CTA scope when no cluster is named.
    let p0 = p.threads[0].placement;
    let p2 = p.threads[2].placement;
    assert!(!p0.scope_includes(Scope::Cluster, &p2));
    assert_eq!(p.threads[1].span.map(|s| (s.line, s.column)), Some((3, 19)));
    // A CTA that names its cluster once puts all its threads in it.
    let p = ok("PTX t\nP0@cta 1,gpu 0 | P1@cta 1,cluster 4,gpu 0 ;\nexists true");
    assert_eq!(p.threads[0].placement, p.threads[1].placement);
}

#[test]
fn placement_errors() {
    err_at(
        "PTX t\nP0 | P2 ;\nexists true",
        2,
        6,
        "expected thread `P1`, found `P2`",
    );
    err_at("PTX t\nP1 ;\nexists true", 2, 1, "expected thread `P0`");
    err_at(
        "PTX t\nT0 ;\nexists true",
        2,
        1,
        "expected thread `P0` in the placement row",
    );
    err_at(
        "PTX t\nP0@gpu 0, cta 0 ;\nexists true",
        2,
        11,
        "`cta` out of place",
    );
    err_at(
        "PTX t\nP0@cta 0, block 1 ;\nexists true",
        2,
        11,
        "expected a placement item",
    );
    err_at(
        "PTX t\nP0@cta x ;\nexists true",
        2,
        8,
        "expected the cta number",
    );
    err_at(
        "PTX t\nP0@cta -1 ;\nexists true",
        2,
        8,
        "the cta number must be between",
    );
    err_at("PTX t\nP0@ ;\nexists true", 2, 5, "expected a placement");
    err_at(
        "PTX t\nP0@cta 0,cluster 1,gpu 0 | P1@cta 0,cluster 2,gpu 0;\nexists true",
        2,
        45,
        "already placed in cluster 1",
    );
    err_at(
        "PTX t\nP0 P1 ;\nexists true",
        2,
        4,
        "expected `|` before the next thread or `;`",
    );
}

#[test]
fn rows_cells_and_labels() {
    let src = two(
        " mov r0, 1 |             ;\n            | L0:         ;\n L1:        | ld r1, x    ;\n bra L1     | L2: bne r1, 0, L0 ;\n            | goto L3  ;\n            | L3: ;",
        "exists (true)",
    );
    let p = ok(&src);
    assert_eq!(p.threads[0].code.len(), 2);
    assert_eq!(
        code(&p, 0)[1],
        InstrKind::Branch {
            cond: BranchCond::Always,
            target: 1
        }
    );
    let c1 = code(&p, 1);
    assert_eq!(c1.len(), 3);
    assert_eq!(
        c1[1],
        InstrKind::Branch {
            cond: BranchCond::Ne(Operand::Reg(RegId(0)), Operand::Imm(0)),
            target: 0
        }
    );
    // A label at the end of the code resolves to the code length.
    assert_eq!(
        c1[2],
        InstrKind::Branch {
            cond: BranchCond::Always,
            target: 3
        }
    );
    assert_eq!(p.threads[1].code[1].text, "bne r1, 0, L0");
    // Rows may have fewer cells than threads.
    let p = ok(&two(" st x, 1 ;\n ; \n | st y, 1 ;", "exists (true)"));
    assert_eq!((p.threads[0].code.len(), p.threads[1].code.len()), (1, 1));
}

#[test]
fn row_errors() {
    // Missing `;`: the error is at the token that should have been `;`.
    err_at(
        &two(" st x, 1 | ld r0, x\n st y, 1 | ld r1, y ;", "exists true"),
        5,
        2,
        "expected `;` at end of instruction row",
    );
    err_at(
        &two(" st x, 1 ld r0, x ;", "exists true"),
        4,
        10,
        "expected `|` before the next thread's cell or `;`",
    );
    let e = err_at(
        &two(" st x, 1 | ld r0, x | mov r1, 2 ;", "exists true"),
        4,
        23,
        "more cells than the 2 threads",
    );
    assert_eq!(e.span.expect("a span").len, 3);
    err_at(
        &two(" st x, 1 | ld r0, x | ;", "exists true"),
        4,
        21,
        "more cells than the 2 threads",
    );
    err_at(
        &two(" st x, 1 | 42 ;", "exists true"),
        4,
        12,
        "expected an instruction",
    );
    err_at(
        &two(" ld r0, x, y ;", "exists true"),
        4,
        10,
        "too many operands",
    );
    err_at(
        &two(" bra L9 ;", "exists true"),
        4,
        6,
        "unknown label `L9` in thread P0",
    );
    err_at(
        &two(" L: ;\n L: ;", "exists true"),
        5,
        2,
        "label `L` is defined twice",
    );
    err_at(
        &two(" ld.x: ;", "exists true"),
        4,
        2,
        "not a valid label name",
    );
    // A label of another thread is not visible.
    err_at(
        &two(" L: | bra L ;", "exists true"),
        4,
        11,
        "unknown label `L` in thread P1",
    );
    err_at(&two(" st x, 1 ;", ""), 6, 1, "expected a condition");
}

// ---- instructions ----

/// Access `k` with type `ty`.
fn typed(mut k: InstrKind, to: IntType) -> InstrKind {
    if let InstrKind::Load { ty, .. } | InstrKind::Store { ty, .. } | InstrKind::Rmw { ty, .. } =
        &mut k
    {
        *ty = to;
    }
    k
}

#[test]
fn loads_and_stores() {
    let ld = |order, scope| InstrKind::Load {
        dst: RegId(0),
        addr: addr(0),
        ty: IntType::S32,
        order,
        scope,
    };
    assert_eq!(only_instr("ld r0, x"), ld(Order::Weak, Scope::Sys));
    assert_eq!(only_instr("ld.weak r0, [x]"), ld(Order::Weak, Scope::Sys));
    // A type suffix is the access's type (and the location's).
    assert_eq!(
        only_instr("ld.global.u32 %r0, x"),
        typed(ld(Order::Weak, Scope::Sys), IntType::U32)
    );
    assert_eq!(
        only_instr("ld.relaxed.cta r0, x"),
        ld(Order::Relaxed, Scope::Cta)
    );
    assert_eq!(
        only_instr("ld.relaxed.cluster.b64 r0, x"),
        typed(ld(Order::Relaxed, Scope::Cluster), IntType::U64)
    );
    assert_eq!(
        only_instr("ld.acquire.sys r0, x"),
        ld(Order::Acquire, Scope::Sys)
    );
    assert_eq!(
        only_instr("ld.gpu.acquire r0, x"),
        ld(Order::Acquire, Scope::Gpu)
    );
    assert_eq!(
        only_instr("ld.volatile r0, x"),
        ld(Order::Relaxed, Scope::Sys)
    );
    let st = |value, order, scope| InstrKind::Store {
        addr: addr(0),
        ty: IntType::S32,
        value,
        order,
        scope,
    };
    assert_eq!(
        only_instr("st x, 1"),
        st(Operand::Imm(1), Order::Weak, Scope::Sys)
    );
    assert_eq!(
        only_instr("st.weak.s32 x, -1"),
        typed(st(Operand::Imm(-1), Order::Weak, Scope::Sys), IntType::S32)
    );
    assert_eq!(
        only_instr("st.relaxed.gpu [x], r0"),
        st(Operand::Reg(RegId(0)), Order::Relaxed, Scope::Gpu)
    );
    assert_eq!(
        only_instr("st.release.sys x, 2"),
        st(Operand::Imm(2), Order::Release, Scope::Sys)
    );
    assert_eq!(
        only_instr("st.volatile x, 2"),
        st(Operand::Imm(2), Order::Relaxed, Scope::Sys)
    );
    // Address dependency.
    assert_eq!(
        only_instr("ld r0, [x+r5]"),
        InstrKind::Load {
            dst: RegId(0),
            addr: Address::Loc {
                loc: LocId(0),
                index: Some(RegId(1))
            },
            ty: IntType::S32,
            order: Order::Weak,
            scope: Scope::Sys
        }
    );
}

#[test]
fn load_store_errors() {
    let e = err_at(
        &one("ld.acquire.blk r0, x"),
        4,
        11,
        "unknown scope `.blk`; expected one of .cta, .cluster, .gpu, .sys",
    );
    assert_eq!(expected(&e), [".cta", ".cluster", ".gpu", ".sys"]);
    assert_eq!(e.span.expect("a span").len, 4);
    err_at(&one("ld.acquire r0, x"), 4, 3, "`ld.acquire` needs a scope");
    err_at(&one("st.relaxed x, 1"), 4, 3, "`st.relaxed` needs a scope");
    err_at(
        &one("ld.release.gpu r0, x"),
        4,
        3,
        "qualifier `.release` is not allowed on `ld`",
    );
    err_at(
        &one("st.acquire.gpu x, 1"),
        4,
        3,
        "qualifier `.acquire` is not allowed on `st`",
    );
    err_at(
        &one("ld.weak.gpu r0, x"),
        4,
        8,
        "a weak `ld` takes no scope",
    );
    err_at(
        &one("ld.volatile.gpu r0, x"),
        4,
        12,
        "`.volatile` takes no scope",
    );
    err_at(
        &one("ld.relaxed.gpu.gpu r0, x"),
        4,
        15,
        "duplicate qualifier `.gpu`",
    );
    err_at(
        &one("ld.relaxed.acquire.gpu r0, x"),
        4,
        11,
        "conflicting qualifiers `.relaxed` and `.acquire`",
    );
    err_at(
        &one("ld.u32.s32 r0, x"),
        4,
        7,
        "conflicting qualifiers `.u32` and `.s32`",
    );
    err_at(
        &one("ld.global.global r0, x"),
        4,
        10,
        "duplicate qualifier `.global`",
    );
    err_at(
        &one("ld.shared r0, x"),
        4,
        3,
        "unknown qualifier `.shared` on `ld`",
    );
    err_at(
        &one("ld.relaxed.f32 r0, x"),
        4,
        11,
        "unsupported type `.f32`",
    );
    err_at(
        &one("ld x, x"),
        4,
        4,
        "expected a register such as `r0`, found `x`",
    );
    err_at(&one("ld r0 x"), 4, 7, "expected `,` before the address");
    err_at(&one("ld r0, r1"), 4, 8, "found register `r1`");
    err_at(&one("ld r0, [x+y]"), 4, 11, "expected a register");
    err_at(
        &one("ld r0, [x"),
        4,
        11,
        "expected `]` to close the address",
    );
    err_at(
        &one("st x, y"),
        4,
        7,
        "expected a register or an integer, found `y`",
    );
    err_at(&one("ld r0, %x"), 4, 8, "not a valid location name");
    err_at(&one("ld. r0, x"), 4, 3, "unexpected `.`");
}

#[test]
fn read_modify_writes() {
    let rmw = |dst, kind, order, scope| InstrKind::Rmw {
        dst,
        addr: addr(0),
        ty: IntType::S32,
        kind,
        order,
        scope,
    };
    let d = Some(RegId(0));
    assert_eq!(
        only_instr("atom.add r0, x, 1"),
        rmw(
            d,
            RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
            Order::Relaxed,
            Scope::Gpu
        )
    );
    // `.b32` is 32 untyped bits: unsigned.
    assert_eq!(
        only_instr("atom.acq_rel.cta.exch.b32 r0, [x], 2"),
        typed(
            rmw(
                d,
                RmwKind::Op(RmwOp::Exch, Operand::Imm(2)),
                Order::AcqRel,
                Scope::Cta
            ),
            IntType::U32
        )
    );
    assert_eq!(
        only_instr("atom.acquire.sys.cas r0, x, 0, r1"),
        rmw(
            d,
            RmwKind::Cas {
                expected: Operand::Imm(0),
                new: Operand::Reg(RegId(1))
            },
            Order::Acquire,
            Scope::Sys
        )
    );
    for (name, op) in [
        ("sub", RmwOp::Sub),
        ("inc", RmwOp::Inc),
        ("dec", RmwOp::Dec),
        ("and", RmwOp::And),
        ("or", RmwOp::Or),
        ("xor", RmwOp::Xor),
        ("min", RmwOp::Min),
        ("max", RmwOp::Max),
    ] {
        assert_eq!(
            only_instr(&format!("red.release.gpu.{name} x, 3")),
            rmw(
                None,
                RmwKind::Op(op, Operand::Imm(3)),
                Order::Release,
                Scope::Gpu
            )
        );
    }
    assert_eq!(
        only_instr("red.global.add.u32 [x], 1"),
        typed(
            rmw(
                None,
                RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
                Order::Relaxed,
                Scope::Gpu
            ),
            IntType::U32
        )
    );
}

#[test]
fn rmw_errors() {
    err_at(&one("atom r0, x, 1"), 4, 1, "`atom` needs an operation");
    err_at(
        &one("atom.relaxed.gpu.addd r0, x, 1"),
        4,
        17,
        "unknown operation `.addd` on `atom`",
    );
    err_at(
        &one("atom.relaxed.blk.add r0, x, 1"),
        4,
        13,
        "unknown scope `.blk`",
    );
    err_at(
        &one("atom.add.sub r0, x, 1"),
        4,
        9,
        "conflicting qualifiers `.add` and `.sub`",
    );
    err_at(
        &one("atom.weak.add r0, x, 1"),
        4,
        5,
        "qualifier `.weak` is not allowed on `atom`",
    );
    err_at(
        &one("red.cas x, 1, 2"),
        4,
        4,
        "qualifier `.cas` is not allowed on `red`",
    );
    err_at(
        &one("atom.cas r0, x, 1"),
        4,
        19,
        "expected `,` before the new value",
    );
    err_at(&one("red.add r0, x, 1"), 4, 9, "found register `r0`");
}

#[test]
fn fences_and_barriers() {
    let f = |order, scope| InstrKind::Fence {
        order,
        scope,
        spaces: scopecheck_ir::FenceSpaces::ALL,
    };
    assert_eq!(only_instr("fence.sc.cta"), f(FenceOrder::Sc, Scope::Cta));
    assert_eq!(
        only_instr("fence.acq_rel.cluster"),
        f(FenceOrder::AcqRel, Scope::Cluster)
    );
    assert_eq!(only_instr("fence.gpu"), f(FenceOrder::AcqRel, Scope::Gpu));
    assert_eq!(only_instr("membar.cta"), f(FenceOrder::Sc, Scope::Cta));
    assert_eq!(only_instr("membar.gl"), f(FenceOrder::Sc, Scope::Gpu));
    assert_eq!(only_instr("membar.sys"), f(FenceOrder::Sc, Scope::Sys));
    let imm = |v: i64| Operand::Imm(v);
    let sync = |id, count: Option<i64>| InstrKind::Barrier {
        id: imm(id),
        kind: BarrierKind::Sync,
        count: count.map(imm),
        spaces: scopecheck_ir::FenceSpaces::ALL,
    };
    assert_eq!(only_instr("bar.sync 0"), sync(0, None));
    assert_eq!(only_instr("bar.cta.sync 1"), sync(1, None));
    assert_eq!(only_instr("barrier.sync 2, 64"), sync(2, Some(64)));
    assert_eq!(only_instr("barrier.cta.sync.aligned 15"), sync(15, None));
    assert_eq!(
        only_instr("bar.arrive 3, 2"),
        InstrKind::Barrier {
            id: imm(3),
            kind: BarrierKind::Arrive,
            count: Some(imm(2)),
            spaces: scopecheck_ir::FenceSpaces::ALL,
        }
    );
    assert_eq!(
        only_instr("bar.cta.arrive 3, 2"),
        InstrKind::Barrier {
            id: imm(3),
            kind: BarrierKind::Arrive,
            count: Some(imm(2)),
            spaces: scopecheck_ir::FenceSpaces::ALL,
        }
    );
    let red = |op, count: Option<i64>| InstrKind::Barrier {
        id: imm(1),
        kind: BarrierKind::Red {
            op,
            dst: RegId(0),
            pred: Operand::Reg(RegId(1)),
        },
        count: count.map(imm),
        spaces: scopecheck_ir::FenceSpaces::ALL,
    };
    assert_eq!(
        only_instr("bar.red.popc.u32 r0, 1, r1"),
        red(BarrierRedOp::Popc, None)
    );
    assert_eq!(
        only_instr("bar.red.and.pred r0, 1, r1"),
        red(BarrierRedOp::And, None)
    );
    assert_eq!(
        only_instr("bar.cta.red.or.pred r0, 1, 4, r1"),
        red(BarrierRedOp::Or, Some(4))
    );
    // The barrier and the count in registers (read when the instruction runs).
    assert_eq!(
        only_instr("bar.cta.sync r3, r4"),
        InstrKind::Barrier {
            id: Operand::Reg(RegId(0)),
            kind: BarrierKind::Sync,
            count: Some(Operand::Reg(RegId(1))),
            spaces: scopecheck_ir::FenceSpaces::ALL,
        }
    );
}

#[test]
fn fence_and_barrier_errors() {
    err_at(&one("fence.sc"), 4, 6, "`fence` needs a scope");
    err_at(&one("fence.sc.blk"), 4, 9, "unknown scope `.blk`");
    err_at(
        &one("fence.release.gpu"),
        4,
        6,
        "qualifier `.release` is not allowed on `fence`",
    );
    err_at(&one("membar.gpu"), 4, 7, "unknown membar level `.gpu`");
    err_at(&one("membar"), 4, 1, "`membar` needs a level");
    err_at(
        &one("membar.cta.sys"),
        4,
        11,
        "conflicting qualifiers `.cta` and `.sys`",
    );
    err_at(&one("bar 0"), 4, 1, "`bar` needs .sync, .arrive or .red");
    err_at(&one("bar.sync.sync 0"), 4, 9, "duplicate qualifier `.sync`");
    err_at(
        &one("bar.wait 0"),
        4,
        4,
        "unknown qualifier `.wait` on `bar`",
    );
    err_at(
        &one("bar.sync 16"),
        4,
        10,
        "barrier number 16 is out of range",
    );
    // A register may name the barrier; a location may not.
    err_at(
        &one("bar.sync x"),
        4,
        10,
        "expected a barrier number (0 to 15) or a register",
    );
    err_at(
        &one("bar.arrive 0"),
        4,
        14,
        "expected `,` before the thread count",
    );
    err_at(
        &one("bar.sync 0, 0"),
        4,
        13,
        "thread count must be positive",
    );
    err_at(
        &one("bar.red.u32 r0, 0, r1"),
        4,
        1,
        "`bar.red` needs an operation",
    );
    err_at(
        &one("bar.sync.popc 0"),
        4,
        9,
        "only allowed on a `.red` barrier",
    );
}

#[test]
fn arithmetic_and_branches() {
    let r = |i| Operand::Reg(RegId(i));
    assert_eq!(
        only_instr("mov r0, 5"),
        InstrKind::Mov {
            dst: RegId(0),
            src: Operand::Imm(5)
        }
    );
    assert_eq!(
        only_instr("mov.u32 %r0, %r0"),
        InstrKind::Mov {
            dst: RegId(0),
            src: r(0)
        }
    );
    for (name, op) in [
        ("add", BinOp::Add),
        ("sub", BinOp::Sub),
        ("mul", BinOp::Mul),
        ("and", BinOp::And),
        ("or", BinOp::Or),
        ("xor.b32", BinOp::Xor),
    ] {
        assert_eq!(
            only_instr(&format!("{name} r0, r1, 0x10")),
            InstrKind::Binary {
                dst: RegId(0),
                op,
                // Untyped arithmetic is 32-bit signed; `.b32` computes in 32 unsigned bits.
                ty: if name.ends_with(".b32") {
                    IntType::U32
                } else {
                    IntType::S32
                },
                a: r(1),
                b: Operand::Imm(16)
            }
        );
    }
    let p = ok(&one("L: beq r0, 1, L"));
    assert_eq!(
        code(&p, 0),
        vec![InstrKind::Branch {
            cond: BranchCond::Eq(r(0), Operand::Imm(1)),
            target: 0
        }]
    );
    assert_eq!(p.threads[0].code[0].text, "beq r0, 1, L");
    let p = ok(&one("bra.uni E ;\n E:"));
    assert_eq!(
        code(&p, 0),
        vec![InstrKind::Branch {
            cond: BranchCond::Always,
            target: 1
        }]
    );
}

#[test]
fn arithmetic_and_branch_errors() {
    err_at(
        &one("mov.gpu r0, 1"),
        4,
        4,
        "qualifier `.gpu` is not allowed on `mov`",
    );
    err_at(
        &one("mov.foo r0, 1"),
        4,
        4,
        "unknown qualifier `.foo` on `mov`",
    );
    err_at(
        &one("add r0, r1"),
        4,
        12,
        "expected `,` before the second source operand",
    );
    err_at(&one("mov 1, r0"), 4, 5, "expected a register");
    err_at(
        &one("beq r0, 1"),
        4,
        11,
        "expected `,` before the branch target",
    );
    err_at(&one("bra 5"), 4, 5, "expected a label to branch to");
    let e = err_at(&one("jmp L"), 4, 1, "unknown instruction `jmp`");
    assert!(expected(&e).contains(&"ld"));
}

#[test]
fn proxy_operations_are_not_supported() {
    err_at(
        &one("fence.proxy.alias"),
        4,
        1,
        "proxy fence `fence.proxy.alias` is not supported yet",
    );
    err_at(&one("fence.proxy.async.global"), 4, 1, "not supported yet");
    for op in [
        "suld.b.2d r0, x",
        "sust.b.1d x, r0",
        "sured.add x, r0",
        "tex.2d r0, x",
        "tld4.r r0, x",
    ] {
        err_at(&one(op), 4, 1, "proxy operation");
    }
}

#[test]
fn registers_are_collected_in_order_of_first_mention() {
    let p = ok(&two(
        " add r5, r2, r9 | ld r1, [x+%r7] ;\n mov r2, r5 | ;",
        "exists (P0:r9 = 0)",
    ));
    assert_eq!(p.threads[0].registers, vec!["r5", "r2", "r9"]);
    assert_eq!(p.threads[1].registers, vec!["r1", "r7"]);
    // Locations: initial state first, then code order.
    let p = ok("PTX t\n{ b=1; }\nP0 | P1 ;\nst c, 1 | st a, 2 ;\nst b, 3 | ;\nexists (d == 0)");
    let names: Vec<&str> = p.locations.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, vec!["b", "c", "a", "d"]);
    assert_eq!(p.locations[1].init, 0);
}

// ---- conditions ----

fn cond(c: &str) -> Condition {
    ok(&two(" ld r0, x | ld r1, y ;", c)).condition
}

#[test]
fn condition_forms() {
    let r = |t, reg| Term::Observable(Observable::Reg(ThreadId(t), RegId(reg)));
    let x = Term::Observable(Observable::Loc(LocId(0)));
    let c = cond("~exists (0:r0=1 \\/ P1:r1 != 2)");
    assert_eq!(c.quantifier, Quantifier::NotExists);
    assert_eq!(
        c.prop,
        Prop::Or(
            Box::new(Prop::Cmp(r(0, 0), CmpOp::Eq, Term::Const(1))),
            Box::new(Prop::Cmp(r(1, 0), CmpOp::Ne, Term::Const(2))),
        )
    );
    let c = cond("forall x == 2");
    assert_eq!(c.quantifier, Quantifier::Forall);
    assert_eq!(c.prop, Prop::Cmp(x, CmpOp::Eq, Term::Const(2)));
    assert_eq!(
        cond("exists 0==0").prop,
        Prop::Cmp(Term::Const(0), CmpOp::Eq, Term::Const(0))
    );
    assert_eq!(
        cond("exists [x]=1").prop,
        Prop::Cmp(x, CmpOp::Eq, Term::Const(1))
    );
    assert_eq!(cond("exists (false)").prop, Prop::False);
    assert_eq!(cond("~ exists true").quantifier, Quantifier::NotExists);
    // `~` binds tighter than `/\`, which binds tighter than `\/`.
    let c = cond("exists ~ true /\\ false \\/ true /\\ ~(false)");
    assert_eq!(
        c.prop,
        Prop::Or(
            Box::new(Prop::And(
                Box::new(Prop::Not(Box::new(Prop::True))),
                Box::new(Prop::False)
            )),
            Box::new(Prop::And(
                Box::new(Prop::True),
                Box::new(Prop::Not(Box::new(Prop::False)))
            )),
        )
    );
    // A location only the condition mentions is created with value 0.
    let p = ok(&two(
        " ld r0, x ;",
        "exists (z == 0) (* trailing comment *)",
    ));
    assert_eq!(p.loc("z").map(|l| p.location(l).init), Some(0));
}

#[test]
fn locations_line() {
    let p = ok(&two(
        " ld r0, x | ld r1, y ;",
        "locations [x; P1:r1; 0:r0;]\nexists (true)",
    ));
    assert_eq!(
        p.extra_observables,
        vec![
            Observable::Loc(LocId(0)),
            Observable::Reg(ThreadId(1), RegId(0)),
            Observable::Reg(ThreadId(0), RegId(0))
        ]
    );
    assert!(ok(&two(" ld r0, x ;", "locations []\nexists (true)"))
        .extra_observables
        .is_empty());
}

#[test]
fn condition_errors() {
    let src = |c: &str| two(" ld r0, x | ld r1, y ;", c);
    err_at(
        &src("exists (P1:r7 == 1)"),
        5,
        12,
        "thread P1 never uses register `r7`",
    );
    err_at(
        &src("exists (P2:r0 == 1)"),
        5,
        9,
        "no thread P2 in this test",
    );
    err_at(
        &src("exists (r0 == 1)"),
        5,
        9,
        "register `r0` needs its thread",
    );
    err_at(
        &src("exists (P0:r0 == 1"),
        6,
        1,
        "expected `)` to close the parenthesis",
    );
    err_at(
        &src("exists (P0:r0 1)"),
        5,
        15,
        "expected `==`, `=` or `!=`",
    );
    err_at(&src("exists (P0:r0 == 1) /\\"), 6, 1, "expected an operand");
    err_at(
        &src("exists (P0:r0 == 1) P1:r1 == 0"),
        5,
        21,
        "expected nothing after the condition",
    );
    err_at(
        &src("exist (P0:r0 == 1)"),
        5,
        1,
        "unknown instruction `exist`",
    );
    err_at(&src("~forall (true)"), 5, 2, "expected `exists` after `~`");
    err_at(
        &src("locations [x y]\nexists true"),
        5,
        14,
        "expected `;` between locations",
    );
    err_at(
        &src("locations [P0:r9]\nexists true"),
        5,
        15,
        "never uses register `r9`",
    );
    err_at(
        &src("exists (P0:r0 == 1 (* open"),
        5,
        20,
        "unterminated comment",
    );
    let deep = format!("exists {}true", "~".repeat(10_000));
    err_at(&src(&deep), 5, 264, "nested too deeply");
    let deep = format!("exists {}true", "(".repeat(10_000));
    err_at(&src(&deep), 5, 264, "nested too deeply");
}

#[test]
fn errors_on_non_ascii_count_columns_in_characters() {
    let e = err("PTX t\n\"ééé\" { x=0; }\nP0 ;\n ld.acquire.blk r0, x ;\nexists true");
    assert_eq!((e.line(), e.column()), (4, 12));
    let e = err("PTX t\n(* é *) ¤");
    assert_eq!(
        (e.line(), e.column(), e.span.expect("a span").len),
        (2, 9, 2)
    );
    assert!(e.message.contains("unexpected character"));
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    const SEEDS: [&str; 4] = [
        MP,
        "PTX SB\n{ x=0; y@shared=0; P0:r0=0; }\n P0@warp 0,cta 0,gpu 0 | P1@cta 0,cluster 1,gpu 0 | P2@host ;\n st.relaxed.gpu x, 1 | st.relaxed.sys y, 1 | atom.acq_rel.sys.cas r3, x, 1, 2 ;\n fence.sc.gpu | membar.gl | red.add [y], r3 ;\n ld.relaxed.gpu r0, y | ld r1, [x+r2] | ;\nlocations [x; P2:r3;]\n~exists (0:r0=0 /\\ P1:r1 == 0 \\/ ~(x != 1))\n",
        "PTX BAR\n{}\n P0 | P1 ;\n L: bar.sync 0 | bar.cta.arrive 0, 2 ;\n bar.red.popc.u32 r0, 1, r5 | bar.red.or.pred r0, 1, 1 ;\n add r1, r0, 1 | beq r0, 1, E ;\n bne r1, 2, L | E: mov.u32 %r2, 3 ;\nforall (P0:r1 == 2 \\/ P1:r2 == 3)\n",
        "PTX T (* c *)\n\"d é\"\n{ int a = 1; [b]=2; }\nP0@cta 0,gpu 0 ;\nld.volatile r0, a ;\nst.volatile b, r0 ;\nexists 0==0\n",
    ];

    use crate::mutate::{apply, Mutation};

    fn mutation() -> impl Strategy<Value = Mutation> {
        crate::mutate::mutation(b";|:,.@{}[]()=!~/\\\"*+-%0123456789rPx \n")
    }

    /// Fragments of the grammar, glued at random: reaches deeper than byte mutations.
    const PIECES: [&str; 40] = [
        "PTX t\n",
        "{",
        "}",
        "x=0;",
        "P1:r0=1;",
        "P0@cta 0,gpu 0",
        "P1@host",
        "|",
        ";",
        "\n",
        "ld.acquire.gpu r0, x",
        "st.release.cta [x], 1",
        "atom.cas r1, y, 0, 1",
        "red.add x, r1",
        "fence.sc.sys",
        "membar.gl",
        "bar.sync 0",
        "bar.red.popc.u32 r2, 0, r1",
        "L:",
        "bra L",
        "beq r0, 1, L",
        "mov r3, -1",
        "exists",
        "~exists",
        "forall",
        "(",
        ")",
        "/\\",
        "\\/",
        "~",
        "P0:r0",
        "1:r1",
        "==",
        "!=",
        "=",
        "true",
        "locations [",
        "]",
        "(* c *)",
        "\"d\"",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn parse_never_panics_on_grammar_soup(
            pieces in prop::collection::vec(prop::sample::select(PIECES.to_vec()), 0..40)
        ) {
            let src = format!("PTX soup\n{}", pieces.join(" "));
            let _ = parse(&src);
        }
    }

    #[test]
    fn seeds_parse() {
        for s in SEEDS {
            ok(s);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn parse_never_panics(seed in 0..SEEDS.len(), muts in prop::collection::vec(mutation(), 1..8)) {
            let src = apply(SEEDS[seed], &muts);
            if let Err(e) = parse(&src) {
                // Errors point inside the input (or at its end).
                prop_assert!(e.span.expect("a span").offset + e.span.expect("a span").len <= src.len());
                prop_assert!(e.line() >= 1 && e.column() >= 1);
                prop_assert!(!e.message.is_empty());
            }
        }
    }
}
