use super::*;
use scopecheck_ir::*;

fn program(placements: &[(u32, u32)], barrier: bool) -> Program {
    let threads = placements
        .iter()
        .enumerate()
        .map(|(i, &(cluster, cta))| Thread {
            name: format!("P{i}"),
            placement: Placement::Device(DevicePlacement {
                gpu: 0,
                cluster,
                cta,
                warp: None,
            }),
            span: None,
            after: vec![],
            registers: vec!["r0".into()],
            init_regs: vec![],
            code: if barrier {
                vec![Instr {
                    kind: InstrKind::Barrier {
                        id: scopecheck_ir::Operand::Imm(0),
                        kind: BarrierKind::Sync,
                        count: None,
                        spaces: scopecheck_ir::FenceSpaces::ALL,
                    },
                    span: Span::default(),
                    text: "bar.sync 0".into(),
                }]
            } else {
                vec![]
            },
        })
        .collect();
    Program {
        arch: Arch::Ptx,
        name: "t".into(),
        description: None,
        locations: vec![Location {
            name: "x".into(),
            space: MemorySpace::Global,
            init: 0,
            ty: IntType::S32,
            span: None,
        }],
        arrays: vec![],
        threads,
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::True,
            span: None,
        },
        extra_observables: vec![],
    }
}

/// Every (instance, role) is taken by exactly one hardware thread; an instance's roles of one
/// CTA share a block and its roles of different CTAs do not.
fn check_bijection(p: &Program, opts: &GenOptions, nblocks: u32, seed: u64) {
    let l = Layout::new(p, opts).unwrap();
    let nblocks = nblocks / l.blocks_per_set() * l.blocks_per_set();
    let mut rng = Rng::new(seed);
    let s = Shuffle::draw(&mut rng, &l, nblocks);
    let n = l.instances(nblocks) as usize;
    let mut seen: Vec<Vec<Option<u32>>> = vec![vec![None; p.threads.len()]; n];
    for b in 0..nblocks {
        for t in 0..l.block_threads {
            if let Assignment::Role { instance, role } = l.assign(&s, nblocks, b, t) {
                let cell = &mut seen[instance as usize][role.0 as usize];
                assert!(
                    cell.is_none(),
                    "instance {instance} role {role:?} taken twice"
                );
                *cell = Some(b);
            }
        }
    }
    let cluster = |t: usize| match p.threads[t].placement {
        Placement::Device(d) => d.cluster,
        Placement::Host => u32::MAX,
    };
    for (i, roles) in seen.iter().enumerate() {
        for (a, ba) in roles.iter().enumerate() {
            let ba = ba.unwrap_or_else(|| panic!("instance {i} role {a} not taken"));
            for (c, bc) in roles.iter().enumerate() {
                let same = p.threads[a].placement.same_cta(&p.threads[c].placement);
                assert_eq!(same, ba == bc.unwrap(), "instance {i} roles {a} {c}");
                // Roles of one test cluster share a hardware cluster; of two, they do not.
                let same_cluster = ba / l.cluster_ctas == bc.unwrap() / l.cluster_ctas;
                assert_eq!(
                    cluster(a) == cluster(c),
                    same_cluster,
                    "instance {i} roles {a} {c}: clusters"
                );
            }
        }
    }
}

#[test]
fn cluster_layout_is_a_bijection_that_keeps_each_cluster_together() {
    // Cluster 0 holds CTAs 0 and 1, cluster 1 only CTA 2: clusters of 2, one spare rank.
    let p = program(&[(0, 0), (0, 1), (1, 2)], false);
    let l = Layout::new(&p, &GenOptions::default()).unwrap();
    assert_eq!(l.cluster_ctas, 2);
    assert_eq!(l.clusters, vec![vec![0, 1], vec![2]]);
    assert_eq!(l.blocks_per_set(), 4);
    for seed in 0..20 {
        check_bijection(&p, &GenOptions::default(), 24, seed);
    }
    let p = program(&[(0, 0), (0, 1), (0, 1)], true);
    for seed in 0..20 {
        check_bijection(&p, &GenOptions::default(), 12, seed);
    }
}

#[test]
fn thread_layout_is_a_bijection_for_every_shuffle() {
    let p = program(&[(0, 0), (1, 1)], false);
    for seed in 0..20 {
        check_bijection(&p, &GenOptions::default(), 12, seed);
    }
    let p = program(&[(0, 0), (0, 0), (1, 1)], false);
    for seed in 0..20 {
        check_bijection(&p, &GenOptions::default(), 9, seed);
    }
}

#[test]
fn warp_layout_is_a_bijection_for_every_shuffle() {
    let p = program(&[(0, 0), (0, 0), (1, 1)], true);
    for seed in 0..20 {
        check_bijection(&p, &GenOptions::default(), 10, seed);
    }
}

