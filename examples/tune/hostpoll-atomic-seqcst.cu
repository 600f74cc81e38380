// Over-specified copy of examples/cuda/hostpoll-atomic.cu for `scopecheck tune`: a seq_cst flag store where release is enough.
// The host-polled flag through cuda::atomic_ref at system scope: the kernel releases the
// flag after writing the result, the host acquires it, so the result it reads is 42.
__global__ void work(int *result, int *flag) {
    *result = 42;
    cuda::atomic_ref<int, cuda::thread_scope_system> f(*flag);
    f.store(1, cuda::memory_order_seq_cst);
}

void scopecheck_main() {
    int *result, *flag;
    cudaMallocManaged(&result, sizeof(int));
    cudaMallocManaged(&flag, sizeof(int));
    work<<<1, 1>>>(result, flag);
    cuda::atomic_ref<int, cuda::thread_scope_system> f(*flag);
    while (f.load(cuda::memory_order_acquire) == 0) { }
    assert(*result == 42);
    cudaDeviceSynchronize();
}
