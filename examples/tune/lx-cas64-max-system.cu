// Over-specified copy of examples/cuda/lx-cas64-max.cu for `scopecheck tune`: atomicCAS_system where device scope is enough.
// Lock-free 64-bit maximum with an atomicCAS loop on `unsigned long long` (the CUDA
// Programming Guide's pattern for atomics the hardware lacks, as in CUB/Thrust helpers):
// each of two blocks reads the current value with an atomic (atomicAdd of 0), and while its
// candidate is larger, tries to CAS it in, retrying with the value the failed CAS returned.
// The candidates do not fit in 32 bits (0x1_0000_0005 and 0x2_0000_0003), so a 32-bit
// truncation anywhere would show. The host checks the final value is the larger one.
//
// expect (src11): Ok, racy: false -- every access to *mx from the kernels is a device-scope
//   atomic RMW; the host's initial store precedes the launch and its read follows
//   cudaDeviceSynchronize. A CAS only replaces a value smaller than its candidate and a
//   failed CAS retries with the fresh value, so the maximum always ends in *mx.
// expect (ptx): Ok -- atom.global.cas.b64 / atom.global.add.u64 are atomic RMWs (relaxed,
//   gpu scope); atomicity alone gives the result, no ordering is needed.
__device__ unsigned long long atomic_max_u64(unsigned long long* addr, unsigned long long val) {
    unsigned long long old = atomicAdd(addr, 0ULL);
    while (old < val) {
        unsigned long long assumed = old;
        old = atomicCAS_system(addr, assumed, val);
        if (old == assumed) break;
    }
    return old;
}

__global__ void reduce_max(unsigned long long* mx, const unsigned long long* vals) {
    atomic_max_u64(mx, vals[blockIdx.x]);
}

int main() {
    unsigned long long *mx, *vals;
    cudaMallocManaged(&mx, sizeof(unsigned long long));
    cudaMallocManaged(&vals, 2 * sizeof(unsigned long long));
    *mx = 0;
    vals[0] = 0x100000005ULL;
    vals[1] = 0x200000003ULL;
    reduce_max<<<2, 1>>>(mx, vals);
    cudaDeviceSynchronize();
    if (*mx != 0x200000003ULL) return 1;
    return 0;
}
