// Over-specified copy of examples/cuda/mailbox.cu for `scopecheck tune`: a seq_cst flag store where release is enough.
// A host-device mailbox through pinned mapped memory: the kernel writes the message and
// releases a system-scope flag; the host polls the flag with acquire loads while the kernel
// runs, then reads the message.
__global__ void send(int *data, cuda::atomic<int, cuda::thread_scope_system> *flag) {
    *data = 7;
    flag->store(1, cuda::memory_order_seq_cst);
}

void scopecheck_main() {
    int *h_data, *d_data;
    cuda::atomic<int, cuda::thread_scope_system> *h_flag, *d_flag;
    cudaHostAlloc(&h_data, sizeof(int), cudaHostAllocMapped);
    cudaHostAlloc(&h_flag, sizeof(int), cudaHostAllocMapped);
    cudaHostGetDevicePointer(&d_data, h_data, 0);
    cudaHostGetDevicePointer(&d_flag, h_flag, 0);
    send<<<1, 1>>>(d_data, d_flag);
    while (h_flag->load(cuda::memory_order_acquire) == 0) { }
    assert(*h_data == 7);
    cudaDeviceSynchronize();
}
