// Over-specified copy of examples/cuda/seed1.cu for `scopecheck tune`: atomicAdd_system in the consumer's poll where device scope is enough.
__device__ int flag = 0;
__device__ float payload;

__global__ void produce(float v) {
    payload = v;
    __threadfence();
    atomicExch(&flag, 1);
}

__global__ void consume(float *out) {
    while (atomicAdd_system(&flag, 0) == 0) { }
    __threadfence();
    *out = payload;
}

void scopecheck_main() {
    float *out;
    cudaMallocManaged(&out, sizeof(float));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    consume<<<1, 1, 0, a>>>(out);
    produce<<<1, 1, 0, b>>>(42.0f);
    cudaDeviceSynchronize();
    assert(*out == 42.0f);
}
