//--blockDim=1 --gridDim=2
// The racy twin of last-block.cu: without the fences the relaxed ticket orders nothing, and
// the last block's read of the other block's partial races with its store.
__global__ void reduce(const int *in, int *partial, unsigned int *ticket, int *out) {
    partial[blockIdx.x] = in[blockIdx.x] + 1;
    unsigned int t = atomicInc(ticket, gridDim.x);
    if (t == gridDim.x - 1) {
        out[0] = partial[0] + partial[1];
    }
}
