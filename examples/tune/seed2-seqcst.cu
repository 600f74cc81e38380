// Over-specified copy of examples/cuda/seed2.cu for `scopecheck tune`: a seq_cst flag store where release is enough.
#include <cuda/atomic>

/* Producer on the device publishes a payload, then a flag.
   The release store orders the payload write before the flag write,
   and the system scope makes the flag visible to the host. */
__global__ void produce(int *payload, cuda::atomic<int, cuda::thread_scope_system> *flag)
{
    if (threadIdx.x == 0) {
        payload[0] = 42;
        /* Release: earlier writes become visible before this store does. */
        flag->store(1, cuda::std::memory_order_seq_cst);
    }
}

/* Host side. The flag must live in memory the host can reach: managed,
   host-mapped, or a mapped device window. Acquire pairs with the release
   above, so the payload read cannot be reordered before the flag read. */
void consume(int *payload, cuda::atomic<int, cuda::thread_scope_system> *flag)
{
    while (flag->load(cuda::std::memory_order_acquire) == 0) {
        /* spin; on real hardware this should back off or use a
           blocking wait so the core is not starved */
    }
    int v = payload[0];   /* guaranteed to be 42 */
    (void)v;
    assert(v == 42);
}

void scopecheck_main() {
    int *payload;
    cuda::atomic<int, cuda::thread_scope_system> *flag;
    cudaMallocManaged(&payload, sizeof(int));
    cudaMallocManaged(&flag, sizeof(int));
    produce<<<1, 2>>>(payload, flag);
    consume(payload, flag);
    cudaDeviceSynchronize();
}
