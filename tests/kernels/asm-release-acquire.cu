//--blockDim=1 --gridDim=2
// Message passing between two blocks with the flag accessed only through inline PTX, as
// lock-free libraries do: block 0 stores the data plainly, then `st.release.gpu` of the flag;
// block 1 spins on `ld.acquire.gpu` of the flag until it reads 1, then loads the data. The
// acquire load reads from the release store (both gpu scope, the blocks share the gpu), so the
// release's prefix (the data store) happens before the acquire's suffix (the data load): no
// race, and out[0] is 42. The language-level front-end does not read `asm`: the PTX view alone.
__device__ __forceinline__ void store_release(unsigned *p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned load_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__global__ void handoff(int *data, unsigned *flag, int *out) {
    if (blockIdx.x == 0) {
        data[0] = 42;
        store_release(flag, 1);
    } else {
        while (load_acquire(flag) == 0) {
        }
        out[0] = data[0];
    }
}
