// Over-specified copy of examples/cuda/reduction.cu for `scopecheck tune`: atomicAdd_system on the ticket where device scope is enough.
// Two-stage reduction: each block publishes its partial sum, takes a ticket, and the block
// that takes the last ticket adds the partial sums. The fence before the ticket releases the
// partial sum; the fence after it (in the last block) acquires the others.
__device__ int partial[2];
__device__ unsigned int ticket = 0;

__global__ void reduce(int *out) {
    partial[blockIdx.x] = blockIdx.x + 1;
    __threadfence();
    unsigned int t = atomicAdd_system(&ticket, 1);
    if (t == gridDim.x - 1) {
        __threadfence();
        *out = partial[0] + partial[1];
    }
}

void scopecheck_main() {
    int *out;
    cudaMallocManaged(&out, sizeof(int));
    reduce<<<2, 1>>>(out);
    cudaDeviceSynchronize();
    assert(*out == 3);
}
