// hh-thread-consumer.cu with the kernel's flag store relaxed: the consumer thread may see
// the flag and still read the stale payload.
//
// expect (src11): No, racy: true -- a relaxed store is no release: nothing orders the
//   payload store before the consumer's payload load, which race; `seen` may be 0.
// expect (ptx): No, racy: true -- st.relaxed.sys has no release pattern before it, so the
//   payload store need not be observed before the flag.
#include <cassert>
#include <thread>
#include <cuda_runtime.h>
#include <cuda/atomic>

__global__ void produce(int *payload, int *flag) {
    if (threadIdx.x == 0) {
        payload[0] = 42;
        cuda::atomic_ref<int, cuda::thread_scope_system> f(*flag);
        f.store(1, cuda::memory_order_relaxed);
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
