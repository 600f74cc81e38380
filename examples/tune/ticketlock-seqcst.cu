// Over-specified copy of examples/cuda/ticketlock.cu for `scopecheck tune`: a seq_cst ticket fetch_add where relaxed is enough.
// A ticket lock guarding a plain counter, one thread in each of two blocks: each thread
// takes a ticket, waits until it is served (acquire), increments the counter and serves the
// next ticket (release).
__device__ cuda::atomic<unsigned int, cuda::thread_scope_device> next_ticket;
__device__ cuda::atomic<unsigned int, cuda::thread_scope_device> now_serving;

__device__ void lock_acquire() {
    unsigned int mine = next_ticket.fetch_add(1, cuda::memory_order_seq_cst);
    while (now_serving.load(cuda::memory_order_acquire) != mine) { }
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
