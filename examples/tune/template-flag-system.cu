// Over-specified copy of examples/cuda/template-flag.cu for `scopecheck tune`: atomicExch_system on the flag where device scope is enough.
// Message passing through a flag, written as a library would: kernels templated on the
// buffer size, a device helper template, launched on two streams. The language-level
// front-end does not read templates, so the file is checked as NVRTC compiles it (the PTX
// view): `fill` stores 1..N, fences at device scope and sets the flag with an atomic
// exchange; `sum` awaits the flag with `atomicAdd(flag, 0)`, fences, and adds the buffer up.
#include <cuda/atomic>

template <typename T>
__device__ T total(const T* data, int n) {
    T s = 0;
    for (int i = 0; i < n; ++i) s += data[i];
    return s;
}

template <int N>
__global__ void fill(int* data, int* flag) {
    for (int i = 0; i < N; ++i) data[i] = i + 1;
    __threadfence();
    atomicExch_system(flag, 1);
}

template <int N>
__global__ void sum(const int* data, int* flag, int* out) {
    while (atomicAdd(flag, 0) == 0) { }
    __threadfence();
    *out = total(data, N);
}

int main() {
    int *data, *flag, *out;
    cudaMalloc(&data, 4 * sizeof(int));
    cudaMalloc(&flag, sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    sum<4><<<1, 1, 0, b>>>(data, flag, out);
    fill<4><<<1, 1, 0, a>>>(data, flag);
    cudaDeviceSynchronize();
    if (*out != 10) return 1;
    return 0;
}
