// Two blocks of two threads each count into a __shared__ word, once through a device-scope
// atomic_ref and once with atomicAdd_system, between two __syncthreads; thread 0 of each block
// stores the count, which the host checks: 2 threads x 2 adds = 4 per block. Right as written.
// Shared memory is per block, so the checker treats both atomics at block scope (a warning,
// once per statement); tune proposes writing them so.
#include <cuda/atomic>
__global__ void count(int *out) {
    __shared__ int hits;
    if (threadIdx.x == 0) hits = 0;
    __syncthreads();
    cuda::atomic_ref<int, cuda::thread_scope_device> h(hits);
    h.fetch_add(1, cuda::memory_order_relaxed);
    atomicAdd_system(&hits, 1);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = hits;
}

void scopecheck_main() {
    int *out;
    cudaMalloc(&out, 2 * sizeof(int));
    count<<<2, 2>>>(out);
    int h[2];
    cudaMemcpy(h, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
    assert(h[0] == 4 && h[1] == 4);
}
