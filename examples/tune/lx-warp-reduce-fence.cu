// Over-specified copy of examples/cuda/lx-warp-reduce.cu for `scopecheck tune`: a block fence after the shuffles, which exchange registers, not memory.
// A warp reduction as CUB's WarpReduce and every "sum with shuffles" tutorial write it: each
// lane loads its element, then butterfly shuffles (__shfl_xor_sync with 2, then 1) add the
// partner lane's partial, so every lane ends with the total; lane 0 stores it. One warp of
// four threads (mask 0xf names exactly the lanes launched).
//
// expect (src11): Ok, racy: false -- the shuffles move registers only; the loads read what
//   the host wrote before the launch; only lane 0 stores, and the host reads after
//   cudaDeviceSynchronize.
// expect (ptx): Ok -- shfl.sync.bfly.b32 with c = 31 pairs lane l with l ^ b, which is
//   always one of the four lanes; the same sums.
__global__ void warp_sum(const int* in, int* out) {
    int lane = threadIdx.x % 32;
    int v = in[lane];
    for (int offset = 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xf, v, offset);
    __threadfence_block();
    if (lane == 0) *out = v;
}

int main() {
    int *in, *out;
    cudaMallocManaged(&in, 4 * sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    for (int i = 0; i < 4; i++) in[i] = i + 1;
    *out = 0;
    warp_sum<<<1, 4>>>(in, out);
    cudaDeviceSynchronize();
    if (*out != 10) return 1;
    return 0;
}
