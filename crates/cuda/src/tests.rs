//! Unit tests of the lowering: the IR of small kernels, the harness's threads, and errors.

use crate::{parse_cuda, parse_cuda_with, CudaOptions, DEFAULT_MAX_THREADS};
use scopecheck_ir::{
    Address, BinOp, BranchCond, FenceOrder, FenceSpaces, InstrKind, IntType, LocId, MemorySpace,
    Operand, Order, Placement, Program, Quantifier, RegId, RmwKind, RmwOp, Scope, ThreadId,
};

fn lower(src: &str) -> Program {
    match parse_cuda(src) {
        Ok((p, _)) => p,
        Err(e) => panic!("{e}"),
    }
}

fn error(src: &str) -> scopecheck_ir::Diagnostic {
    match parse_cuda(src) {
        Ok(_) => panic!("lowered, expected an error"),
        Err(e) => e,
    }
}

fn kinds(p: &Program, t: usize) -> Vec<InstrKind> {
    p.threads[t].code.iter().map(|i| i.kind.clone()).collect()
}

fn at(p: &Program, name: &str) -> Address {
    Address::loc(p.loc(name).unwrap_or_else(|| panic!("no location {name}")))
}

const SEED: &str = include_str!("../../../examples/cuda/seed1.cu");

#[test]
fn seed_kernels_lower_as_the_c_dialect_does() {
    let p = lower(SEED);
    let names: Vec<&str> = p.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["consume.b0.t0", "produce.b0.t0", "host"]);
    assert_eq!(
        p.location(p.loc("flag").unwrap()).space,
        MemorySpace::Global
    );
    assert_eq!(
        p.location(p.loc("out").unwrap()).space,
        MemorySpace::Managed
    );
    // produce: payload = 42.0f (the float argument folded, as its bits 0x42280000); fence.sc.gpu;
    // atomicExch relaxed gpu.
    let produce = kinds(&p, 1);
    assert_eq!(
        produce[0],
        InstrKind::Store {
            addr: at(&p, "payload"),
            value: Operand::Imm(0x4228_0000),
            ty: IntType::F32,
            order: Order::Weak,
            scope: Scope::Sys
        }
    );
    assert_eq!(
        produce[1],
        InstrKind::Fence {
            order: FenceOrder::Sc,
            scope: Scope::Gpu,
            spaces: FenceSpaces::ALL
        }
    );
    assert!(matches!(
        produce[2],
        InstrKind::Rmw {
            kind: RmwKind::Op(RmwOp::Exch, Operand::Imm(1)),
            order: Order::Relaxed,
            scope: Scope::Gpu,
            ..
        }
    ));
    // consume: the await loop is one block ending in one backward branch to 0.
    let consume = kinds(&p, 0);
    assert!(matches!(
        consume[0],
        InstrKind::Rmw {
            kind: RmwKind::Op(RmwOp::Add, Operand::Imm(0)),
            ..
        }
    ));
    assert!(matches!(
        consume[1],
        InstrKind::Branch {
            cond: BranchCond::Eq(Operand::Reg(_), Operand::Imm(0)),
            target: 0
        }
    ));
    // Different streams: the kernels run at once; the host after both.
    assert!(p.threads[0].after.is_empty() && p.threads[1].after.is_empty());
    assert_eq!(p.threads[2].placement, Placement::Host);
    assert_eq!(p.threads[2].after, [ThreadId(0), ThreadId(1)]);
    // The assertion: forall host:assert0 != 0, the register starting at 1.
    assert_eq!(p.condition.quantifier, Quantifier::Forall);
    assert_eq!(p.threads[2].init_regs, [(RegId(0), 1)]);
    assert_eq!(p.threads[2].registers[0], "assert0");
}

#[test]
fn launches_fold_indices_and_get_their_own_ctas() {
    let p = lower(
        "__device__ int a[4];
         __global__ void k() { a[blockIdx.x * blockDim.x + threadIdx.x] = gridDim.x; }
         void scopecheck_main() { k<<<2, 2>>>(); k<<<dim3(1), dim3(1, 1)>>>(); }",
    );
    assert_eq!(p.threads.len(), 5);
    for (t, (cta, loc)) in [
        (0, "a[0]"),
        (0, "a[1]"),
        (1, "a[2]"),
        (1, "a[3]"),
        (2, "a[0]"),
    ]
    .into_iter()
    .enumerate()
    {
        let Placement::Device(d) = p.threads[t].placement else {
            panic!("host thread")
        };
        assert_eq!(d.cta, cta, "thread {t}");
        let grid = if t < 4 { 2 } else { 1 };
        assert_eq!(
            kinds(&p, t)[0],
            InstrKind::Store {
                addr: at(&p, loc),
                value: Operand::Imm(grid),
                ty: IntType::S32,
                order: Order::Weak,
                scope: Scope::Sys
            }
        );
    }
    // Both on the default stream: the second launch starts after the first.
    assert_eq!(p.threads[4].name, "k#2.b0.t0");
    assert_eq!(p.threads[4].after, (0..4).map(ThreadId).collect::<Vec<_>>());
}

#[test]
fn shared_memory_has_one_copy_per_block_and_atomics_narrow_to_the_block() {
    let (p, warnings) = parse_cuda(
        "__global__ void k() { __shared__ int s; atomicAdd_system(&s, 1); __syncthreads(); }
         void scopecheck_main() { k<<<2, 1>>>(); }",
    )
    .unwrap();
    let s0 = p.loc("s@b0").unwrap();
    let s1 = p.loc("s@b1").unwrap();
    assert_eq!(p.location(s0).space, MemorySpace::Shared);
    for (t, loc) in [(0, s0), (1, s1)] {
        assert!(matches!(
            kinds(&p, t)[0],
            InstrKind::Rmw { addr: Address::Loc { loc: l, index: None }, scope: Scope::Cta, .. } if l == loc
        ));
        assert!(matches!(kinds(&p, t)[1], InstrKind::Barrier { .. }));
    }
    // One statement narrowed in both blocks' threads: said once (issue 33, deliverable 7).
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn helpers_inline_and_libcu_members_lower_with_their_scope() {
    let p = lower(
        "__device__ int f(cuda::atomic<int, cuda::thread_scope_device> *x, int v) {
             return x->fetch_add(v, cuda::memory_order_acq_rel) + 1;
         }
         __global__ void k(cuda::atomic<int, cuda::thread_scope_device> *x) {
             int r = f(x, 2);
             if (r > 1) { x->store(r, cuda::memory_order_release); }
         }
         void scopecheck_main() {
             cuda::atomic<int, cuda::thread_scope_device> *x;
             cudaMalloc(&x, sizeof(int));
             k<<<1, 1>>>(x);
         }",
    );
    let code = kinds(&p, 0);
    assert!(matches!(
        code[0],
        InstrKind::Rmw {
            kind: RmwKind::Op(RmwOp::Add, Operand::Imm(2)),
            order: Order::AcqRel,
            scope: Scope::Gpu,
            ..
        }
    ));
    assert!(code.iter().any(|k| matches!(
        k,
        InstrKind::Store {
            order: Order::Release,
            scope: Scope::Gpu,
            ..
        }
    )));
}

#[test]
fn volatile_pointers_and_compound_assignments() {
    let p = lower(
        "__global__ void k(volatile int *f, int *d) { *d += 2; while (*f == 0) { } }
         void scopecheck_main() { int *f, *d; cudaMallocManaged(&f, 4); cudaMallocManaged(&d, 4); k<<<1, 1>>>(f, d); }",
    );
    let code = kinds(&p, 0);
    assert!(matches!(
        code[0],
        InstrKind::Load {
            order: Order::Weak,
            ..
        }
    ));
    assert!(matches!(code[1], InstrKind::Binary { .. }));
    assert!(matches!(
        code[2],
        InstrKind::Store {
            order: Order::Weak,
            ..
        }
    ));
    assert!(matches!(
        code[3],
        InstrKind::Load {
            order: Order::Volatile,
            scope: Scope::Sys,
            ..
        }
    ));
    assert!(matches!(code[4], InstrKind::Branch { target: 3, .. }));
}

