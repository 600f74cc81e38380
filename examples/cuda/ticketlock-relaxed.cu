// The ticket lock with a relaxed wait for its turn: nothing orders the critical sections,
// so the plain counter races and an increment can be lost.
__device__ cuda::atomic<unsigned int, cuda::thread_scope_device> next_ticket;
__device__ cuda::atomic<unsigned int, cuda::thread_scope_device> now_serving;

__device__ void lock_acquire() {
    unsigned int mine = next_ticket.fetch_add(1, cuda::memory_order_relaxed);
    while (now_serving.load(cuda::memory_order_relaxed) != mine) { }
}

__device__ void lock_release() {
    now_serving.fetch_add(1, cuda::memory_order_release);
}

__global__ void increment(int *counter) {
    lock_acquire();
    *counter = *counter + 1;
    lock_release();
}

void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    increment<<<2, 1>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == 2);
}
