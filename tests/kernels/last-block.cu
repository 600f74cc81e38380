//--blockDim=1 --gridDim=2
// The last-block pattern (threadFenceReduction): each block writes its partial sum, fences at
// device scope, and takes a ticket with atomicInc; the block that draws the last ticket reads
// every partial. The fence before the ticket and the RMW chain on the counter order each
// partial before the last block's reads: no race.
__global__ void reduce(const int *in, int *partial, unsigned int *ticket, int *out) {
    partial[blockIdx.x] = in[blockIdx.x] + 1;
    __threadfence();
    unsigned int t = atomicInc(ticket, gridDim.x);
    if (t == gridDim.x - 1) {
        __threadfence();
        out[0] = partial[0] + partial[1];
    }
}
