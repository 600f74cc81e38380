// Over-specified copy of examples/cuda/grid-stride.cu for `scopecheck tune`: a device fence after each store, which the launch boundary already orders before the host reads.
// A grid-stride loop, as real kernels write it: each thread handles the elements
// i = global id, id + total threads, ... below n; n comes from the host. Two blocks of two
// threads cover 8 elements, two each. The host fills the input and checks every output in
// loops.
#include <cstdio>

constexpr int N = 8;

__global__ void twice(const int* in, int* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = 2 * in[i];
        __threadfence();
    }
}

int main() {
    int *in, *out;
    cudaMallocManaged(&in, N * sizeof(int));
    cudaMallocManaged(&out, N * sizeof(int));
    for (int i = 0; i < N; ++i) in[i] = i + 1;
    twice<<<2, 2>>>(in, out, N);
    cudaDeviceSynchronize();
    for (int i = 0; i < N; ++i) {
        if (out[i] != 2 * (i + 1)) {
            printf("out[%d] = %d\n", i, out[i]);
            return 1;
        }
    }
    return 0;
}
