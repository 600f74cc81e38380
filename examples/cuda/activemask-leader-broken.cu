// A per-warp "someone has work" flag elected with __activemask(), the way code that assumes
// lockstep warps does it: the lanes that take the branch read the active mask, and its lowest
// lane counts the warp once. One warp of three threads; lanes 0 and 2 have work, lane 1 not.
// The host expects the warp to be counted once.
//
// expect (src11): No, racy: false -- under independent thread scheduling which lanes run
//   __activemask() together is the scheduler's choice (CUDA C++ Programming Guide, "Warp Vote
//   Functions": convergent threads are not guaranteed to stay convergent). Converged, lanes 0
//   and 2 both read mask 0b101 and only lane 0 adds: count 1. Not converged, lane 0 reads
//   0b001 and lane 2 reads 0b100, both are leaders and the count is 2, in either order of the
//   two atomicAdds: 3 executions, 2 of them failing. The fix is to vote before the branch
//   (`__ballot_sync(0xffffffff, v > 0)`, as examples/cuda/lx-warp-aggregated.cu does).
// expect (ptx): No -- NVRTC's activemask.b32 has the same choice; the count is a relaxed
//   atom.add, so the failing executions are the same.
__global__ void flag_work(const int* src, int* warps_with_work) {
    int v = src[threadIdx.x];
    if (v > 0) {
        unsigned int mask = __activemask();
        int lane = threadIdx.x % 32;
        if (lane == __ffs(mask) - 1) atomicAdd(warps_with_work, 1);
    }
}

int main() {
    int *src, *n;
    cudaMallocManaged(&src, 3 * sizeof(int));
    cudaMallocManaged(&n, sizeof(int));
    src[0] = 5;
    src[1] = -7;
    src[2] = 20;
    *n = 0;
    flag_work<<<1, 3>>>(src, n);
    cudaDeviceSynchronize();
    if (*n != 1) return 1;
    return 0;
}
