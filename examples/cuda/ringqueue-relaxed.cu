// The ring queue with a relaxed load of the head by the consumer: seeing the new head does
// not make the slot written before it visible, so the consumer can read a slot before the
// producer filled it.
__device__ int slot[2];
__device__ cuda::atomic<int, cuda::thread_scope_device> head;
__device__ cuda::atomic<int, cuda::thread_scope_device> tail;

__device__ void push(int i, int v) {
    while (i - tail.load(cuda::memory_order_acquire) >= 2) { }
    slot[i % 2] = v;
    head.store(i + 1, cuda::memory_order_release);
}

__device__ int pop(int i) {
    while (head.load(cuda::memory_order_relaxed) <= i) { }
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
