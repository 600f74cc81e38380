// Over-specified copy of examples/cuda/device-counter.cu for `scopecheck tune`: the counter's fetch_add is seq_cst where relaxed is enough.
// The shared counter with device scope: both increments are atomic together, none is lost.
__global__ void count(int *counter) {
    cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);
    c.fetch_add(1, cuda::memory_order_seq_cst);
}

void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    count<<<2, 1>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == 2);
}
