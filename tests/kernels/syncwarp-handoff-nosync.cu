//--blockDim=2 --gridDim=1
// The racy twin of syncwarp-handoff.cu: without __syncwarp() nothing orders lane 0's store
// of the slot before lane 1's load of it (lanes of one warp are independent threads since
// Volta, and are no more ordered than threads of different warps): a data race, in both views.
__global__ void handoff(const int *in, int *out) {
    __shared__ int slot;
    if (threadIdx.x == 0) {
        slot = in[0] + 1;
    }
    if (threadIdx.x == 1) {
        out[0] = slot;
    }
}
