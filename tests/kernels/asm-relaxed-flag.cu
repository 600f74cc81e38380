//--blockDim=1 --gridDim=2
// The racy twin of asm-release-acquire.cu: the flag goes through `st.relaxed.gpu` and
// `ld.relaxed.gpu`. Relaxed (strong) accesses to the flag do not race with each other, but
// they order nothing else: block 1's plain load of the data is not ordered after block 0's
// plain store of it, a data race on data[0] (PTX view alone: `asm`).
__device__ __forceinline__ void store_relaxed(unsigned *p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned load_relaxed(const unsigned *p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__global__ void handoff(int *data, unsigned *flag, int *out) {
    if (blockIdx.x == 0) {
        data[0] = 42;
        store_relaxed(flag, 1);
    } else {
        while (load_relaxed(flag) == 0) {
        }
        out[0] = data[0];
    }
}
