// grid-stride.cu with the stride of one block instead of the grid (`i += blockDim.x`): the
// blocks' ranges overlap, so elements 2..7 are written by two threads of different blocks.
// They write the same value, so every check passes, but the plain writes race.
#include <cstdio>

constexpr int N = 8;

__global__ void twice(const int* in, int* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x) {
        out[i] = 2 * in[i];
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
