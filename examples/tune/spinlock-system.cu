// Over-specified copy of examples/cuda/spinlock.cu for `scopecheck tune`: atomicCAS_system on the lock where device scope is enough.
// A spinlock from atomicCAS / atomicExch guarding a plain counter, one thread in each of two
// blocks. The fences after acquiring and before releasing the lock order the critical section.
__device__ int lock = 0;

__global__ void increment(int *counter) {
    while (atomicCAS_system(&lock, 0, 1) != 0) { }
    __threadfence();
    *counter = *counter + 1;
    __threadfence();
    atomicExch(&lock, 0);
}

void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    increment<<<2, 1>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == 2);
}
