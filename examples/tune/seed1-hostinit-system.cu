// Over-specified copy of examples/cuda/seed1-hostinit.cu for `scopecheck tune`: atomicAdd_system in the consumer's poll where device scope is enough.
__managed__ int flag;
__device__ int payload;

__global__ void produce() {
    payload = 42;
    __threadfence();
    atomicExch(&flag, 1);
}

__global__ void consume(int *out) {
    while (atomicAdd_system(&flag, 0) == 0) { }
    __threadfence();
    *out = payload;
}

void scopecheck_main() {
    int *out;
    cudaMallocManaged(&out, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    flag = 0;
    consume<<<1, 1, 0, a>>>(out);
    produce<<<1, 1, 0, b>>>();
    cudaDeviceSynchronize();
    assert(*out == 42);
}
