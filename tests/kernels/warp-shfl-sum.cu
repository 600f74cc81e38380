//--blockDim=4 --gridDim=1
// A butterfly warp reduction with __shfl_xor_sync over the four lanes of one block: lane l
// exchanges with lane l ^ 2, then l ^ 1 (always among the four lanes the mask 0xf names), so
// every lane ends with the total and lane 0 writes it. Shuffles exchange registers, not memory;
// the only store is lane 0's to out[0] and each lane reads only its own in[l]: no race.
__global__ void warp_sum(const int *in, int *out) {
    int v = in[threadIdx.x];
    for (int mask = 2; mask > 0; mask /= 2) {
        v += __shfl_xor_sync(0xf, v, mask);
    }
    if (threadIdx.x == 0) {
        out[0] = v;
    }
}
