//! NVRTC itself, found where the README's test command installs it. These tests fail (they do
//! not skip) when NVRTC is missing: the test command installs it, and CI must have it.

use scopecheck_nvrtc::{Nvrtc, NvrtcError};

fn nvrtc() -> Nvrtc {
    Nvrtc::find().unwrap_or_else(|e| panic!("{e}"))
}

/// A libcu++ release store and acquire load at device scope compile to `st.release.gpu` and
/// `ld.acquire.gpu` (PTX ISA, memory consistency model: the scoped C++ orders map one to one),
/// and `atomicAdd_block` to a CTA-scope `atom`.
#[test]
fn libcu_atomics_compile_to_scoped_ptx() {
    let src = r#"
#include <cuda/atomic>
__global__ void produce(int* data, int* flag) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    data[threadIdx.x] = 42;
    f.store(1, cuda::memory_order_release);
}
__global__ void consume(int* data, int* flag, int* out) {
    cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
    while (f.load(cuda::memory_order_acquire) == 0) {}
    atomicAdd_block(out, data[0]);
}
"#;
    let out = nvrtc()
        .compile(src, "k.cu", "compute_90", &[])
        .unwrap_or_else(|e| panic!("{e}"));
    for needle in [
        ".entry _Z7producePiS_",
        "st.release.gpu",
        "ld.acquire.gpu",
        "atom.global.cta.add",
        ".loc",
    ] {
        assert!(out.ptx.contains(needle), "no `{needle}` in:\n{}", out.ptx);
    }
}

/// A compile error comes back with NVRTC's log and the line it names.
#[test]
fn errors_name_their_line() {
    let src = "__global__ void k(int* p) {\n  *p = 1;\n  *q = 2;\n}\n";
    match nvrtc().compile(src, "bad.cu", "compute_90", &[]) {
        Err(NvrtcError::Compile { diagnostics, log }) => {
            assert!(
                diagnostics.iter().any(|d| d.error && d.line == 3),
                "{diagnostics:?}\n{log}"
            );
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}
