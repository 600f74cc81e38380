use super::*;

fn layout_of(src: &str) -> Result<Layout, GenError> {
    let p = scopecheck_litmus::parse(src).expect("test parses");
    Layout::new(&p, &GenOptions::default())
}

/// A tree barrier's shape: the two threads of a CTA take different branches on what they
/// read, and both ways meet barrier 0 once, so every path arrives exactly once.
#[test]
fn branches_that_meet_the_same_barriers_on_every_path_run() {
    let l = layout_of(
        "PTX tree\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
         ld.relaxed.gpu r0, x | ld.relaxed.gpu r0, y ;\n \
         beq r0, 0, ZERO | beq r0, 0, ZERO ;\n \
         st.relaxed.gpu y, 1 | st.relaxed.gpu x, 1 ;\n \
         bra JOIN | bra JOIN ;\n \
         ZERO: st.relaxed.gpu y, 2 | ZERO: st.relaxed.gpu x, 2 ;\n \
         JOIN: bar.sync 0 | JOIN: bar.sync 0 ;\n \
         ld.relaxed.gpu r1, y | ld.relaxed.gpu r1, x ;\n\
         exists (P0:r1 == 0)\n",
    );
    assert!(l.is_ok(), "{:?}", l.err());
}

/// A barrier on one side of a branch: the thread that goes the other way never arrives, and its
/// partner waits until the watchdog cuts the launch (the model says it can hang). It runs in
/// the uniform warp layout: each role warp plays one instance (lane 0), and its other lanes
/// take lane 0's branches, so the warp arrives whole or not at all.
#[test]
fn a_barrier_on_one_side_of_a_branch_runs_in_the_uniform_layout() {
    let src = "PTX skip\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
         bar.sync 0 | ld.relaxed.gpu r0, x ;\n \
         | bne r0, 0, SKIP ;\n | bar.sync 0 ;\n | SKIP: ;\n\
         exists (P1:r0 == 1)\n";
    let l = layout_of(src).unwrap();
    assert_eq!(
        l.unit,
        Unit::Warp {
            lane_instances: false,
            uniform: true
        }
    );
    assert!(l.counts(0) && !l.counts(1));
    let p = scopecheck_litmus::parse(src).unwrap();
    let k = crate::generate(&p, &GenOptions::default()).unwrap().ptx;
    // P1's branch: the predicate of lane 0 for every lane.
    for want in [
        "setp.ne.s32 \t%p0, %v1_0, 0;",
        "selp.u32 \t%x14, 1, 0, %p0;",
        "shfl.sync.idx.b32 \t%x14, %x14, 0, 31, 0xffffffff;",
        "setp.ne.u32 \t%p0, %x14, 0;",
        "@%p0 bra \tR1_END;",
    ] {
        assert!(k.contains(want), "missing {want} in\n{k}");
    }
    // Without such a thread, the warp layout keeps 32 instances to a warp and its branches.
    let l = layout_of(
        "PTX both\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
         bar.sync 0 | bar.sync 0 ;\n st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;\n\
         exists (P1:r0 == 1)\n",
    )
    .unwrap();
    assert_eq!(
        l.unit,
        Unit::Warp {
            lane_instances: true,
            uniform: false
        }
    );
}

/// A barrier in a loop body arrives once per iteration, how often depending on the values: the
/// uniform warp layout too.
#[test]
fn a_barrier_inside_a_loop_runs_in_the_uniform_layout() {
    let l = layout_of(
        "PTX loop\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
         L: bar.sync 0 | bar.sync 0 ;\n ld.relaxed.gpu r0, x | st.relaxed.gpu x, 1 ;\n \
         beq r0, 0, L | ;\nexists (P0:r0 == 1)\n",
    )
    .unwrap();
    assert!(matches!(l.unit, Unit::Warp { uniform: true, .. }));
}

