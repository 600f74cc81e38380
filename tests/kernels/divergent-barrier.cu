//--blockDim=2 --gridDim=1
// Barrier divergence: only thread 0 reaches __syncthreads(), so it waits for a thread that
// never comes: the kernel hangs at line 7 (reported as barrier divergence).
__global__ void stuck(int *a) {
    if (threadIdx.x == 0) {
        a[0] = 1;
        __syncthreads();
    }
}
