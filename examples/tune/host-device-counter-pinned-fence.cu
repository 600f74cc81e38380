// Over-specified copy of examples/cuda/host-device-counter-pinned.cu for `scopecheck tune`: a system fence before the only memory operation of the kernel.
// The same counter in pinned host memory mapped into the device (cudaHostAlloc +
// cudaHostGetDevicePointer): a host RMW and a device RMW on host memory are atomic with each
// other only with hostNativeAtomicSupported = 1. The ideal platform has it (no update is
// lost); `--platform h200-pcie` (x86 host over PCIe) does not, and an increment can be lost. After the synchronization the host takes the
// count back to 0 with `compare_exchange_strong` (which succeeds only if it saw 2).
__global__ void bump(int *counter) {
    __threadfence_system();
    atomicAdd_system(counter, 1);
}

void scopecheck_main() {
    std::atomic<int> *counter;
    int *d_counter;
    cudaHostAlloc(&counter, sizeof(std::atomic<int>), cudaHostAllocMapped);
    cudaHostGetDevicePointer(&d_counter, counter, 0);
    counter->store(0, std::memory_order_relaxed);
    bump<<<1, 1>>>(d_counter);
    counter->fetch_add(1);
    cudaDeviceSynchronize();
    int expected = 2;
    bool ok = counter->compare_exchange_strong(expected, 0);
    assert(ok);
    assert(counter->load(std::memory_order_acquire) == 0);
}
