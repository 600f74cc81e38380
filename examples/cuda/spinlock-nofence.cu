// The spinlock without fences: the relaxed atomics order nothing, so the plain counter races.
__device__ int lock = 0;

__global__ void increment(int *counter) {
    while (atomicCAS(&lock, 0, 1) != 0) { }
    *counter = *counter + 1;
    atomicExch(&lock, 0);
}

void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    increment<<<2, 1>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == 2);
}
