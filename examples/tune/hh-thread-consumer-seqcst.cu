// Over-specified copy of examples/cuda/hh-thread-consumer.cu for `scopecheck tune`: the
// kernel's flag store is seq_cst where release is enough.
#include <cassert>
#include <thread>
#include <cuda_runtime.h>
#include <cuda/atomic>

__global__ void produce(int *payload, int *flag) {
    if (threadIdx.x == 0) {
        payload[0] = 42;
        cuda::atomic_ref<int, cuda::thread_scope_system> f(*flag);
        f.store(1, cuda::memory_order_seq_cst);
    }
}

void consume(int *payload, int *flag, int *seen) {
    cuda::atomic_ref<int, cuda::thread_scope_system> f(*flag);
    while (f.load(cuda::memory_order_acquire) == 0) {
        // spin: the kernel raises the flag
    }
    *seen = payload[0];
}

int main() {
    int *payload, *flag;
    cudaMallocManaged(&payload, sizeof(int));
    cudaMallocManaged(&flag, sizeof(int));
    payload[0] = 0;
    *flag = 0;
    int seen = -1;
    std::thread consumer(consume, payload, flag, &seen);
    produce<<<1, 2>>>(payload, flag);
    consumer.join();
    cudaDeviceSynchronize();
    assert(seen == 42);
    cudaFree(payload);
    cudaFree(flag);
    return 0;
}