/// A spin before a barrier (the grid barrier's shape: thread 0 awaits the other blocks,
/// then the CTA syncs): cut at the loop cap, the role leaves the loop and still arrives.
#[test]
fn a_loop_before_a_barrier_runs_and_a_cut_role_falls_through_to_it() {
    let src = "PTX spin-before\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 1,gpu 0 ;\n \
         L: ld.relaxed.gpu r0, x | bar.sync 0 | st.relaxed.gpu x, 1 ;\n \
         beq r0, 0, L | | ;\n bar.sync 0 | | ;\nexists (P0:r0 == 1)\n";
    assert!(layout_of(src).is_ok());
    let p = scopecheck_litmus::parse(src).unwrap();
    let ptx = crate::codegen::generate(&p, &GenOptions::default())
        .unwrap()
        .ptx;
    let role = &ptx[ptx.find("ROLE_0:").unwrap()..ptx.find("ROLE_1:").unwrap()];
    assert!(role.contains("@%p1 mov.u32 \t%status, 2;"), "{role}");
    assert!(!role.contains("@%p1 bra \tR0_CUT;"), "{role}");
}

#[test]
fn a_spin_after_the_last_barrier_runs() {
    let after = layout_of(
        "PTX spin-after\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 1,gpu 0 ;\n \
         bar.sync 0 | bar.sync 0 | st.relaxed.gpu x, 1 ;\n \
         L: ld.relaxed.gpu r0, x | | ;\n beq r0, 0, L | | ;\nexists (P0:r0 == 1)\n",
    );
    assert!(after.is_ok(), "{:?}", after.err());
}

#[test]
fn barrier_operands_set_once_by_a_mov_are_immediates() {
    // Both threads put 1 and 2 in r1 and r2 and meet at `bar.cta.sync r1, r2`: barrier 1,
    // two threads, so two warps of 32 lanes in the warp layout.
    let src = include_str!("../../../../tests/litmus/ptx/Bar+count+registers.litmus");
    let p = scopecheck_litmus::parse(src).expect("test parses");
    assert!(matches!(
        Layout::new(&p, &GenOptions::default()),
        Err(GenError::Unsupported(m)) if m.contains("as immediates")
    ));
    let k = crate::generate(&p, &GenOptions::default()).unwrap();
    assert!(k.ptx.contains("barrier.sync \t1, 64;"), "{}", k.ptx);
    // A second write, or a branch before the barrier, leaves the register's value open.
    let mut twice = p.clone();
    let mov = twice.threads[0].code[0].clone();
    twice.threads[0].code.insert(2, mov);
    let folded = fold_barrier_operands(&twice);
    assert!(barrier_immediates(&folded.threads[0].code[4].kind).is_none());
    assert!(barrier_immediates(&folded.threads[1].code[2].kind).is_some());
}

/// Rounds smaller than the users: four threads each arriving once at `bar.sync 1, 2` fill two
/// rounds of two (PTX ISA, barrier{.cta}: the barrier resets after each round), so it always
/// completes and runs; three would leave the last one waiting, and a count above the users
/// (`bar.sync 1, 4` among two) can never fill a round: both are refused.
#[test]
fn arrivals_that_fill_whole_rounds_run_and_others_are_refused() {
    let four = "PTX rounds\n{ x=0; }\n \
        P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 0,gpu 0 | P3@cta 0,gpu 0 ;\n \
        st.weak x, 1 | bar.sync 1, 2 | bar.sync 1, 2 | bar.sync 1, 2 ;\n \
        bar.sync 1, 2 | ld.weak r0, x | ld.weak r0, x | ld.weak r0, x ;\n\
        exists (P1:r0 == 0)\n";
    let l = layout_of(four);
    assert!(l.is_ok(), "{:?}", l.err());
    let three = "PTX rounds3\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 0,gpu 0 ;\n \
        st.weak x, 1 | bar.sync 1, 2 | bar.sync 1, 2 ;\n \
        bar.sync 1, 2 | ld.weak r0, x | ld.weak r0, x ;\nexists (P1:r0 == 0)\n";
    let over = "PTX over\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n \
        bar.sync 1, 4 | bar.sync 1, 4 ;\n st.weak x, 1 | ;\nexists (x == 1)\n";
    for src in [three, over] {
        assert!(matches!(
            layout_of(src),
            Err(GenError::Unsupported(m)) if m.contains("fill whole rounds")
        ));
    }
}