#[test]
fn host_code_between_launch_and_sync_is_a_concurrent_host_thread() {
    let p = lower(
        "__global__ void k(int *x) { *x = 1; }
         void scopecheck_main() {
             int *x; cudaMallocManaged(&x, sizeof(int));
             cudaStream_t s; cudaStreamCreate(&s);
             k<<<1, 1, 0, s>>>(x);
             int a = *x;
             cudaStreamSynchronize(s);
             assert(*x == 1);
         }",
    );
    let names: Vec<&str> = p.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["k.b0.t0", "host", "host#2"]);
    assert!(p.threads[1].after.is_empty());
    assert_eq!(p.threads[2].after, [ThreadId(0), ThreadId(1)]);
    let _ = LocId(0);
}

#[test]
fn float_constants_are_their_ieee_bits_without_warnings() {
    // 2.0f is 0x40000000, 0.5f 0x3f000000; an integer initialiser of a double is converted
    // (3 is 0x4008000000000000), and a float constant initialising an int truncates (7).
    let (p, w) = parse_cuda(
        "__device__ float x = 2.0f;
         __device__ double y = 3;
         __device__ int z = 7.9f;
         __global__ void k() { x = 0.5f; }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    )
    .unwrap();
    let loc = |n: &str| p.location(p.loc(n).unwrap());
    assert_eq!((loc("x").init, loc("x").ty), (0x4000_0000, IntType::F32));
    assert_eq!(
        (loc("y").init, loc("y").ty),
        (0x4008_0000_0000_0000, IntType::F64)
    );
    assert_eq!(loc("z").init, 7);
    assert!(w.is_empty(), "{w:?}");
    assert!(matches!(
        kinds(&p, 0)[0],
        InstrKind::Store {
            value: Operand::Imm(0x3f00_0000),
            ty: IntType::F32,
            ..
        }
    ));
}

#[test]
fn a_float_store_of_an_int_is_converted_and_long_double_is_refused() {
    // `*f = n` with an int register converts it (a Cvt to F32), never stores its bits.
    let p = lower(
        "__global__ void k(float *f, int *i) { int n = *i; *f = n; }
         void scopecheck_main() { float *f; int *i; cudaMalloc(&f, 4); cudaMalloc(&i, 4); k<<<1, 1>>>(f, i); }",
    );
    assert!(
        kinds(&p, 0).iter().any(|k| matches!(
            k,
            InstrKind::Binary {
                op: BinOp::Cvt {
                    from: IntType::S32,
                    ..
                },
                ty: IntType::F32,
                ..
            }
        )),
        "{:?}",
        kinds(&p, 0)
    );
    let e = error(
        "__device__ long double x;
void scopecheck_main() {}",
    );
    assert!(e.message.contains("long double"), "{}", e.message);
}

#[test]
fn syntax_errors_point_at_the_error_node() {
    let e = error("__global__ void k() { int x = ; }\nvoid scopecheck_main() {}");
    assert_eq!(e.line(), 1);
    assert!(e.message.starts_with("syntax error"), "{}", e.message);
}

#[test]
fn unsupported_constructs_are_named_with_their_line() {
    let e = error(
        "__global__ void k(int *x) {\n  switch (*x) { default: break; }\n}\nvoid scopecheck_main() { int *x; cudaMalloc(&x, 4); k<<<1, 1>>>(x); }",
    );
    assert_eq!(e.line(), 2);
    assert!(e.message.contains("not supported"), "{}", e.message);
    let e = error("__global__ void k(int *x) { *x = 1; }");
    assert!(e.message.contains("scopecheck_main"), "{}", e.message);
    // (An index computed at run time is now an indexed address; a kernel argument the host
    // computes at run time is still refused.)
    let e = error(
        "__global__ void k(int n) { }
         void scopecheck_main() { int *x; cudaMallocManaged(&x, 4); k<<<1, 1>>>(*x); }",
    );
    assert!(e.message.contains("run time"), "{}", e.message);
    let e = error(
        "__global__ void k() { }
         void scopecheck_main() { int *x; cudaMalloc(&x, 4); assert(*x == 0); }",
    );
    assert!(e.message.contains("device memory"), "{}", e.message);
}

#[test]
fn the_thread_limit_says_how_to_raise_it() {
    // 33 blocks of 32: one warp more than the default limit of one largest block (1,024).
    let src = "__global__ void k() { }\nvoid scopecheck_main() { k<<<33, 32>>>(); }";
    let e = error(src);
    assert_eq!(e.line(), 2);
    assert!(
        e.message.contains(&DEFAULT_MAX_THREADS.to_string()),
        "{}",
        e.message
    );
    assert!(e.message.contains("--max-threads"), "{}", e.message);
    let small = "__global__ void k() { }\nvoid scopecheck_main() { k<<<3, 3>>>(); }";
    let opts = CudaOptions {
        max_threads: 8,
        ..CudaOptions::default()
    };
    assert!(parse_cuda_with(small, &opts).is_err());
    assert_eq!(parse_cuda(small).unwrap().0.threads.len(), 9);
}

