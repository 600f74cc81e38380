// The grid barrier without the fence after the spin: thread 0 sees every block arrived, but
// nothing orders the other block's writes before its block's reads, so a read can miss them.
__device__ int value[4];
__device__ volatile unsigned int arrived = 0;

__device__ void grid_sync() {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd((unsigned int *)&arrived, 1);
        while (arrived < gridDim.x) { }
    }
    __syncthreads();
}

__global__ void exchange(int *out) {
    int me = blockIdx.x * blockDim.x + threadIdx.x;
    value[me] = me + 1;
    grid_sync();
    out[me] = value[(me + 2) % 4];
}

void scopecheck_main() {
    int *out;
    cudaMallocManaged(&out, 4 * sizeof(int));
    exchange<<<2, 2>>>(out);
    cudaDeviceSynchronize();
    assert(out[0] == 3 && out[1] == 4 && out[2] == 1 && out[3] == 2);
}
