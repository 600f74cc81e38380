// Over-specified copy of examples/cuda/ringqueue.cu for `scopecheck tune`: seq_cst index loads where acquire is enough.
// A single-producer, single-consumer ring queue of two slots carrying three items. The
// producer writes a slot, then publishes the new head index with a release store; the
// consumer acquires the head before reading the slot, then releases the tail so the producer
// may reuse the slot (the third item goes into slot 0 again).
__device__ int slot[2];
__device__ cuda::atomic<int, cuda::thread_scope_device> head;
__device__ cuda::atomic<int, cuda::thread_scope_device> tail;

__device__ void push(int i, int v) {
    while (i - tail.load(cuda::memory_order_seq_cst) >= 2) { }
    slot[i % 2] = v;
    head.store(i + 1, cuda::memory_order_release);
}

__device__ int pop(int i) {
    while (head.load(cuda::memory_order_seq_cst) <= i) { }
    int v = slot[i % 2];
    tail.store(i + 1, cuda::memory_order_release);
    return v;
}

__global__ void producer() {
    push(0, 10);
    push(1, 20);
    push(2, 30);
}

__global__ void consumer(int *out) {
    out[0] = pop(0);
    out[1] = pop(1);
    out[2] = pop(2);
}

void scopecheck_main() {
    int *out;
    cudaMallocManaged(&out, 3 * sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    consumer<<<1, 1, 0, a>>>(out);
    producer<<<1, 1, 0, b>>>();
    cudaDeviceSynchronize();
    assert(out[0] == 10 && out[1] == 20 && out[2] == 30);
}
