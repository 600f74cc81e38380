// Kernel arguments bundled in a struct passed by value, as real code does: the host fills a
// `Params` local field by field (cudaMalloc(&p.data, ...), p.n = N), and the kernel and its
// device helpers take it by value. Block 0 fills the payload and publishes it with a
// device-scope fence and flag; block 1 awaits the flag, fences, and copies the payload out.
//
// expect (src11): Ok, racy: false -- fence-RMW ... RMW-fence at device scope between two
//   blocks: the fences synchronize through the flag, so the copies read what block 0 wrote.
// expect (ptx): Ok -- NVRTC reads the struct parameter with ld.param at the fields' offsets
//   (data at 0, flag at 8, n at 16); fence.sc.gpu on both sides gives the same guarantee.
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
    __threadfence();
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
