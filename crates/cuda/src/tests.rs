//! Unit tests of the lowering: the IR of small kernels, the harness's threads, and errors.

use crate::{parse_cuda, parse_cuda_with, CudaOptions, DEFAULT_MAX_THREADS};
use scopecheck_ir::{
    Address, BranchCond, FenceOrder, FenceSpaces, InstrKind, LocId, MemorySpace, Operand, Order,
    Placement, Program, Quantifier, RegId, RmwKind, RmwOp, Scope, ThreadId,
};

fn lower(src: &str) -> Program {
    match parse_cuda(src) {
        Ok((p, _)) => p,
        Err(e) => panic!("{e}"),
    }
}

fn error(src: &str) -> crate::CudaError {
    match parse_cuda(src) {
        Ok(_) => panic!("lowered, expected an error"),
        Err(e) => e,
    }
}

fn kinds(p: &Program, t: usize) -> Vec<InstrKind> {
    p.threads[t].code.iter().map(|i| i.kind.clone()).collect()
}

fn at(p: &Program, name: &str) -> Address {
    Address {
        loc: p.loc(name).unwrap_or_else(|| panic!("no location {name}")),
        offset: None,
    }
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
    // produce: payload = 42 (the float argument folded); fence.sc.gpu; atomicExch relaxed gpu.
    let produce = kinds(&p, 1);
    assert_eq!(
        produce[0],
        InstrKind::Store {
            addr: at(&p, "payload"),
            value: Operand::Imm(42),
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
            InstrKind::Rmw { addr: Address { loc: l, .. }, scope: Scope::Cta, .. } if l == loc
        ));
        assert!(matches!(kinds(&p, t)[1], InstrKind::Barrier { .. }));
    }
    assert_eq!(warnings.len(), 2, "{warnings:?}");
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
fn float_constants_are_integers_with_a_warning_when_inexact() {
    let (p, w) = parse_cuda(
        "__device__ float x = 2.0f;
         __global__ void k() { x = 0.5f; }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    )
    .unwrap();
    assert_eq!(p.location(p.loc("x").unwrap()).init, 2);
    assert_eq!(w.len(), 1);
    assert!(w[0].message.contains("0.5f"), "{}", w[0].message);
}

#[test]
fn syntax_errors_point_at_the_error_node() {
    let e = error("__global__ void k() { int x = ; }\nvoid scopecheck_main() {}");
    assert_eq!(e.span.line, 1);
    assert!(e.message.starts_with("syntax error"), "{}", e.message);
}

#[test]
fn unsupported_constructs_are_named_with_their_line() {
    let e = error(
        "__global__ void k(int *x) {\n  switch (*x) { default: break; }\n}\nvoid scopecheck_main() { int *x; cudaMalloc(&x, 4); k<<<1, 1>>>(x); }",
    );
    assert_eq!(e.span.line, 2);
    assert!(e.message.contains("not supported"), "{}", e.message);
    let e = error("__global__ void k(int *x) { *x = 1; }");
    assert!(e.message.contains("scopecheck_main"), "{}", e.message);
    let e = error(
        "__global__ void k(int *x) { int r = *x; x[r] = 1; }
         void scopecheck_main() { int *x; cudaMalloc(&x, 8); k<<<1, 1>>>(x); }",
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
    let src = "__global__ void k() { }\nvoid scopecheck_main() { k<<<3, 3>>>(); }";
    let e = error(src);
    assert_eq!(e.span.line, 2);
    assert!(
        e.message.contains(&DEFAULT_MAX_THREADS.to_string()),
        "{}",
        e.message
    );
    assert!(e.message.contains("--max-threads"), "{}", e.message);
    let opts = CudaOptions { max_threads: 9 };
    assert_eq!(parse_cuda_with(src, &opts).unwrap().0.threads.len(), 9);
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
    // Assigned later, or with its address taken: still a register, so not an index.
    let e = error(
        "__device__ int a[2];
         __global__ void k() { int j = threadIdx.x; j = 1 - j; a[j] = 1; }
         void scopecheck_main() { k<<<1, 1>>>(); }",
    );
    assert!(e.message.contains("run time"), "{}", e.message);
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
            "__global__ void k() { S s; }",
            "k<<<1, 1>>>();",
            "a local struct",
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
        ("struct T { int *p; };", "", "a field of this type"),
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
        matches!(&host[0], InstrKind::Store { addr, order: Order::Release, scope: Scope::Sys, value: Operand::Imm(1) } if *addr == at(&p, "a[0]"))
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
