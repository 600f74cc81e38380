// Broken twin of lx-cas64-max: the 64-bit maximum is updated with a plain read and a plain
// conditional write instead of the atomicCAS loop. Two blocks can both read 0, and the
// smaller candidate (0x1_0000_0005) can be written last, losing the larger one.
//
// expect (src11): No, racy: true -- the plain load and store of *mx in one block conflict
//   with the other block's, unordered by happens-before (a data race); one execution ends with
//   *mx == 0x100000005.
// expect (ptx): No -- plain ld/st.global.u64 with no atomicity: block 1 stores 0x200000003
//   after both read 0, then block 0 stores 0x100000005 (a lost update).
__device__ void racy_max_u64(unsigned long long* addr, unsigned long long val) {
    unsigned long long old = *addr;
    if (old < val) *addr = val;
}

__global__ void reduce_max(unsigned long long* mx, const unsigned long long* vals) {
    racy_max_u64(mx, vals[blockIdx.x]);
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
