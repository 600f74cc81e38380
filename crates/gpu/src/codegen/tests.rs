use super::*;
use scopecheck_ir::BinOp;

fn ptx(src: &str) -> String {
    let p = scopecheck_litmus::parse(src).expect("test parses");
    generate(&p, &GenOptions::default()).expect("generates").ptx
}

#[test]
fn each_instruction_family_has_its_ptx_form() {
    let k = ptx(r#"PTX forms
{ x=0; y=0; }
 P0@cta 0,gpu 0                | P1@cta 1,gpu 0          ;
 atom.acquire.gpu.sub.s32 r0, x, 2 | ld.volatile.s32 r0, y   ;
 atom.sys.exch r1, y, 3            | st.release.cta x, 1     ;
 red.release.gpu.min x, r1         | fence.acq_rel.cluster   ;
 atom.acq_rel.gpu.cas r2, y, 3, 4  | membar.gl               ;
exists (P0:r0 == 0)
"#);
    for want in [
        "neg.s32",
        "atom.acquire.gpu.global.add.u32",
        "atom.relaxed.sys.global.exch.b32",
        "red.release.gpu.global.min.s32",
        "atom.acq_rel.gpu.global.cas.b32",
        "ld.relaxed.sys.global.u32",
        "st.release.cta.global.u32",
        "fence.acq_rel.cluster;",
    ] {
        assert!(k.contains(want), "missing {want} in\n{k}");
    }
}

#[test]
fn backward_branches_count_iterations_and_give_up_at_the_cap() {
    let k = ptx(r#"PTX spin
{ x=0; }
 P0@cta 0,gpu 0          | P1@cta 1,gpu 0 ;
 L: ld.relaxed.gpu.s32 r0, x | st.relaxed.gpu x, 1 ;
 beq r0, 0, L            |                ;
exists (P0:r0 == 1)
"#);
    assert!(k.contains(&format!(
        "setp.gt.u32 \t%p1, %loops, {};",
        crate::layout::DEFAULT_LOOP_CAP
    )));
    assert!(k.contains("@%p1 bra \tR0_CUT;"));
    assert!(k.contains(&format!("mov.u32 \t%status, {STATUS_CUT};")));
}

#[test]
fn host_locations_and_roles_use_the_host_buffers_and_the_pacing_word() {
    let k = ptx(r#"CUDA MP+host
{ host int data = 0; managed int flag = 0; }

P0@block 0, gpu 0 (host int* data, managed cuda::atomic<int, cuda::thread_scope_system>* flag) {
  *data = 42;
  flag->store(1, cuda::std::memory_order_release);
}

P1@host (host int* data, managed std::atomic<int>* flag) {
  while (flag->load(std::memory_order_acquire) == 0) {}
  int r0 = *data;
}

~exists (1:r0=0)
"#);
    for want in [
        ".param .u64 p_host",
        ".param .u64 p_managed",
        ".param .u64 p_go",
        "st.relaxed.sys.global.u32 \t[%d4], %x0;",
        "add.s64 \t%a0, %hbase, 0;",
        "add.s64 \t%a1, %mbase, 0;",
        "st.global.u32 \t[%mbase+0], %x0;",
    ] {
        assert!(k.contains(want), "missing {want} in\n{k}");
    }
    assert!(k.contains("ROLE_0:") && !k.contains("ROLE_1:"), "{k}");
}

#[test]
fn values_past_32_bits_are_held_in_64_bit_registers() {
    // r0 = 2^33 does not fit a word: r0 is a 64-bit register. The 32-bit store writes its low
    // word, 0, as the IR does (it wraps the operand to .s32 first): `cvt.u32.u64` takes it.
    let p = scopecheck_litmus::parse(
        "PTX big\n{ x=0; }\n P0@cta 0,gpu 0 ;\n mov r0, 8589934592 ;\n \
         st.relaxed.gpu.s32 x, r0 ;\nexists (x == 0)\n",
    )
    .unwrap();
    let k = generate(&p, &GenOptions::default()).unwrap().ptx;
    for want in [
        ".reg .b64 \t%v0_0;",
        "mov.b64 \t%v0_0, 8589934592;",
        "cvt.u32.u64 \t%x12, %v0_0;",
        "st.relaxed.gpu.global.u32 \t[%a0], %x12;",
    ] {
        assert!(k.contains(want), "missing {want} in\n{k}");
    }
    // An immediate past 32 bits in a 32-bit instruction has no word to be.
    let p = scopecheck_litmus::parse(
        "PTX big\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu.s32 x, 8589934592 ;\n\
         exists (x == 0)\n",
    )
    .unwrap();
    assert!(matches!(
        generate(&p, &GenOptions::default()),
        Err(GenError::Unsupported(m)) if m.contains("32 bits")
    ));
}

fn refusal(p: &Program) -> String {
    match generate(p, &GenOptions::default()) {
        Err(GenError::Unsupported(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Two kernels in the CUDA front-end's shape: P1 is launched after P0 on its stream, so the
/// model orders all of P0 before P1 (`Thread::after`).
const ORDERED: &str = "PTX ordered\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
    st.relaxed.gpu.s32 x, 1 | ld.relaxed.gpu.s32 r0, x ;\nexists (P1:r0 == 0)\n";

/// The text of `ROLE_t` up to the next role (or the end of the kernel).
fn role_text(ptx: &str, t: u32) -> &str {
    let start = ptx
        .find(&format!("ROLE_{t}:"))
        .expect("the role is emitted");
    let rest = &ptx[start..];
    let end = rest[1..]
        .find("ROLE_")
        .map_or_else(|| rest.find("FINAL:").unwrap_or(rest.len()), |e| e + 1);
    &rest[..end]
}

#[test]
fn a_launch_order_edge_becomes_a_flag_wait_before_the_role_and_a_release_after_its_predecessor() {
    let mut p = parse(ORDERED);
    p.threads[1].after = vec![ThreadId(0)];
    let k = generate(&p, &GenOptions::default()).unwrap();
    assert_eq!(k.layout.signals, vec![ThreadId(0)]);
    assert!(k.ptx.contains(".param .u64 p_flags"), "{}", k.ptx);
    assert!(k.ptx.contains(".param .u32 p_epoch"));
    // The waiter spins on P0's flag with acquire at system scope before its load of x.
    let waiter = role_text(&k.ptx, 1);
    let wait = waiter
        .find("ld.acquire.sys.global.u32 \t%x0, [%fbase+0];")
        .expect("P1 waits for P0's flag");
    let load = waiter.find("ld.relaxed.gpu").expect("P1's load");
    assert!(
        wait < load,
        "the wait comes before the role's code:\n{waiter}"
    );
    assert!(waiter.contains("setp.eq.u32 \t%p0, %x0, %epoch;"));
    assert!(waiter.contains("%globaltimer"), "the wait is bounded");
    assert!(!waiter.contains("st.release.sys.global.u32 \t[%fbase"));
    // The predecessor releases its flag after its code and its record.
    let producer = role_text(&k.ptx, 0);
    let store = producer.find("st.relaxed.gpu").expect("P0's store");
    let release = producer
        .find("st.release.sys.global.u32 \t[%fbase+0], %epoch;")
        .expect("P0 releases its flag");
    assert!(store < release);
    assert!(!producer.contains("ld.acquire.sys.global.u32 \t%x0, [%fbase"));
}

#[test]
fn without_launch_order_no_role_waits_and_the_kernel_takes_no_flags() {
    let k = generate(&parse(ORDERED), &GenOptions::default()).unwrap();
    assert!(k.layout.signals.is_empty());
    assert!(!k.ptx.contains("p_flags"));
    assert!(!k.ptx.contains("%fbase"));
}

#[test]
fn each_predecessor_has_its_own_flag_word_per_instance() {
    let mut p = parse(
        "PTX three\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n \
         st.relaxed.gpu.s32 x, 1 | st.relaxed.gpu.s32 x, 2 | ld.relaxed.gpu.s32 r0, x ;\n\
         exists (P2:r0 == 0)\n",
    );
    p.threads[2].after = vec![ThreadId(0), ThreadId(1)];
    let k = generate(&p, &GenOptions::default()).unwrap();
    let l = &k.layout;
    assert_eq!(l.flags_per_instance(), 2);
    assert_eq!(l.flag_word(5, ThreadId(0)), Some(10));
    assert_eq!(l.flag_word(5, ThreadId(1)), Some(11));
    assert_eq!(l.flag_word(5, ThreadId(2)), None);
    let waiter = role_text(&k.ptx, 2);
    assert!(waiter.contains("[%fbase+0]") && waiter.contains("[%fbase+4]"));
    assert!(role_text(&k.ptx, 1).contains("st.release.sys.global.u32 \t[%fbase+4], %epoch;"));
}

#[test]
fn ctas_of_one_cluster_read_their_cluster_and_rank_and_pick_their_group_by_table() {
    // P0 and P1 in CTAs 0 and 1 of cluster 0, P2 alone in cluster 1: clusters of 2 CTAs.
    let k = ptx("PTX clusters\n{ x=0; }\n \
        P0@cta 0,cluster 0,gpu 0 | P1@cta 1,cluster 0,gpu 0 | P2@cta 2,cluster 1,gpu 0 ;\n \
        st.relaxed.cluster.s32 x, 1 | ld.relaxed.cluster.s32 r0, x | ld.relaxed.gpu.s32 r0, x ;\n\
        exists (P1:r0 == 0)\n");
    assert!(k.contains("mov.u32 \t%x3, %clusterid.x;"), "{k}");
    assert!(k.contains("mov.u32 \t%x4, %cluster_ctarank;"));
    assert!(
        k.contains("div.u32 \t%x2, %x2, 2;"),
        "the permutation moves clusters"
    );
    // Table: (test cluster 0, rank 0) -> group 0, rank 1 -> group 1, (1, 0) -> group 2.
    for (code, g) in [(0, 0), (1, 1), (2, 2)] {
        assert!(k.contains(&format!(
            "setp.eq.u32 \t%p0, %x3, {code};\n\t@%p0 mov.u32 \t%g, {g};"
        )));
    }
    // Rank 1 of cluster 1 has no CTA: it runs no role.
    assert!(k.contains("and.pred \t%p6, %p6, %p4;"));
}

#[test]
fn a_launch_order_cycle_is_refused() {
    let mut p = parse(ORDERED);
    p.threads[0].after = vec![ThreadId(1)];
    p.threads[1].after = vec![ThreadId(0)];
    let e = generate(&p, &GenOptions::default()).unwrap_err();
    assert!(e.to_string().contains("cycle"), "{e}");
}

fn parse(src: &str) -> Program {
    scopecheck_litmus::parse(src).expect("test parses")
}

#[test]
fn warp_collectives_run_with_each_test_thread_at_its_own_lane() {
    // Two test warps in one CTA: P0 and P1 are lanes 0 and 1 of warp 0, P2 is lane 0 of
    // warp 1. The litmus syntax has no collectives, so they are added to the IR.
    let mut p = parse(
        "PTX W\n{ x=0; }\n P0@warp 0,cta 0,gpu 0 | P1@warp 0,cta 0,gpu 0 | \
         P2@warp 1,cta 0,gpu 0 ;\n mov.b32 r0, 5 | mov.b32 r0, 7 | mov.b32 r0, 9 ;\n\
         exists (P0:r0 == 5)\n",
    );
    let warp = |op, dst| scopecheck_ir::Instr {
        kind: InstrKind::Warp {
            op,
            mask: Operand::Imm(3),
            value: Operand::Reg(scopecheck_ir::RegId(0)),
            dst,
            pred_dst: None,
        },
        span: Default::default(),
        text: "collective".into(),
    };
    let shfl = WarpOp::Shfl {
        mode: ShflMode::Idx,
        lane: Operand::Imm(1),
        clamp: Operand::Imm(31),
    };
    for t in 0..2 {
        p.threads[t]
            .code
            .push(warp(shfl, Some(scopecheck_ir::RegId(0))));
    }
    p.threads[2].code.push(warp(
        WarpOp::Vote(VoteOp::Any),
        Some(scopecheck_ir::RegId(0)),
    ));
    let k = generate(&p, &GenOptions::default()).unwrap();
    let l = &k.layout;
    assert_eq!(l.unit, Unit::Lanes { warps: 2 });
    assert_eq!(l.groups[0].subs, vec![0, 1, 32]);
    // Every hardware thread that takes a role sits at the lane its role has in the test,
    // and the two lanes of test warp 0 of an instance share a hardware warp.
    let s = crate::layout::Shuffle::draw(&mut crate::layout::Rng::new(7), l, 4);
    for inst in 0..l.instances(4) {
        let at = l.placement_of(&s, 4, inst, 3);
        let (a, b, c) = (at[0].unwrap(), at[1].unwrap(), at[2].unwrap());
        assert_eq!((a.1 % 32, b.1 % 32, c.1 % 32), (0, 1, 0));
        assert_eq!((a.0, a.1 / 32), (b.0, b.1 / 32));
        assert_ne!(a.1 / 32, c.1 / 32);
    }
    assert!(k
        .ptx
        .contains("shfl.sync.idx.b32 \t%v0_0|%p3, %v0_0, %x14, %xi, %x13;"));
    assert!(k.ptx.contains("vote.sync.any.pred \t%p3, %p2, %x13;"));
    // With a CTA barrier too, the barrier layout would split the lanes: refused by name.
    let bar = parse(
        "PTX B\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n bar.sync 0 | bar.sync 0 ;\n\
         exists (x == 0)\n",
    );
    let mut bar = bar;
    bar.threads[0].code.push(warp(WarpOp::Sync, None));
    assert!(matches!(
        generate(&bar, &GenOptions::default()),
        Err(GenError::Unsupported(m)) if m.contains("warp collective in a test with CTA barriers")
    ));
}

/// One 32-bit location, one thread that loads it and computes on the value.
const ARITH: &str = "PTX arith\n{ x=0; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu.s32 r0, x ;\n \
    add.s32 r1, r0, -2 ;\nexists (P0:r1 == 0)\n";

/// The `Binary` of [`ARITH`], to rewrite.
fn binary(p: &mut Program) -> &mut InstrKind {
    &mut p.threads[0].code[1].kind
}

#[test]
fn locations_and_operations_of_other_widths_are_refused() {
    let mut p = parse(ARITH);
    p.locations[0].ty = IntType::U16;
    let m = refusal(&p);
    assert!(m.contains("location x holds 16-bit values (.u16"), "{m}");
    // An unused location of another width is only placed, never read: no refusal.
    let mut p = parse(ARITH);
    p.locations.push(scopecheck_ir::Location {
        name: "unused".into(),
        space: MemorySpace::Global,
        init: 0,
        ty: IntType::S64,
        span: None,
    });
    assert!(generate(&p, &GenOptions::default()).is_ok());
    // An access whose width is not the runner's (the IR keeps it equal to its location's).
    let mut p = parse(ARITH);
    if let InstrKind::Load { ty, .. } = &mut p.threads[0].code[0].kind {
        *ty = IntType::U64;
    }
    let m = refusal(&p);
    assert!(
        m.contains("is a 64-bit access (.u64) to a location of another width"),
        "{m}"
    );
}

#[test]
fn pointer_accesses_are_refused() {
    let mut p = parse(ARITH);
    if let InstrKind::Load { addr, .. } = &mut p.threads[0].code[0].kind {
        *addr = Address::Ptr {
            reg: scopecheck_ir::RegId(1),
            disp: 0,
        };
    }
    let m = refusal(&p);
    assert!(
        m.contains("P0: `ld.relaxed.gpu.s32 r0, x` accesses memory through a pointer"),
        "{m}"
    );
}

#[test]
fn indices_into_arrays_move_by_elements_and_into_single_locations_by_words() {
    let src = "PTX idx\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu.s32 r0, x ;\n \
        sub.s32 r2, r0, r0 ;\n st.weak.s32 [y+r2], 1 ;\nexists (P0:r0 == 0)\n";
    // On a location of its own, the index is added in words, as before.
    let k = ptx(src);
    assert!(
        k.contains("mul.wide.s32 \t%d3, %v0_1, 4;")
            && k.contains("add.s64 \t%d3, %a1, %d3;")
            && k.contains("st.global.u32 \t[%d3], %x12;"),
        "{k}"
    );
    // Into an array `a` = [x, y]: y is element 1, so the index is offset by 1, clamped to
    // the last element (1), moved back, and scaled by the 128-byte line between elements.
    let mut p = parse(src);
    p.arrays.push(scopecheck_ir::Array {
        name: "a".into(),
        first: LocId(0),
        len: 2,
    });
    let k = generate(&p, &GenOptions::default()).unwrap().ptx;
    assert!(
        k.contains("add.u32 \t%xi, %v0_1, 1;")
            && k.contains("min.u32 \t%xi, %xi, 1;")
            && k.contains("sub.s32 \t%xi, %xi, 1;")
            && k.contains("mul.wide.s32 \t%d3, %xi, 128;")
            && k.contains("add.s64 \t%d3, %a1, %d3;"),
        "{k}"
    );
    // The elements are one line apart in every instance's copy, as the index assumes.
    let l = Layout::new(&p, &GenOptions::default()).unwrap();
    assert_eq!(l.global_offset(5, 1) - l.global_offset(5, 0), 128);
    // A fixed access to an element is not an index: the element is a location like another.
    p.threads[0].code.truncate(2);
    assert!(generate(&p, &GenOptions::default()).is_ok());
}

#[test]
fn branches_that_cannot_tell_signed_from_unsigned_words_are_refused() {
    let src = |imm: &str| {
        format!(
            "PTX cmp\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu.u32 r0, x ;\n \
             beq r0, {imm}, E ;\n mov r1, 1 ;\n E: mov r2, 1 ;\nexists (P0:r1 == 0)\n"
        )
    };
    // An unsigned value may be 4294967295, whose word is -1's.
    let m = refusal(&parse(&src("-1")));
    assert!(
        m.contains("P0: `beq r0, -1, E` compares a value that may be negative"),
        "{m}"
    );
    assert!(generate(&parse(&src("4294967295")), &GenOptions::default()).is_ok());
    assert!(generate(&parse(&src("0")), &GenOptions::default()).is_ok());
}

#[test]
fn signedness_picks_the_ptx_instruction() {
    let cases: [(BinOp, &str, &str); 6] = [
        (
            BinOp::Div,
            "div.s32 \t%v0_1, %v0_0, -2;",
            "div.u32 \t%v0_1, %v0_0, 4294967294;",
        ),
        (
            BinOp::Rem,
            "rem.s32 \t%v0_1, %v0_0, -2;",
            "rem.u32 \t%v0_1, %v0_0, 4294967294;",
        ),
        (
            BinOp::Shr,
            "shr.s32 \t%v0_1, %v0_0, 4294967294;",
            "shr.u32 \t%v0_1, %v0_0, 4294967294;",
        ),
        (
            BinOp::Lt,
            "setp.lt.s32 \t%p2, %v0_0, -2;",
            "setp.lt.u32 \t%p2, %v0_0, 4294967294;",
        ),
        (
            BinOp::Le,
            "setp.le.s32 \t%p2, %v0_0, -2;",
            "setp.le.u32 \t%p2, %v0_0, 4294967294;",
        ),
        (
            BinOp::Add,
            "add.s32 \t%v0_1, %v0_0, -2;",
            "add.u32 \t%v0_1, %v0_0, 4294967294;",
        ),
    ];
    for (op, signed, unsigned) in cases {
        for (ty, want, not) in [
            (IntType::S32, signed, unsigned),
            (IntType::U32, unsigned, signed),
        ] {
            let mut p = parse(ARITH);
            if let InstrKind::Binary { op: o, ty: t, .. } = binary(&mut p) {
                (*o, *t) = (op, ty);
            }
            let k = generate(&p, &GenOptions::default()).expect("generates").ptx;
            assert!(
                k.contains(want) && !k.contains(not),
                "{op:?} {ty:?}: missing {want} in\n{k}"
            );
        }
    }
    // Atomic min and max compare as the location's type.
    let k = ptx(
        "PTX umax\n{ x=0; }\n P0@cta 0,gpu 0 ;\n red.relaxed.gpu.max.u32 x, 5 ;\n \
         atom.relaxed.gpu.min r0, x, 7 ;\nexists (P0:r0 == 0)\n",
    );
    assert!(
        k.contains("red.relaxed.gpu.global.max.u32 \t[%a0], %x12;")
            && k.contains("atom.relaxed.gpu.global.min.u32 \t%v0_0, [%a0], %x12;"),
        "{k}"
    );
}

/// A 64-bit location, a 64-bit CAS and load, and 32-bit arithmetic on a 64-bit value.
const WIDE: &str = "PTX wide-cas\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
    atom.relaxed.gpu.cas.b64 r0, x, 0, 4294967296 | ld.relaxed.gpu.u64 r1, x ;\n \
    | shr.u64 r2, r1, 32 ;\n | and.b32 r3, r2, 1 ;\nexists (P1:r3 == 1)\n";

#[test]
fn sixty_four_bit_values_are_computed_whole() {
    // x is a .u64 location (its accesses say so). P0's CAS writes 2^32 (a value no word
    // holds) into it; P1 loads it whole, shifts it right by 32 in 64 bits and keeps bit 0 in
    // a 32-bit register, the one the test observes: 1 after the CAS, 0 before it. So r0, r1
    // and r2 are 64-bit registers, r3 a 32-bit one, and the `and.b32` reads r2's low word.
    let k = ptx(WIDE);
    for want in [
        ".reg .b64 \t%v0_0;",
        ".reg .b32 \t%v1_2;",
        ".reg .b64 \t%v1_0, %v1_1;",
        "mov.b64 \t%d6, 4294967296;",
        "atom.relaxed.gpu.global.cas.b64 \t%v0_0, [%a0], %d5, %d6;",
        "ld.relaxed.gpu.global.u64 \t%v1_0, [%a0];",
        "shr.u64 \t%v1_1, %v1_0, 32;",
        "cvt.u32.u64 \t%x12, %v1_1;",
        "and.b32 \t%v1_2, %x12, 1;",
        // The instance's copy of x is 8 bytes wide: twice the in-line offset of a word.
        "mov.b64 \t%iline, %d1;",
        "add.s64 \t%a0, %a0, %iline;",
        // The collect kernel resets it whole.
        "st.global.u64 \t[%d5+0], %d6;",
    ] {
        assert!(k.contains(want), "missing {want} in\n{k}");
    }
}

#[test]
fn a_32_bit_result_written_to_a_64_bit_register_is_extended_by_its_type() {
    // r0 is wide (a 64-bit add reads it) and a 32-bit signed load writes it: the IR's value
    // of the load is its word sign-extended (.s32), which `cvt.s64.s32` makes of it.
    let k = ptx(
        "PTX ext\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu.s32 r0, x ;\n \
         add.s64 r1, r0, 1 ;\n st.relaxed.gpu.u64 y, r1 ;\nexists (x == 0)\n",
    );
    for want in [
        "ld.relaxed.gpu.global.u32 \t%xw, [%a0];",
        "cvt.s64.s32 \t%v0_0, %xw;",
        "add.s64 \t%v0_1, %v0_0, %d6;",
        "st.relaxed.gpu.global.u64 \t[%a1], %v0_1;",
    ] {
        assert!(k.contains(want), "missing {want} in\n{k}");
    }
}

#[test]
fn a_64_bit_observable_is_read_back_as_two_words_and_tabled_by_both() {
    // P1:r0 is a whole 64-bit load of x and x itself is observed: each is two words, low
    // word first, in the record and the anomaly records, and the value table's high words
    // (after its rows: 2 observables x 17 words x 4 bytes = 136) are compared too, so values
    // that share a low word (0 and 2^32) are told apart.
    let k = ptx("PTX obs64\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
         st.relaxed.gpu.u64 x, 4294967296 | ld.relaxed.gpu.u64 r0, x ;\n\
         exists (P1:r0 == 0 /\\ x == 4294967296)\n");
    for want in [
        "mov.b64 \t{%x12, %x13}, %v1_0;",
        "st.global.u32 \t[%recp+0], %x12;",
        "st.global.u32 \t[%recp+4], %x13;",
        ".reg .b32 \t%h0, %h1;",
        "ld.global.u32 \t%o0, [%recp+0];",
        "ld.global.u32 \t%h0, [%recp+4];",
        "add.s64 \t%d5, %ibase, %iline;",
        "ld.global.u32 \t%o1, [%d5+0];",
        "ld.global.u32 \t%h1, [%d5+4];",
        "ld.global.u32 \t%x1, [%d0+136];",
        "setp.eq.and.u32 \t%p0, %x1, %h0, %p0;",
        "ld.global.u32 \t%x1, [%d0+200];",
        "st.global.u32 \t[%d0+16], %h0;",
        "st.global.u32 \t[%d0+24], %h1;",
    ] {
        assert!(k.contains(want), "missing {want} in\n{k}");
    }
}