#[test]
fn locals_with_constant_initialisers_fold_and_dead_branches_are_skipped() {
    // `me` is never assigned again: a constant, so it indexes; `i` is incremented: a register.
    // `if (me == 0)` is known per thread: thread 1 lowers only the else branch, whose index
    // `me - 1` is in range there (and out of range in thread 0).
    let p = lower(
        "__device__ int a[2];
         __global__ void k() {
             int me = blockIdx.x * blockDim.x + threadIdx.x;
             int i = 0;
             i++;
             if (me == 0) { a[me] = 1; } else { a[me - 1] = i; }
         }
         void scopecheck_main() { k<<<1, 2>>>(); }",
    );
    let stores = |t: usize| -> Vec<(Address, Operand)> {
        kinds(&p, t)
            .into_iter()
            .filter_map(|k| match k {
                InstrKind::Store { addr, value, .. } => Some((addr, value)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(stores(0), vec![(at(&p, "a[0]"), Operand::Imm(1))]);
    let s1 = stores(1);
    assert_eq!(s1.len(), 1);
    assert_eq!(s1[0].0, at(&p, "a[0]"));
    assert!(matches!(s1[0].1, Operand::Reg(_)), "{s1:?}");
    for t in 0..2 {
        assert!(
            !kinds(&p, t)
                .iter()
                .any(|k| matches!(k, InstrKind::Branch { .. })),
            "thread {t}: the known condition leaves no branch"
        );
        assert!(!p.threads[t].registers.iter().any(|r| r == "me"));
    }
    // Assigned later: still a register, so `a[j]` indexes at run time from `a[0]`.
    let p = lower(
        "__device__ int a[2];
         __global__ void k() { int j = threadIdx.x; j = 1 - j; a[j] = 1; }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    let j = p.threads[0].reg("j").expect("j is a register");
    assert!(kinds(&p, 0).contains(&InstrKind::Store {
        addr: Address::Loc {
            loc: p.loc("a[0]").unwrap(),
            index: Some(j)
        },
        value: Operand::Imm(1),
        ty: IntType::S32,
        order: Order::Weak,
        scope: Scope::Sys
    }));
}

// ---- structs of scalars ----

const STRUCTS: &str = r#"
struct Slot { int data; volatile int flag; };
typedef struct { int a; cuda::atomic<int, cuda::thread_scope_device> n; } Pair;
__device__ Slot slots[2] = {{1, 0}, {2, 0}};
__device__ struct Slot one;
__device__ Pair pair;

__global__ void k(Slot *s, Pair *p) {
    s[1].data = one.data + 3;
    atomicExch(&s->flag, 1);
    slots[threadIdx.x].flag = 5;
    p->n.fetch_add(1, cuda::memory_order_release);
    int r = (s + 1)->flag;
}

void scopecheck_main() {
    Slot *m;
    cudaMallocManaged(&m, 2 * sizeof(Slot));
    k<<<1, 2>>>(m, &pair);
    cudaDeviceSynchronize();
    assert(m[1].data == 3);
    assert(sizeof(struct Slot) == 8);
}
"#;

#[test]
fn structs_have_one_location_per_field() {
    let p = lower(STRUCTS);
    for (name, init) in [
        ("slots[0].data", 1),
        ("slots[0].flag", 0),
        ("slots[1].data", 2),
        ("slots[1].flag", 0),
        ("one.data", 0),
        ("one.flag", 0),
        ("pair.a", 0),
        ("pair.n", 0),
        ("m[0].data", 0),
        ("m[1].flag", 0),
    ] {
        let l = p.loc(name).unwrap_or_else(|| panic!("no location {name}"));
        assert_eq!(p.location(l).init, init, "{name}");
    }
    assert_eq!(
        p.location(p.loc("m[1].data").unwrap()).space,
        MemorySpace::Managed
    );
    let t1 = kinds(&p, 1);
    // s[1].data = one.data + 3
    assert!(
        matches!(&t1[0], InstrKind::Load { addr, order: Order::Weak, .. } if *addr == at(&p, "one.data"))
    );
    assert!(
        matches!(&t1[2], InstrKind::Store { addr, order: Order::Weak, .. } if *addr == at(&p, "m[1].data"))
    );
    // atomicExch(&s->flag, 1) on the first element's flag.
    assert!(
        matches!(&t1[3], InstrKind::Rmw { addr, scope: Scope::Gpu, .. } if *addr == at(&p, "m[0].flag"))
    );
    // slots[threadIdx.x].flag: a volatile field, indexed by the thread.
    assert!(
        matches!(&t1[4], InstrKind::Store { addr, order: Order::Volatile, value: Operand::Imm(5), .. } if *addr == at(&p, "slots[1].flag"))
    );
    // an atomic field through a pointer: p->n.fetch_add(1, release).
    assert!(
        matches!(&t1[5], InstrKind::Rmw { addr, order: Order::Release, scope: Scope::Gpu, .. } if *addr == at(&p, "pair.n"))
    );
    // (s + 1)->flag
    assert!(
        matches!(&t1[6], InstrKind::Load { addr, order: Order::Volatile, .. } if *addr == at(&p, "m[1].flag"))
    );
    // the host's assert reads m[1].data
    let host = p
        .threads
        .iter()
        .position(|t| t.name.starts_with("host"))
        .unwrap();
    assert!(kinds(&p, host)
        .iter()
        .any(|k| matches!(k, InstrKind::Load { addr, .. } if *addr == at(&p, "m[1].data"))));
}

#[test]
fn struct_errors_name_the_construct() {
    let base = "struct S { int a; int b; };\n";
    for (src, main, want) in [
        (
            "__device__ S s; __global__ void k() { s.c = 1; }",
            "k<<<1, 1>>>();",
            "has no field `c`",
        ),
        (
            "__device__ S s; __global__ void k() { int x = s; }",
            "k<<<1, 1>>>();",
            "a whole `struct S`",
        ),
        (
            "__device__ S s; __global__ void k(int *p) { *p = 1; }",
            "k<<<1, 1>>>(&s);",
            "a pointer to `struct S` used as a pointer to a scalar",
        ),
        (
            "__device__ int x; __global__ void k() { x.a = 1; }",
            "k<<<1, 1>>>();",
            "not a struct",
        ),
        // (A local struct and a pointer field are fine: see structs_held_by_value_*.)
        ("struct T { int a[2]; };", "", "an array field"),
        ("struct T { dim3 d; };", "", "a field of this type"),
        ("__device__ struct U u;", "", "unknown struct `U`"),
    ] {
        let e = error(&format!("{base}{src}\nvoid scopecheck_main() {{ {main} }}"));
        assert!(e.message.contains(want), "{src}: {}", e.message);
    }
}

// ---- std::atomic / cuda::atomic in host code ----

#[test]
fn host_std_atomic_members_lower_at_system_scope() {
    let p = lower(
        r#"
__global__ void k(cuda::atomic<int, cuda::thread_scope_device> *c) { c->fetch_add(1, cuda::memory_order_relaxed); }
void scopecheck_main() {
    std::atomic<int> *a;
    cuda::atomic<int, cuda::thread_scope_device> *c;
    cudaMallocManaged(&a, 2 * sizeof(std::atomic<int>));
    cudaMallocManaged(&c, sizeof(cuda::atomic<int>));
    a->store(1, std::memory_order_release);
    int r = a[1].load(std::memory_order_acquire);
    a->fetch_add(2);
    int e = 0;
    bool ok = a->compare_exchange_strong(e, 5, std::memory_order_acq_rel, std::memory_order_acquire);
    c->store(3);
    k<<<1, 1>>>(c);
    cudaDeviceSynchronize();
    assert(c->load() == 4);
}
"#,
    );
    assert_eq!(p.locations.len(), 3);
    let host = kinds(&p, 0);
    assert!(
        matches!(&host[0], InstrKind::Store { addr, order: Order::Release, scope: Scope::Sys, value: Operand::Imm(1), ty: IntType::S32 } if *addr == at(&p, "a[0]"))
    );
    assert!(
        matches!(&host[1], InstrKind::Load { addr, order: Order::Acquire, scope: Scope::Sys, .. } if *addr == at(&p, "a[1]"))
    );
    assert!(matches!(
        &host[2],
        InstrKind::Rmw {
            kind: RmwKind::Op(RmwOp::Add, Operand::Imm(2)),
            order: Order::SeqCst,
            scope: Scope::Sys,
            ..
        }
    ));
    // e is a register (the CAS writes it), not a folded constant.
    assert!(host.iter().any(|k| matches!(
        k,
        InstrKind::Rmw {
            kind: RmwKind::Cas {
                expected: Operand::Reg(_),
                new: Operand::Imm(5)
            },
            order: Order::AcqRel,
            scope: Scope::Sys,
            ..
        }
    )));
    // the host's store to a device-scope cuda::atomic is at system scope.
    assert!(host.iter().any(|k| matches!(k, InstrKind::Store { addr, scope: Scope::Sys, order: Order::SeqCst, .. } if *addr == at(&p, "c"))));
    // the kernel keeps the type's scope.
    let dev = p.threads.iter().position(|t| t.name == "k.b0.t0").unwrap();
    assert!(matches!(
        &kinds(&p, dev)[0],
        InstrKind::Rmw {
            order: Order::Relaxed,
            scope: Scope::Gpu,
            ..
        }
    ));
}

// ---- OpenCL ----

#[test]
fn opencl_qualifiers_are_found_by_position_and_host_variables_stay() {
    let src = "__kernel void k(global int *p /* __local */) { }\nvoid scopecheck_main() { size_t global = 2, local = 1; f(&global, &local); }";
    let q = crate::opencl_qualifiers(src);
    let words: Vec<&str> = q.iter().map(|q| q.word).collect();
    assert_eq!(words, ["kernel", "global"]);
    assert_eq!(&src[q[1].start..q[1].end], "global");
}

#[test]
fn opencl_kernels_lower_as_the_c_dialect_does() {
    let src = include_str!("../../../examples/opencl/mp-device.cl");
    let (p, _) = crate::parse_opencl_with(src, &CudaOptions::default()).unwrap();
    let names: Vec<&str> = p.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["host", "mp.b0.t0", "mp.b1.t0", "host#2"]);
    assert!(kinds(&p, 1).iter().any(|k| matches!(
        k,
        InstrKind::Store {
            order: Order::Release,
            scope: Scope::Gpu,
            ..
        }
    )));
    assert!(kinds(&p, 2).iter().any(|k| matches!(
        k,
        InstrKind::Load {
            order: Order::Acquire,
            scope: Scope::Gpu,
            ..
        }
    )));
    let src = include_str!("../../../examples/opencl/local-reduction.cl");
    let (p, _) = crate::parse_opencl_with(src, &CudaOptions::default()).unwrap();
    assert_eq!(
        p.location(p.loc("scratch@b2[1]").unwrap()).space,
        MemorySpace::Shared
    );
    assert_eq!(
        p.location(p.loc("out[1]").unwrap()).space,
        MemorySpace::Managed
    );
    assert_eq!(
        p.location(p.loc("in[3]").unwrap()).space,
        MemorySpace::Global
    );
}

// ---- integer types ----

fn reg(p: &Program, t: usize, name: &str) -> RegId {
    p.threads[t]
        .reg(name)
        .unwrap_or_else(|| panic!("no register {name}"))
}

fn loc_ty(p: &Program, name: &str) -> IntType {
    p.location(p.loc(name).unwrap_or_else(|| panic!("no location {name}")))
        .ty
}

#[test]
fn an_unsigned_counter_is_a_32_bit_unsigned_rmw_that_wraps() {
    // CUDA `unsigned int atomicAdd(unsigned int *, unsigned int)`: the RMW computes in
    // `unsigned int` and wraps at 2^32; `int atomicAdd(int *, int)` wraps too (atomics never
    // overflow into undefined behaviour). The old value has the object's type.
    let p = lower(
        "__device__ unsigned int counter = 4294967295u;
         __device__ int n;
         __global__ void k() {
             unsigned old = atomicAdd(&counter, 1);
             int m = atomicAdd(&n, 1);
         }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    let c = p.loc("counter").unwrap();
    assert_eq!(p.location(c).ty, IntType::U32);
    assert_eq!(p.location(c).init, 4_294_967_295);
    assert_eq!(loc_ty(&p, "n"), IntType::S32);
    let code = kinds(&p, 0);
    assert_eq!(
        code[0],
        InstrKind::Rmw {
            dst: Some(reg(&p, 0, "old")),
            addr: Address::loc(c),
            kind: RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
            ty: IntType::U32,
            order: Order::Relaxed,
            scope: Scope::Gpu
        }
    );
    assert!(matches!(
        code[1],
        InstrKind::Rmw {
            ty: IntType::S32,
            ..
        }
    ));
    // What the RMW's type means: 2^32 - 1 + 1 is 0 in `unsigned int`; INT_MAX + 1 is INT_MIN.
    assert_eq!(RmwOp::Add.apply(IntType::U32, 4_294_967_295, 1), 0);
    assert_eq!(
        RmwOp::Add.apply(IntType::S32, i64::from(i32::MAX), 1),
        i64::from(i32::MIN)
    );
}

#[test]
fn an_int_local_increments_in_int() {
    // `i++` on an `int` is `i = i + 1` computed in `int` (where overflow is undefined); on a
    // `char` it is computed in `int` (integer promotion) and converted back to `char`.
    let p = lower(
        "__device__ int out;
         __global__ void k() {
             int i = out;
             i++;
             char c = out;
             c++;
             out = i + c;
         }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    let (i, c) = (reg(&p, 0, "i"), reg(&p, 0, "c"));
    let code = kinds(&p, 0);
    assert_eq!(
        code[1],
        InstrKind::Binary {
            dst: i,
            op: BinOp::Add,
            ty: IntType::S32,
            a: Operand::Reg(i),
            b: Operand::Imm(1)
        }
    );
    // `char c = out;`: the `int` read is converted to `signed char`.
    assert!(matches!(
        code[3],
        InstrKind::Binary { dst, op: BinOp::Or, ty: IntType::S8, b: Operand::Imm(0), .. } if dst == c
    ));
    // `c++`: computed in `int` into a temporary, converted back into `c`.
    let InstrKind::Binary {
        dst: t,
        op: BinOp::Add,
        ty: IntType::S32,
        a: Operand::Reg(a),
        b: Operand::Imm(1),
    } = code[4]
    else {
        panic!("{:?}", code[4])
    };
    assert_eq!(a, c);
    assert_eq!(
        code[5],
        InstrKind::Binary {
            dst: c,
            op: BinOp::Or,
            ty: IntType::S8,
            a: Operand::Reg(t),
            b: Operand::Imm(0)
        }
    );
    // `i + c`: `c` promotes to `int`.
    assert!(matches!(
        code[6],
        InstrKind::Binary {
            op: BinOp::Add,
            ty: IntType::S32,
            ..
        }
    ));
}

#[test]
fn long_long_locations_are_64_bit() {
    // `long long` (and `long`, LP64) is 64-bit signed; `unsigned long long` and `size_t` 64-bit
    // unsigned, so -1 initialises them to 2^64 - 1 (canonically the `i64` -1); `short` is 16
    // bits, `char` 8 and signed. `big + 1` computes in `long long` (the common type).
    let p = lower(
        "__device__ long long big = -1;
         __device__ long l;
         __device__ unsigned long long u = -1;
         __device__ size_t z;
         __device__ short s = 70000;
         __device__ char ch = 200;
         __device__ uint64_t w;
         __device__ int32_t i32;
         __device__ uint32_t u32 = -1;
         __global__ void k() { big = big + 1; }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    for (name, ty) in [
        ("big", IntType::S64),
        ("l", IntType::S64),
        ("u", IntType::U64),
        ("z", IntType::U64),
        ("s", IntType::S16),
        ("ch", IntType::S8),
        ("w", IntType::U64),
        ("i32", IntType::S32),
        ("u32", IntType::U32),
    ] {
        assert_eq!(loc_ty(&p, name), ty, "{name}");
    }
    let init = |name: &str| p.location(p.loc(name).unwrap()).init;
    assert_eq!(init("big"), -1);
    assert_eq!(IntType::U64.display(init("u")), "18446744073709551615");
    // Conversions to a narrower type wrap: 70000 - 65536, 200 - 256.
    assert_eq!(init("s"), 70000 - 65536);
    assert_eq!(init("ch"), -56);
    assert_eq!(init("u32"), 4_294_967_295);
    let big = Address::loc(p.loc("big").unwrap());
    let code = kinds(&p, 0);
    let InstrKind::Load {
        dst,
        addr,
        ty: IntType::S64,
        ..
    } = code[0]
    else {
        panic!("{:?}", code[0])
    };
    assert_eq!(addr, big);
    assert!(matches!(
        code[1],
        InstrKind::Binary { op: BinOp::Add, ty: IntType::S64, a: Operand::Reg(a), b: Operand::Imm(1), .. } if a == dst
    ));
    assert!(matches!(
        code[2],
        InstrKind::Store { addr, ty: IntType::S64, .. } if addr == big
    ));
}

#[test]
fn assigning_an_unsigned_to_an_int_converts() {
    // `int x = u;` converts the `unsigned` value to `int` (modulo 2^32 in CUDA): `u | 0`
    // computed in `int`. `unsigned v = x;` converts back; `unsigned w; w = -1;` is 2^32 - 1,
    // and a constant `unsigned c = -1` too (stored in a `long long`, it stays 2^32 - 1).
    let p = lower(
        "__device__ unsigned int src;
         __device__ int dst;
         __device__ long long wide;
         __global__ void k() {
             unsigned u = src;
             int x = u;
             unsigned v = x;
             unsigned w;
             w = -1;
             dst = x + v + w;
             const unsigned c = -1;
             wide = c;
         }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    let (u, x, v, w) = (
        reg(&p, 0, "u"),
        reg(&p, 0, "x"),
        reg(&p, 0, "v"),
        reg(&p, 0, "w"),
    );
    let code = kinds(&p, 0);
    assert!(matches!(
        code[0],
        InstrKind::Load { dst, ty: IntType::U32, .. } if dst == u
    ));
    assert_eq!(
        code[1],
        InstrKind::Binary {
            dst: x,
            op: BinOp::Or,
            ty: IntType::S32,
            a: Operand::Reg(u),
            b: Operand::Imm(0)
        }
    );
    assert_eq!(
        code[2],
        InstrKind::Binary {
            dst: v,
            op: BinOp::Or,
            ty: IntType::U32,
            a: Operand::Reg(x),
            b: Operand::Imm(0)
        }
    );
    assert_eq!(
        code[3],
        InstrKind::Mov {
            dst: w,
            src: Operand::Imm(4_294_967_295)
        }
    );
    // `x + v`: `int` + `unsigned int` is computed in `unsigned int`.
    assert!(matches!(
        code[4],
        InstrKind::Binary {
            op: BinOp::Add,
            ty: IntType::U32,
            ..
        }
    ));
    assert!(code.contains(&InstrKind::Store {
        addr: at(&p, "wide"),
        value: Operand::Imm(4_294_967_295),
        ty: IntType::S64,
        order: Order::Weak,
        scope: Scope::Sys
    }));
}

#[test]
fn a_run_time_index_is_an_indexed_address() {
    // `a[i]` with `i` read at run time: the address of the element `i` places after `a[0]`,
    // which the explorer bounds-checks (out of bounds is a fault at the line). A struct element
    // spans one location per field, so `s[i].f` counts `i * 2` locations from `s[0].f`. A
    // pointer kept in a variable copies the index, so a later assignment to `i` does not move
    // it. A constant index folds to the element; out of range it is an error at compile time.
    let p = lower(
        "struct P { int x; int f; };
         __device__ int a[4];
         __device__ P s[2];
         __global__ void k(int *out) {
             int i = out[0];
             a[i] = 1;
             s[i].f = 2;
             int *q = &a[i];
             i = 0;
             *q = 3;
             a[3] = 4;
         }
         void scopecheck_main() { int *out; cudaMallocManaged(&out, 4); k<<<1, 1>>>(out); }",
    );
    let i = reg(&p, 0, "i");
    let code = kinds(&p, 0);
    let a0 = p.loc("a[0]").unwrap();
    assert_eq!(
        code[1],
        InstrKind::Store {
            addr: Address::Loc {
                loc: a0,
                index: Some(i)
            },
            value: Operand::Imm(1),
            ty: IntType::S32,
            order: Order::Weak,
            scope: Scope::Sys
        }
    );
    let InstrKind::Binary {
        dst: t,
        op: BinOp::Mul,
        a: Operand::Reg(ia),
        b: Operand::Imm(2),
        ..
    } = code[2]
    else {
        panic!("{:?}", code[2])
    };
    assert_eq!(ia, i);
    assert!(matches!(
        code[3],
        InstrKind::Store { addr: Address::Loc { loc, index: Some(r) }, value: Operand::Imm(2), .. }
            if loc == p.loc("s[0].f").unwrap() && r == t
    ));
    // `int *q = &a[i]` copies the index; `*q = 3` uses the copy.
    let InstrKind::Mov {
        dst: copy,
        src: Operand::Reg(from),
    } = code[4]
    else {
        panic!("{:?}", code[4])
    };
    assert_eq!(from, i);
    assert!(matches!(
        code[6],
        InstrKind::Store { addr: Address::Loc { loc, index: Some(r) }, value: Operand::Imm(3), .. }
            if loc == a0 && r == copy
    ));
    assert!(matches!(
        code[7],
        InstrKind::Store { addr, value: Operand::Imm(4), .. } if addr == at(&p, "a[3]")
    ));
    // The arrays are allocations of consecutive locations.
    let arrays: Vec<(&str, u32, u32)> = p
        .arrays
        .iter()
        .map(|a| (a.name.as_str(), a.first.0, a.len))
        .collect();
    // (`out`, of one element, is an allocation of its own.)
    assert_eq!(arrays, [("a", 0, 4), ("s", 4, 4)]);
    let e = error(
        "__device__ int a[4];
         __global__ void k() { a[4] = 1; }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    assert!(e.message.contains("outside `a`"), "{}", e.message);
}

#[test]
fn constants_fold_in_their_c_types() {
    // `threadIdx.x` is `unsigned int`: in thread 0 `threadIdx.x - 1` is 2^32 - 1, so
    // `threadIdx.x - 1 < 0` is false and `threadIdx.x - 1 == -1` true (-1 converts to
    // unsigned). `0xffffffff` is `unsigned int`, `4294967295` (decimal) `long long`: only the
    // first equals `-1` in C. An unsigned register compared with -1 compares as unsigned.
    let p = lower(
        "__device__ int out[4];
         __device__ unsigned int c;
         __global__ void k() {
             out[0] = threadIdx.x - 1 < 0;
             out[1] = threadIdx.x - 1 == -1;
             out[2] = 0xffffffff == -1;
             out[3] = 4294967295 == -1;
             unsigned v = c;
             while (v == -1) { }
         }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    let code = kinds(&p, 0);
    let stored: Vec<Operand> = code
        .iter()
        .filter_map(|k| match k {
            InstrKind::Store { value, .. } => Some(*value),
            _ => None,
        })
        .collect();
    assert_eq!(
        stored,
        [
            Operand::Imm(0),
            Operand::Imm(1),
            Operand::Imm(1),
            Operand::Imm(0)
        ]
    );
    let v = reg(&p, 0, "v");
    // The await loop: compare in `unsigned int`, branch back while equal.
    let n = code.len();
    assert!(matches!(
        code[n - 2],
        InstrKind::Binary { op: BinOp::Eq, ty: IntType::U32, a: Operand::Reg(a), b: Operand::Imm(-1), .. } if a == v
    ));
    assert!(matches!(
        code[n - 1],
        InstrKind::Branch {
            cond: BranchCond::Eq(Operand::Reg(_), Operand::Imm(1)),
            target
        } if target == n - 2
    ));
}

#[test]
fn undefined_constant_arithmetic_faults_where_it_runs() {
    // `1 << 31` overflows `int` (undefined in C): the front-end keeps the operation so that the
    // explorer reports the fault at its line if it runs, and warns. In a branch a thread does
    // not take (`threadIdx.x` is known), nothing is lowered and nothing is said.
    let (p, w) = parse_cuda(
        "__device__ int out;
         __global__ void k() {
             int x = 1 << 31;
             if (threadIdx.x == 1) { out = 10 / threadIdx.x; }
             if (threadIdx.x == 1) { out = 10 / (threadIdx.x - 1); }
         }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    )
    .unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].message.contains("faults"), "{}", w[0].message);
    assert!(matches!(
        kinds(&p, 0)[0],
        InstrKind::Binary {
            op: BinOp::Shl,
            ty: IntType::S32,
            a: Operand::Imm(1),
            b: Operand::Imm(31),
            ..
        }
    ));
    // A constant expression the harness or a declaration needs is an error.
    let e = error(
        "__device__ int a[1 << 31];
void scopecheck_main() { }",
    );
    assert!(e.message.contains("undefined"), "{}", e.message);
}

#[test]
fn pointer_types_give_the_access_type_and_widths_must_match() {
    // A kernel parameter `unsigned *p` reads the harness's `int` allocation as `unsigned int`
    // (the same width); a `long long *` parameter on it is a mixed-size access, refused.
    let p = lower(
        "__global__ void k(unsigned *p) { atomicMax(p, 5); }
         void scopecheck_main() { int *x; cudaMallocManaged(&x, 4); k<<<1, 1>>>(x); }",
    );
    assert_eq!(loc_ty(&p, "x"), IntType::S32);
    assert!(matches!(
        kinds(&p, 0)[0],
        InstrKind::Rmw {
            kind: RmwKind::Op(RmwOp::Max, Operand::Imm(5)),
            ty: IntType::U32,
            ..
        }
    ));
    let e = error(
        "__global__ void k(long long *p) { *p = 1; }
         void scopecheck_main() { int *x; cudaMallocManaged(&x, 8); k<<<1, 1>>>(x); }",
    );
    assert!(e.message.contains("mixed-size"), "{}", e.message);
}

#[test]
fn opencl_types_and_atomics_have_their_widths() {
    // OpenCL C: `uint` is 32-bit unsigned, `ulong` 64-bit unsigned, `atomic_uint` an atomic
    // `uint` (its RMWs compute in `uint`); `get_global_id` is a `size_t`.
    let src = "__kernel void k(__global atomic_uint *c, __global ulong *u) {
                   atomic_fetch_add(c, 1u);
                   u[get_global_id(0)] = get_global_id(0) - 1;
               }
               void scopecheck_main() {
                   cl_context ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, NULL);
                   cl_command_queue q = clCreateCommandQueue(ctx, NULL, 0, NULL);
                   cl_program pr = clCreateProgramWithSource(ctx, 1, NULL, NULL, NULL);
                   cl_kernel k = clCreateKernel(pr, \"k\", NULL);
                   atomic_uint *c = (atomic_uint *)clSVMAlloc(ctx, 0, 4, 0);
                   ulong *u = (ulong *)clSVMAlloc(ctx, 0, 8, 0);
                   clSetKernelArgSVMPointer(k, 0, c);
                   clSetKernelArgSVMPointer(k, 1, u);
                   size_t global = 1, local = 1;
                   clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
                   clFinish(q);
               }";
    let (p, _) = crate::parse_opencl_with(src, &CudaOptions::default()).unwrap();
    assert_eq!(loc_ty(&p, "c"), IntType::U32);
    assert_eq!(loc_ty(&p, "u"), IntType::U64);
    let t = p.threads.iter().position(|t| t.name == "k.b0.t0").unwrap();
    let code = kinds(&p, t);
    assert!(matches!(
        code[0],
        InstrKind::Rmw {
            ty: IntType::U32,
            order: Order::SeqCst,
            scope: Scope::Gpu,
            ..
        }
    ));
    // 0 - 1 in `size_t` is 2^64 - 1, stored as a `ulong`.
    assert!(matches!(
        code[1],
        InstrKind::Store {
            value: Operand::Imm(-1),
            ty: IntType::U64,
            ..
        }
    ));
}

// ---- the harness as ordinary host code: `int main()`, runtime calls, failing returns ----

/// The stores of thread `t`: (location name, value, order).
fn stores(p: &Program, t: usize) -> Vec<(String, Operand, Order)> {
    kinds(p, t)
        .into_iter()
        .filter_map(|k| match k {
            InstrKind::Store {
                addr: Address::Loc { loc, .. },
                value,
                order,
                ..
            } => Some((p.location(loc).name.clone(), value, order)),
            _ => None,
        })
        .collect()
}

fn names(p: &Program) -> Vec<&str> {
    p.threads.iter().map(|t| t.name.as_str()).collect()
}

const KERNEL: &str = "__global__ void k(int *x) { *x = 42; }\n";

#[test]
fn int_main_is_the_harness_without_scopecheck_main() {
    for sig in [
        "int main()",
        "int main(void)",
        "int main(int argc, char **argv)",
    ] {
        let p = lower(&format!(
            "{KERNEL}{sig} {{ int *x; cudaMallocManaged(&x, 4); k<<<1, 1>>>(x); cudaDeviceSynchronize(); assert(*x == 42); return 0; }}"
        ));
        assert_eq!(names(&p), ["k.b0.t0", "host"], "{sig}");
    }
    // Both: scopecheck_main wins (main is not lowered: its launch would make a thread).
    let p = lower(&format!(
        "{KERNEL}int main() {{ int *y; cudaMalloc(&y, 4); k<<<1, 1>>>(y); return 0; }}
         void scopecheck_main() {{ }}"
    ));
    assert!(p.threads.is_empty());
    let e = error(KERNEL);
    assert!(e.message.contains("int main()"), "{}", e.message);
    assert!(e.message.contains("scopecheck_main"), "{}", e.message);
}

#[test]
fn printf_and_cleanup_calls_are_ignored_but_their_names_checked() {
    let (p, w) = parse_cuda(&format!(
        "{KERNEL}int main() {{
            int *x; cudaMalloc(&x, 4);
            cudaSetDevice(0);
            int n = 3;
            printf(\"%d %d\\n\", n, *x);
            fprintf(stderr, \"x\\n\"); puts(\"y\"); fflush(stdout);
            cudaGetLastError(); cudaPeekAtLastError();
            cudaError_t err = cudaGetLastError();
            if (err != cudaSuccess) {{ fprintf(stderr, \"%s\\n\", cudaGetErrorString(err)); return 1; }}
            cudaFree(x); cudaDeviceReset();
            return 0;
        }}"
    ))
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    // No host thread reads `x` (the printf of `*x` is not evaluated); `err` is a register.
    let host = &p.threads[0];
    assert!(
        host.code
            .iter()
            .all(|i| !matches!(i.kind, InstrKind::Load { .. })),
        "{:?}",
        host.code
    );
    let e = error(&format!(
        "{KERNEL}int main() {{\n  printf(\"%d\\n\", nope);\n  return 0;\n}}"
    ));
    assert_eq!(e.line(), 3);
    assert!(e.message.contains("unknown name `nope`"), "{}", e.message);
    let e = error(&format!("{KERNEL}int main() {{\n  cudaSetDevice(1);\n}}"));
    assert_eq!(e.line(), 3);
    assert!(e.message.contains("device other than 0"), "{}", e.message);
}

#[test]
fn cuda_memset_stores_the_byte_replicated_over_each_element() {
    let p = lower(&format!(
        "{KERNEL}int main() {{
            int *a; unsigned char *c; int *z;
            cudaMalloc(&a, 2 * sizeof(int));
            cudaMalloc(&c, 2);
            cudaMalloc(&z, 3 * sizeof(int));
            cudaMemset(a, 0xff, 2 * sizeof(int));
            cudaMemset(c, 0x7f, 1);
            cudaMemset(z, 0, sizeof(int) * 3);
            cudaMemset(a, 1, sizeof(int));
            k<<<1, 1>>>(a);
            return 0;
        }}"
    ));
    assert_eq!(names(&p), ["host", "k.b0.t0"]);
    let w = |n: &str, v| (n.to_string(), Operand::Imm(v), Order::Weak);
    assert_eq!(
        stores(&p, 0),
        [
            w("a[0]", -1),
            w("a[1]", -1),
            w("c[0]", 0x7f),
            w("z[0]", 0),
            w("z[1]", 0),
            w("z[2]", 0),
            w("a[0]", 0x01010101),
        ]
    );
    assert_eq!(p.threads[1].after, [ThreadId(0)]);
    // Errors, at their line.
    let e = error(&format!(
        "{KERNEL}int main() {{\n int *a; cudaMalloc(&a, 8);\n cudaMemset(a, 0, 6);\n}}"
    ));
    assert_eq!(e.line(), 4);
    assert!(
        e.message.contains("whole number of 4-byte"),
        "{}",
        e.message
    );
    let e = error(&format!(
        "{KERNEL}int main() {{\n int *a; cudaMalloc(&a, 8);\n cudaMemset(a, 0, 12);\n}}"
    ));
    assert_eq!(e.line(), 4);
    assert!(e.message.contains("past the end of `a`"), "{}", e.message);
    let e = error(&format!(
        "{KERNEL}int main() {{\n int *a; cudaMalloc(&a, 8);\n int n = 8;\n cudaMemset(a, 0, n + *a);\n}}"
    ));
    assert_eq!(e.line(), 5);
}

#[test]
fn cuda_memset_while_kernels_run_is_a_default_stream_operation() {
    let p = lower(&format!(
        "{KERNEL}int main() {{
            int *a, *b; cudaMalloc(&a, 4); cudaMalloc(&b, 4);
            cudaStream_t s; cudaStreamCreate(&s);
            k<<<1, 1, 0, s>>>(a);
            cudaMemset(b, 0, 4);
            k<<<1, 1, 0, s>>>(b);
            cudaDeviceSynchronize();
            int h; cudaMemcpy(&h, b, 4, cudaMemcpyDeviceToHost);
            if (h != 42) return 1;
            return 0;
        }}"
    ));
    assert_eq!(names(&p), ["k.b0.t0", "memset", "k#3.b0.t0", "host"]);
    // The memset waits for the first kernel; the second kernel (a created stream waits for
    // the legacy default stream) for both; the host for all.
    assert_eq!(p.threads[1].after, [ThreadId(0)]);
    assert_eq!(p.threads[2].after, [ThreadId(0), ThreadId(1)]);
    assert_eq!(p.threads[3].after, [ThreadId(0), ThreadId(1), ThreadId(2)]);
    assert_eq!(
        stores(&p, 1),
        [("b".to_string(), Operand::Imm(0), Order::Weak)]
    );
}

#[test]
fn cuda_memcpy_device_to_host_waits_and_reads_into_a_local() {
    let p = lower(&format!(
        "{KERNEL}int main() {{
            int *d; cudaMalloc(&d, sizeof(int));
            int h_out = 0;
            k<<<1, 1>>>(d);
            cudaMemcpy(&h_out, d, sizeof(h_out), cudaMemcpyDeviceToHost);
            if (h_out != 42) return 1;
            return 0;
        }}"
    ));
    // `host` (h_out = 0) before the kernel; the copy starts a segment after it.
    assert_eq!(names(&p), ["host", "k.b0.t0", "host#2"]);
    assert_eq!(p.threads[2].after, [ThreadId(0), ThreadId(1)]);
    let code = kinds(&p, 2);
    let InstrKind::Load {
        addr, order, ty, ..
    } = &code[0]
    else {
        panic!("{code:?}")
    };
    assert_eq!(
        (*addr, *order, *ty),
        (at(&p, "d"), Order::Weak, IntType::S32)
    );
    assert_eq!(p.condition.quantifier, Quantifier::Forall);
    assert!(p.threads[2].registers.iter().any(|r| r == "assert0"));
    // A host local from before the copy's cut, read after it, is still refused; the copy's
    // own local is of the new segment.
    let e = error(&format!(
        "{KERNEL}int main() {{\n int *d; cudaMalloc(&d, 4);\n int n = 0; n = n + 1;\n k<<<1, 1>>>(d);\n int h; cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost);\n if (h != n) return 1;\n return 0;\n}}"
    ));
    assert_eq!(e.line(), 7);
    assert!(
        e.message.contains("across a kernel launch"),
        "{}",
        e.message
    );
}

#[test]
fn cuda_memcpy_host_to_device_stores_host_values() {
    let p = lower(&format!(
        "{KERNEL}int main() {{
            int *d; cudaMalloc(&d, 4 * sizeof(int));
            int h[4] = {{1, 2, 3, 4}};
            const int seven = 7;
            cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
            cudaMemcpy(d + 1, &seven, sizeof(int), cudaMemcpyHostToDevice);
            k<<<1, 1>>>(d);
            int back[4];
            cudaMemcpy(back, d, 4 * sizeof(int), cudaMemcpyDefault);
            if (back[0] != 42 || back[3] != 4) return 1;
            return 0;
        }}"
    ));
    assert_eq!(names(&p), ["host", "k.b0.t0", "host#2"]);
    assert_eq!(p.location(p.loc("h[2]").unwrap()).init, 3);
    assert_eq!(
        p.location(p.loc("h[2]").unwrap()).space,
        MemorySpace::HostPageable
    );
    let s = stores(&p, 0);
    assert_eq!(s.len(), 5, "{s:?}");
    assert_eq!(s[4], ("d[1]".to_string(), Operand::Imm(7), Order::Weak));
    assert!(s[..4].iter().all(|(_, v, _)| matches!(v, Operand::Reg(_))));
    let s = stores(&p, 2);
    let locs: Vec<&str> = s.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(locs, ["back[0]", "back[1]", "back[2]", "back[3]"]);
}

#[test]
fn cuda_memcpy_errors_name_the_problem_and_line() {
    let run = |body: &str| {
        error(&format!(
            "{KERNEL}int main() {{\n int *d; cudaMalloc(&d, 8);\n int h[2];\n int x = 0;\n{body}\n}}"
        ))
    };
    let e = run("cudaMemcpy(d, h, 12, cudaMemcpyHostToDevice);");
    assert_eq!(e.line(), 6);
    assert!(e.message.contains("past the end"), "{}", e.message);
    let e = run("cudaMemcpy(d, h, 6, cudaMemcpyHostToDevice);");
    assert!(e.message.contains("whole number"), "{}", e.message);
    let e = run("cudaMemcpy(h, d, 8, cudaMemcpyHostToDevice);");
    assert!(
        e.message
            .contains("source of a host to device copy is device memory"),
        "{}",
        e.message
    );
    let e = run("cudaMemcpy(h, d, 8, cudaMemcpyDeviceToDevice);");
    assert!(e.message.contains("destination"), "{}", e.message);
    let e = run("cudaMemcpy(&x, d, 8, cudaMemcpyDeviceToHost);");
    assert!(
        e.message.contains("more than the local `x`"),
        "{}",
        e.message
    );
    let e = run("cudaMemcpy(d, h, 8, 3);");
    assert!(
        e.message.contains("cudaMemcpyHostToDevice"),
        "{}",
        e.message
    );
    // An asynchronous copy of a host local is refused (its value would live in the copy's
    // own thread); of memory it is supported (crates/cli/tests/cuda_sources.rs).
    let e = run("cudaStream_t s; cudaStreamCreate(&s);\ncudaMemcpyAsync(&x, d, 4, cudaMemcpyDeviceToHost, s);");
    assert_eq!(e.line(), 7);
    assert!(e.message.contains("not supported yet"), "{}", e.message);
    let e = run("k<<<1, 1>>>(h);");
    assert!(e.message.contains("host array"), "{}", e.message);
}

#[test]
fn failing_returns_exits_and_aborts_are_requirements() {
    for fail in [
        "return 1;",
        "return EXIT_FAILURE;",
        "{ printf(\"bad\\n\"); cudaFree(x); return 2; }",
        "exit(1);",
        "{ fprintf(stderr, \"bad\"); abort(); }",
    ] {
        let p = lower(&format!(
            "{KERNEL}int main() {{ int *x; cudaMallocManaged(&x, 4); k<<<1, 1>>>(x); cudaDeviceSynchronize(); if (*x != 42) {fail} return 0; }}"
        ));
        assert_eq!(names(&p), ["k.b0.t0", "host"], "{fail}");
        let host = &p.threads[1];
        let r = host
            .registers
            .iter()
            .position(|r| r == "assert0")
            .expect(fail);
        assert_eq!(host.init_regs, [(RegId(r as u32), 1)], "{fail}");
        // assert0 &= (*x != 42) == 0
        assert!(matches!(
            host.code.last().map(|i| &i.kind),
            Some(InstrKind::Binary { op: BinOp::And, .. })
        ));
    }
    // A condition that folds to false needs nothing.
    let p = lower(&format!(
        "{KERNEL}int main() {{ if (cudaSuccess != 0) return 1; return 0; }}"
    ));
    assert!(p.threads.is_empty());
    let bad = |body: &str, line: u32, says: &str| {
        let e = error(&format!(
            "{KERNEL}int main() {{\n int *x; cudaMallocManaged(&x, 4);\n{body}\n return 0;\n}}"
        ));
        assert_eq!(e.line(), line, "{body}: {}", e.message);
        assert!(e.message.contains(says), "{body}: {}", e.message);
    };
    bad("if (*x) return 0;", 4, "`return` here");
    bad("return 1;", 4, "`return` here");
    bad(
        "if (*x) { *x = 2; return 1; }",
        4,
        "code before the failing",
    );
    bad("exit(1);", 4, "`exit` here");
    bad("if (*x) return *x;", 4, "computed at run time");
    let e = error(&format!("{KERNEL}int main() {{\n return 1;\n}}"));
    assert_eq!(e.line(), 3);
    assert!(e.message.contains("always fail"), "{}", e.message);
}

#[test]
fn host_locals_of_fixed_width_types_compare_in_one_segment() {
    let p = lower(
        "__global__ void k(unsigned *x) { *x = 4000000000u; }
         int main() {
            unsigned *d; cudaMalloc(&d, sizeof(unsigned));
            k<<<1, 1>>>(d);
            cudaError_t err = cudaDeviceSynchronize();
            uint32_t h; int32_t s;
            cudaMemcpy(&h, d, sizeof(uint32_t), cudaMemcpyDeviceToHost);
            cudaMemcpy(&s, d, sizeof(s), cudaMemcpyDeviceToHost);
            if (err != cudaSuccess || h != 4000000000u || s != -294967296) return 1;
            return 0;
        }",
    );
    assert_eq!(names(&p), ["k.b0.t0", "host"]);
    let host = &p.threads[1];
    // `h` and `s` are registers of the one host segment, of their declared types.
    for n in ["h", "s", "err"] {
        assert!(host.registers.iter().any(|r| r == n), "{n}");
    }
    let loads: Vec<IntType> = host
        .code
        .iter()
        .filter_map(|i| match i.kind {
            InstrKind::Load { ty, .. } => Some(ty),
            _ => None,
        })
        .collect();
    assert_eq!(loads, [IntType::U32, IntType::U32]);
}

#[test]
fn a_cast_to_void_discards_the_value_without_converting_it() {
    // `(void)v;` is only there to silence a compiler warning: it computes nothing, in
    // particular not the value as an 8-bit `void` (which the GPU runner refused).
    let p = lower(
        "__global__ void k(int *x) { int v = *x; (void)v; }\n\
         void scopecheck_main() { int *x; cudaMalloc(&x, 4); k<<<1, 1>>>(x); }\n",
    );
    let device = p
        .threads
        .iter()
        .position(|t| t.placement != Placement::Host)
        .unwrap();
    let widths: Vec<u8> = kinds(&p, device)
        .iter()
        .filter_map(|k| match k {
            InstrKind::Load { ty, .. } | InstrKind::Binary { ty, .. } => Some(ty.bits),
            _ => None,
        })
        .collect();
    assert_eq!(
        widths,
        [32],
        "one 32-bit load and nothing else: {:?}",
        kinds(&p, device)
    );
}

/// `std::thread t(f, args)`: `f` runs as a host thread of its own that starts after the host
/// code before it and runs concurrently with the host code after it; `t.join()` makes the host
/// code that follows start after the thread. A host local whose address the thread is given
/// lives in host memory.
#[test]
fn std_thread_runs_a_host_function_as_its_own_host_thread() {
    let p = lower(
        "__global__ void k(int *x) { *x = 1; }
         void poll(int *x, int *seen) { while (*x == 0) {} *seen = *x; }
         int main() {
             int *x; cudaMallocManaged(&x, sizeof(int));
             *x = 0;
             int seen = 0;
             std::thread t(poll, x, &seen);
             k<<<1, 1>>>(x);
             t.join();
             assert(seen == 1);
             return 0;
         }",
    );
    let names: Vec<&str> = p.threads.iter().map(|t| t.name.as_str()).collect();
    // The code before the thread (host), the thread (poll), the kernel, the code after join.
    assert_eq!(names, ["host", "poll", "k.b0.t0", "host#2"]);
    assert_eq!(p.threads[1].placement, Placement::Host);
    // The thread and the kernel start after the host code before them, not after each other.
    assert_eq!(p.threads[1].after, [ThreadId(0)]);
    assert_eq!(p.threads[2].after, [ThreadId(0)]);
    // After join: after the thread and the host code so far (not after the kernel, which was
    // never synchronized).
    assert_eq!(p.threads[3].after, [ThreadId(0), ThreadId(1)]);
    assert!(p.locations.iter().any(|l| l.name == "seen"));
}

#[test]
fn std_thread_misuse_is_an_error_at_its_line() {
    let cases = [
        (
            "void f(int *x) { *x = 1; }
             int main() { int *x; cudaMallocManaged(&x, 4); std::thread t(f, x); return 0; }",
            "neither joined nor detached",
        ),
        (
            "__global__ void k(int *x) { *x = 1; }
             void f(int *x) { k<<<1, 1>>>(x); }
             int main() { int *x; cudaMallocManaged(&x, 4); std::thread t(f, x); t.join(); return 0; }",
            "kernel launch in a `std::thread`",
        ),
        (
            "int main() { int *x; cudaMallocManaged(&x, 4); std::thread t([&] { *x = 1; }); t.join(); return 0; }",
            "lambda",
        ),
        (
            "__device__ void f(int *x) { *x = 1; }
             int main() { int *x; cudaMallocManaged(&x, 4); std::thread t(f, x); t.join(); return 0; }",
            "device function",
        ),
        (
            "void f(int *x) { *x = 1; }
             int main() { int *x; cudaMallocManaged(&x, 4); std::thread t(f, x); t.join(); t.join(); return 0; }",
            "already joined",
        ),
    ];
    for (src, want) in cases {
        let e = error(src);
        assert!(e.message.contains(want), "{src}: {}", e.message);
        assert!(e.line() >= 1, "{src}: no line");
    }
}

/// A struct held by value is one variable per field (`p.data`, `p.n`): a kernel's by-value
/// parameter receives the host's fields, so its accesses reach the allocations they name.
#[test]
fn structs_held_by_value_are_one_variable_per_field() {
    let p = lower(
        "struct P { int *data; unsigned n; };
         __global__ void k(P p) { p.data[1] = p.n; }
         int main() {
             P p;
             cudaMalloc(&p.data, 2 * sizeof(int));
             p.n = 7;
             P q = p;
             k<<<1, 1>>>(q);
             return 0;
         }",
    );
    // The kernel stores the constant 7 to the second element of the allocation named p.data.
    let k = &p
        .threads
        .iter()
        .find(|t| t.name == "k.b0.t0")
        .expect("kernel thread")
        .code;
    assert!(
        matches!(
            k.last().map(|i| &i.kind),
            Some(InstrKind::Store {
                value: Operand::Imm(7),
                ..
            })
        ),
        "{k:?}"
    );
    assert!(
        p.locations.iter().any(|l| l.name == "p.data[1]"),
        "{:?}",
        p.locations
    );
}

#[test]
fn structs_with_pointers_stay_out_of_memory_and_launch_arguments_are_known() {
    let cases = [
        (
            "struct P { int *data; }; __device__ P g;
             int main() { return 0; }",
            "in memory",
        ),
        (
            "struct P { int *data; }; __global__ void k(P *p) { }
             int main() { P *q; cudaMalloc(&q, sizeof(P)); return 0; }",
            "in memory",
        ),
        (
            "struct P { int *data; int n; }; __global__ void k(P p) { p.data[0] = p.n; }
             int main() { P p; cudaMallocManaged(&p.data, 4); p.data[0] = 3; p.n = p.data[0];
                          k<<<1, 1>>>(p); return 0; }",
            "computed at run time by the host",
        ),
        (
            "struct P { int *data; }; __global__ void k(P p) { p.data[0] = 1; }
             int main() { P p; k<<<1, 1>>>(p); return 0; }",
            "before it is allocated",
        ),
        (
            "struct P { int *data; }; struct Q { int *data; };
             __global__ void k(P p) { p.data[0] = 1; }
             int main() { Q q; cudaMalloc(&q.data, 4); k<<<1, 1>>>(q); return 0; }",
            "is a `Q`, the parameter a `P`",
        ),
    ];
    for (src, want) in cases {
        let e = error(src);
        assert!(e.message.contains(want), "{src}: {}", e.message);
    }
}

/// `cg::tiled_partition<N>(block)`: a thread's tile is the N consecutive threads holding it;
/// thread_rank, size and meta_group_rank fold to constants, sync() is a warp barrier over the
/// tile's lanes (thread 5 of a block is lane 5, in the second tile of 4: lanes 4..7).
#[test]
fn tiles_fold_their_ranks_and_sync_over_their_lanes() {
    let p = lower(
        "#include <cooperative_groups.h>
         namespace cg = cooperative_groups;
         __global__ void k(int *out) {
             cg::thread_block_tile<4> t = cg::tiled_partition<4>(cg::this_thread_block());
             out[threadIdx.x] = t.thread_rank() * 100 + t.meta_group_rank() * 10 + t.size();
             t.sync();
         }
         int main() { int *o; cudaMallocManaged(&o, 8 * sizeof(int)); k<<<1, 8>>>(o); return 0; }",
    );
    let t5 = p
        .threads
        .iter()
        .find(|t| t.name == "k.b0.t5")
        .expect("thread 5");
    // Rank 1 in tile 1 of size 4: 1 * 100 + 1 * 10 + 4.
    assert!(
        t5.code.iter().any(|i| matches!(
            i.kind,
            InstrKind::Store {
                value: Operand::Imm(114),
                ..
            }
        )),
        "{:?}",
        t5.code
    );
    assert!(
        t5.code.iter().any(|i| matches!(
            i.kind,
            InstrKind::Warp {
                op: scopecheck_ir::WarpOp::Sync,
                mask: Operand::Imm(0xf0),
                ..
            }
        )),
        "{:?}",
        t5.code
    );
    // A size that is not a power of two up to 32 is an error.
    let e = error(
        "#include <cooperative_groups.h>
         namespace cg = cooperative_groups;
         __global__ void k() { cg::thread_block_tile<64> t = cg::tiled_partition<64>(cg::this_thread_block()); }
         int main() { k<<<1, 1>>>(); return 0; }",
    );
    assert!(e.message.contains("power of two"), "{}", e.message);
}
