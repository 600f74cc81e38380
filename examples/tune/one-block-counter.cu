// A counter every user of which is in one block, declared at device scope: block scope
// includes every thread that touches it, so `scopecheck tune` narrows the atomic_ref's scope.
__global__ void count(int *counter) {
    cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);
    c.fetch_add(1, cuda::memory_order_relaxed);
}

void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    count<<<1, 2>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == 2);
}
