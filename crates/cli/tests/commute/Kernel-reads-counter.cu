// Two blocks add 1 to a counter; a second kernel, launched after, reads it, and so does a
// block of the first kernel: that read may see 0, 1 or 2, so the reduction must not apply.
__global__ void count(int *counter, int *seen) {
    cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);
    if (blockIdx.x < 2) {
        c.fetch_add(1, cuda::memory_order_relaxed);
    } else {
        *seen = c.load(cuda::memory_order_relaxed);
    }
}

void scopecheck_main() {
    int *counter, *seen;
    cudaMallocManaged(&counter, sizeof(int));
    cudaMallocManaged(&seen, sizeof(int));
    *counter = 0;
    count<<<3, 1>>>(counter, seen);
    cudaDeviceSynchronize();
    assert(*counter == 2);
    assert(*seen == 2);
}
