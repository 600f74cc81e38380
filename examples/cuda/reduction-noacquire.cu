// The two-stage reduction without the acquire fence after the ticket in the last block.
__device__ int partial[2];
__device__ unsigned int ticket = 0;

__global__ void reduce(int *out) {
    partial[blockIdx.x] = blockIdx.x + 1;
    __threadfence();
    unsigned int t = atomicAdd(&ticket, 1);
    if (t == gridDim.x - 1) {
        // missing: __threadfence(); the last block may read a stale partial sum
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
