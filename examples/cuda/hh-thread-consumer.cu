// A host-device handoff with a consumer thread, as the second seed writes it: the kernel
// publishes a payload and then raises a system-scope flag with a release store; a host
// std::thread, started before the launch, spins on the flag with acquire loads, then reads
// the payload into `seen` (a host local whose address it was given). main() joins the
// thread and checks what it saw. Payload and flag live in managed memory, which the host can
// reach while the kernel runs.
//
// expect (src11): Ok, racy: false -- the release store of the flag and the consumer's
//   acquire load that reads 1 are both at system scope, which includes the host: they
//   synchronize, so the payload store happens before the consumer's payload load; join()
//   orders the consumer's store to `seen` before main's read of it.
// expect (ptx): Ok -- st.release.sys on the device, ld.acquire.sys on the host: morally
//   strong at sys scope, so the payload is observed.
#include <cassert>
#include <thread>
#include <cuda_runtime.h>
#include <cuda/atomic>

__global__ void produce(int *payload, int *flag) {
    if (threadIdx.x == 0) {
        payload[0] = 42;
        cuda::atomic_ref<int, cuda::thread_scope_system> f(*flag);
        f.store(1, cuda::memory_order_release);
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
