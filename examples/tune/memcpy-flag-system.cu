// Over-specified copy of examples/cuda/memcpy-flag.cu for `scopecheck tune`: atomicExch_system where device scope is enough.
// Message passing through cudaMalloc memory, written as an ordinary CUDA program: `main`
// clears the buffers with cudaMemset, launches a producer and a consumer on two streams,
// synchronizes, copies the result back with cudaMemcpy and fails with `return 1` when it is
// not 42.
#include <cstdio>

__global__ void produce(int *data, int *flag) {
    data[0] = 42;
    __threadfence();
    atomicExch_system(flag, 1);
}

__global__ void consume(int *data, int *flag, int *out) {
    while (atomicAdd(flag, 0) == 0) { }
    __threadfence();
    *out = data[0];
}

int main() {
    int *data, *flag, *out;
    cudaMalloc(&data, sizeof(int));
    cudaMalloc(&flag, sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaMemset(data, 0, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    cudaMemset(out, 0xff, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    consume<<<1, 1, 0, a>>>(data, flag, out);
    produce<<<1, 1, 0, b>>>(data, flag);
    cudaDeviceSynchronize();
    int h = 0;
    cudaMemcpy(&h, out, sizeof(int), cudaMemcpyDeviceToHost);
    if (h != 42) {
        fprintf(stderr, "got %d, expected 42\n", h);
        return 1;
    }
    printf("ok\n");
    cudaFree(data);
    cudaFree(flag);
    cudaFree(out);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    return 0;
}
