// A grid barrier between two blocks of two threads: each thread writes its value, the block
// meets at __syncthreads(), thread 0 of the block fences, arrives with atomicAdd and spins on
// a volatile read of the counter until both blocks arrived, fences again, and the block meets
// once more; then each thread reads a value the other block wrote.
__device__ int value[4];
__device__ volatile unsigned int arrived = 0;

__device__ void grid_sync() {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd((unsigned int *)&arrived, 1);
        while (arrived < gridDim.x) { }
        __threadfence();
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
