// 4 threads each add 1 to each of 10 device counters (relaxed, device scope, result unused);
// the host checks every counter after the kernel.
__global__ void count(int *counters) {
    for (int k = 0; k < 10; k++) {
        cuda::atomic_ref<int, cuda::thread_scope_device> c(counters[k]);
        c.fetch_add(1, cuda::memory_order_relaxed);
    }
}

void scopecheck_main() {
    int *counters;
    cudaMalloc(&counters, 10 * sizeof(int));
    cudaMemset(counters, 0, 10 * sizeof(int));
    count<<<4, 1>>>(counters);
    int host[10];
    cudaMemcpy(host, counters, 10 * sizeof(int), cudaMemcpyDeviceToHost);
    for (int k = 0; k < 10; k++) assert(host[k] == 4);
}