#[test]
fn instances_own_lines_and_share_them_with_other_instances() {
    let p = program(&[(0, 0), (1, 1)], false);
    let mut p2 = p.clone();
    p2.locations.push(Location {
        name: "y".into(),
        space: MemorySpace::Global,
        init: 0,
        ty: IntType::S32,
        span: None,
    });
    let l = Layout::new(&p2, &GenOptions::default()).unwrap();
    // x and y of one instance are on different lines.
    assert_ne!(l.global_offset(5, 0) / 128, l.global_offset(5, 1) / 128);
    // x of instances 0..per_line share a line, at distinct words.
    let per = l.per_line;
    let lines: Vec<u64> = (0..per).map(|i| l.global_offset(i, 0) / 128).collect();
    assert!(lines.iter().all(|&x| x == lines[0]));
    assert!(l.global_offset(per - 1, 0) < l.global_bytes(2));
}

/// Host roles take no hardware thread: every device role of every instance is still taken
/// exactly once, and a test of host threads only keeps a kernel of stress units.
#[test]
fn host_roles_leave_the_device_layout_a_bijection() {
    let mut p = program(&[(0, 0), (1, 1), (2, 2)], false);
    p.threads[2].placement = Placement::Host;
    p.locations[0].space = MemorySpace::HostMapped;
    let l = Layout::new(&p, &GenOptions::default()).unwrap();
    assert_eq!(l.host_roles, vec![ThreadId(2)]);
    assert_eq!(l.blocks_per_set(), 2);
    assert!(l.uses_host());
    let mut rng = Rng::new(7);
    let s = Shuffle::draw(&mut rng, &l, 8);
    let n = l.instances(8) as usize;
    let mut taken = vec![[0u32; 2]; n];
    for b in 0..8 {
        for t in 0..l.block_threads {
            if let Assignment::Role { instance, role } = l.assign(&s, 8, b, t) {
                assert_ne!(role, ThreadId(2), "a host role on the GPU");
                taken[instance as usize][role.0 as usize] += 1;
            }
        }
    }
    assert!(taken.iter().all(|c| *c == [1, 1]));
    // Host and device buffers are laid out alike and independently.
    assert_eq!(l.offset(Buffer::Host, 3, 0), l.global_offset(3, 0));
    assert!(l.bytes(Buffer::Host, 8) >= l.offset(Buffer::Host, n as u32 - 1, 0) + 4);
    // Host threads only.
    let mut h = program(&[(0, 0), (1, 1)], false);
    for t in &mut h.threads {
        t.placement = Placement::Host;
    }
    let l = Layout::new(&h, &GenOptions::default()).unwrap();
    assert_eq!(l.host_roles.len(), 2);
    assert!(l.groups[0].roles.is_empty());
    assert!(l.instances(4) > 0);
    for t in 0..l.block_threads {
        assert_eq!(l.assign(&s, 4, 0, t), Assignment::Stress);
    }
}

#[test]
fn refuses_what_it_cannot_place() {
    // A host thread that touches shared memory cannot run on the CPU.
    let mut p = program(&[(0, 0), (1, 1)], false);
    p.threads[1].placement = Placement::Host;
    p.threads[1].code.push(Instr {
        kind: InstrKind::Store {
            addr: Address::loc(LocId(0)),
            value: Operand::Imm(1),
            ty: IntType::S32,
            order: Order::Relaxed,
            scope: Scope::Sys,
        },
        span: Span::default(),
        text: "x = 1".into(),
    });
    p.locations[0].space = MemorySpace::Shared;
    assert!(matches!(
        Layout::new(&p, &GenOptions::default()),
        Err(GenError::Unsupported(m)) if m.contains("host thread")
    ));
    // Device memory a host thread touches (a harness's cudaMemcpy) goes to managed memory.
    p.locations[0].space = MemorySpace::Global;
    let l = Layout::new(&p, &GenOptions::default()).unwrap();
    assert_eq!(l.place(LocId(0)), Some((Buffer::Managed, 0)));
    // In host memory it stays there.
    p.locations[0].space = MemorySpace::HostMapped;
    let l = Layout::new(&p, &GenOptions::default()).unwrap();
    assert_eq!(l.host_roles, vec![ThreadId(1)]);
    assert_eq!(l.host, vec![LocId(0)]);
    assert_eq!(l.place(LocId(0)), Some((Buffer::Host, 0)));
    // Pageable host memory goes to pinned memory while only host threads touch it; a
    // device thread touching it is refused.
    p.locations[0].space = MemorySpace::HostPageable;
    let device_touches = p.threads[0]
        .code
        .iter()
        .any(|i| i.kind.named_loc() == Some(LocId(0)));
    assert_eq!(
        Layout::new(&p, &GenOptions::default()).is_err(),
        device_touches
    );
    p.threads[0]
        .code
        .retain(|i| i.kind.named_loc() != Some(LocId(0)));
    let l = Layout::new(&p, &GenOptions::default()).unwrap();
    assert_eq!(l.place(LocId(0)), Some((Buffer::Host, 0)));
    // Nine CTAs in one cluster exceed the portable cluster size.
    let nine: Vec<(u32, u32)> = (0..9).map(|c| (0, c)).collect();
    assert!(matches!(
        Layout::new(&program(&nine, false), &GenOptions::default()),
        Err(GenError::Unsupported(m)) if m.contains("cluster of 9 CTAs")
    ));
    let bad = GenOptions {
        block_threads: 100,
        ..GenOptions::default()
    };
    assert!(matches!(
        Layout::new(&program(&[(0, 0)], false), &bad),
        Err(GenError::Options(_))
    ));
}

