// Over-specified copy of examples/cuda/lx-warp-aggregated.cu for `scopecheck tune`: atomicAdd_system where the block-scope atomicAdd_block is enough.
// Warp-aggregated atomics (NVIDIA's "Optimized Filtering with Warp-Aggregated Atomics", the
// way stream compaction appends): the lanes vote on their predicate with __ballot_sync before
// the branch, the lanes that keep a value elect the lowest of them (__ffs), the leader
// reserves __popc(mask) slots with ONE atomicAdd, broadcasts the base with __shfl_sync over
// exactly those lanes, and each lane writes at base + its rank among them. Three lanes; the
// middle one's input is negative, so two values are kept.
//
// expect (src11): Ok, racy: false -- the reservation is one relaxed device-scope atomicAdd;
//   the base travels by shuffle among the lanes of the mask (lanes 0 and 2), each writes its
//   own slot (ranks 0 and 1), and the host reads after cudaDeviceSynchronize: count 2,
//   dst[0] = 5, dst[1] = 20.
// expect (ptx): Ok -- NVRTC's code (vote.sync.ballot, popc, brev + bfind.shiftamt for __ffs,
//   one atom.add, shfl.sync.idx with membermask 0b101) stores through `dst` plus an offset
//   computed from the shuffled base; by the pointer's provenance that store writes only `dst`,
//   so the leader's atom.add on `count` cannot wait for it (docs/explore.md, "Values and
//   addresses"; this was Unknown before that rule). One execution: count 2,
//   dst = {5, 20}.
__device__ int append_slot(int* ctr, unsigned int mask) {
    int lane = threadIdx.x % 32;
    int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd_system(ctr, __popc(mask));
    base = __shfl_sync(mask, base, leader);
    return base + __popc(mask & ((1u << lane) - 1));
}

__global__ void keep_positive(const int* src, int* dst, int* count) {
    int v = src[threadIdx.x];
    unsigned int keep = __ballot_sync(0x7, v > 0);
    if (v > 0) dst[append_slot(count, keep)] = v;
}

int main() {
    int *src, *dst, *count;
    cudaMallocManaged(&src, 3 * sizeof(int));
    cudaMallocManaged(&dst, 3 * sizeof(int));
    cudaMallocManaged(&count, sizeof(int));
    src[0] = 5;
    src[1] = -7;
    src[2] = 20;
    for (int i = 0; i < 3; i++) dst[i] = 0;
    *count = 0;
    keep_positive<<<1, 3>>>(src, dst, count);
    cudaDeviceSynchronize();
    if (*count != 2) return 1;
    if (dst[0] != 5 || dst[1] != 20) return 1;
    return 0;
}
