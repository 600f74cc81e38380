// Over-specified copy of examples/cuda/params-struct.cu for `scopecheck tune`: the producer's
// fence is __threadfence_system() where two blocks of one GPU need only device scope.
#include <cassert>
#include <cuda_runtime.h>

#define N 2

struct Params {
    int *data;
    int *flag;
    int *out;
    int n;
};

__device__ void publish(Params p) {
    for (int i = 0; i < N; ++i) {
        p.data[i] = i + 1;
    }
    __threadfence_system();
    atomicExch(p.flag, 1);
}

__device__ void consume(Params p) {
    while (atomicAdd(p.flag, 0) == 0) {
    }
    __threadfence();
    for (int i = 0; i < N; ++i) {
        p.out[i] = p.data[i];
    }
}

__global__ void handoff(Params p) {
    if (blockIdx.x == 0) {
        publish(p);
    } else {
        consume(p);
    }
}

int main() {
    Params p;
    p.n = N;
    cudaMalloc(&p.data, N * sizeof(int));
    cudaMalloc(&p.flag, sizeof(int));
    cudaMallocManaged(&p.out, N * sizeof(int));
    cudaMemset(p.data, 0, N * sizeof(int));
    cudaMemset(p.flag, 0, sizeof(int));
    handoff<<<2, 1>>>(p);
    cudaDeviceSynchronize();
    for (int i = 0; i < N; ++i) {
        assert(p.out[i] == i + 1);
    }
    return 0;
}
