// Warp-aggregated atomic increment (NVIDIA's "Optimized Filtering with Warp-Aggregated
// Atomics", the pattern CUB/Thrust stream compaction uses): the active lanes elect a leader
// (__activemask + __ffs), the leader reserves __popc(mask) slots with ONE atomicAdd, the base
// is broadcast with __shfl_sync, and each lane takes base + its rank among the active lanes.
// Filter kernel: both inputs are positive, so both lanes append; one warp of two threads.
// The host checks the count and that the two kept values landed in distinct slots.
//
// expect (src11): Ok, racy: false -- the slots are reserved by a relaxed device-scope
//   atomicAdd (atomicity alone makes them distinct); the base travels through a register
//   shuffle, not memory; each lane stores to its own dst slot; the host reads after
//   cudaDeviceSynchronize. Under independent thread scheduling the lanes may not be
//   converged at __activemask: then each lane is its own leader and adds 1 -- still correct.
//   3 executions: converged (one atomicAdd of 2), or apart (two atomicAdds of 1, either order).
// expect (ptx): Ok -- as for lx-warp-aggregated.cu: NVRTC's code stores through `dst` plus
//   an offset computed from the shuffled base, which by the pointer's provenance writes only
//   `dst` (docs/explore.md, "Values and addresses"); the same 3 convergence choices as the
//   language view, each correct.
__device__ int atomic_agg_inc(int* ctr) {
    unsigned int mask = __activemask();
    int leader = __ffs(mask) - 1;
    int lane = threadIdx.x % 32;
    int base = 0;
    if (lane == leader) base = atomicAdd(ctr, __popc(mask));
    base = __shfl_sync(mask, base, leader);
    return base + __popc(mask & ((1u << lane) - 1));
}

__global__ void filter_positive(int* dst, int* nres, const int* src) {
    int i = threadIdx.x;
    if (src[i] > 0) dst[atomic_agg_inc(nres)] = src[i];
}

int main() {
    int *dst, *nres, *src;
    cudaMallocManaged(&dst, 2 * sizeof(int));
    cudaMallocManaged(&nres, sizeof(int));
    cudaMallocManaged(&src, 2 * sizeof(int));
    src[0] = 5;
    src[1] = 20;
    dst[0] = 0;
    dst[1] = 0;
    *nres = 0;
    filter_positive<<<1, 2>>>(dst, nres, src);
    cudaDeviceSynchronize();
    if (*nres != 2) return 1;
    if (dst[0] + dst[1] != 25 || dst[0] == dst[1]) return 1;
    return 0;
}
