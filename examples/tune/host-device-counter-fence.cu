// Over-specified copy of examples/cuda/host-device-counter.cu for `scopecheck tune`: a system fence before the only memory operation of the kernel.
// A managed counter incremented by a kernel (`atomicAdd_system`) and, at the same time, by a
// host thread through `std::atomic<int>::fetch_add`. Both are system-scope atomic RMWs on
// managed memory, atomic with each other wherever concurrentManagedAccess = 1 (the ideal
// platform and h200-pcie): no update is lost. After the synchronization the host takes the
// count back to 0 with `compare_exchange_strong` (which succeeds only if it saw 2).
__global__ void bump(int *counter) {
    __threadfence_system();
    atomicAdd_system(counter, 1);
}

void scopecheck_main() {
    std::atomic<int> *counter;
    cudaMallocManaged(&counter, sizeof(std::atomic<int>));
    counter->store(0, std::memory_order_relaxed);
    bump<<<1, 1>>>((int *)counter);
    counter->fetch_add(1);
    cudaDeviceSynchronize();
    int expected = 2;
    bool ok = counter->compare_exchange_strong(expected, 0);
    assert(ok);
    assert(counter->load(std::memory_order_acquire) == 0);
}
