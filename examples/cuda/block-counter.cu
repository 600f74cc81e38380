// A counter shared by two blocks through cuda::atomic_ref with block scope: the two
// increments are not in each other's scope, so they are not atomic together and one can be
// lost (a heterogeneous race).
__global__ void count(int *counter) {
    cuda::atomic_ref<int, cuda::thread_scope_block> c(*counter);
    c.fetch_add(1, cuda::memory_order_relaxed);
}

void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    count<<<2, 1>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == 2);
}