#[test]
fn a_test_on_two_gpus_is_refused_with_why_one_gpu_cannot_stand_in() {
    let mut p = program(&[(0, 0), (0, 1)], false);
    if let Placement::Device(d) = &mut p.threads[1].placement {
        d.gpu = 1;
    }
    // One GPU would make .gpu accesses between the two threads morally strong, which is what
    // such a test is about: the reason must say so, not only that one GPU is used.
    match Layout::new(&p, &GenOptions::default()) {
        Err(GenError::Unsupported(m)) => assert!(
            m.contains("P1 is on GPU 1") && m.contains("morally strong") && m.contains("two GPUs"),
            "{m}"
        ),
        other => panic!("not refused: {:?}", other.map(|l| l.block_threads)),
    }
}

/// Device code computes in integer instructions: a float atomic add, float arithmetic and a
/// trap are refused (generated, they would compute on the bits and misreport); moving a
/// float's bits (a store, an exchange) is not.
#[test]
fn refuses_float_computation_in_device_code() {
    let instr = |kind| Instr {
        kind,
        span: Span::default(),
        text: "f".into(),
    };
    let with = |kind| {
        let mut p = program(&[(0, 0)], false);
        p.locations[0].ty = IntType::F32;
        p.threads[0].code.push(instr(kind));
        Layout::new(&p, &GenOptions::default())
    };
    let rmw = |op| InstrKind::Rmw {
        dst: None,
        addr: Address::loc(LocId(0)),
        kind: RmwKind::Op(op, Operand::Imm(0x3f00_0000)),
        ty: IntType::F32,
        order: Order::Relaxed,
        scope: Scope::Gpu,
    };
    let refused = |r: Result<Layout, GenError>, what: &str| matches!(r, Err(GenError::Unsupported(m)) if m.contains(what));
    assert!(refused(with(rmw(RmwOp::Add)), "floating-point atomic"));
    assert!(with(rmw(RmwOp::Exch)).is_ok());
    let add = InstrKind::Binary {
        dst: RegId(0),
        op: BinOp::Add,
        ty: IntType::F32,
        a: Operand::Reg(RegId(0)),
        b: Operand::Imm(0x3f00_0000),
    };
    assert!(refused(with(add), "floating-point values"));
    let trap = InstrKind::Binary {
        dst: RegId(0),
        op: BinOp::Trap,
        ty: IntType::S32,
        a: Operand::Imm(0),
        b: Operand::Imm(0),
    };
    assert!(refused(with(trap), "traps"));
}

#[test]
fn a_64_bit_location_takes_two_lines_and_its_copies_are_8_bytes_apart() {
    // x is a .u64 location, y a .s32 one, both in device memory. With 32 instances to a line,
    // x's copies fill two lines (32 x 8 bytes): instance 3's is 24 bytes into the first;
    // y comes after x's two lines, instance 3's copy 12 bytes into its line, as a word's is.
    let src = "PTX w\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.relaxed.gpu.u64 r0, x ;\n \
        st.relaxed.gpu.s32 y, 1 ;\nexists (y == 1)\n";
    let p = scopecheck_litmus::parse(src).unwrap();
    let l = Layout::new(&p, &GenOptions::default()).unwrap();
    let (x, y) = (LocId(0), LocId(1));
    assert_eq!(l.global, vec![x, x, y]);
    assert!(l.has_wide_locs());
    assert_eq!(l.loc_offset(x, 3), Some((Buffer::Device, 24, true)));
    assert_eq!(
        l.loc_offset(y, 3),
        Some((Buffer::Device, 2 * 128 + 12, false))
    );
    // Instance 32 starts the next block of lines: three of them per 32 instances.
    assert_eq!(l.loc_offset(x, 32), Some((Buffer::Device, 3 * 128, true)));
    assert_eq!(l.global_bytes(1) % (3 * 128), 0);
}
