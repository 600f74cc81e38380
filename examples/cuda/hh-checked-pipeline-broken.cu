// hh-checked-pipeline.cu with one synchronization detail missing: the producer (block 0)
// has no __threadfence between its buf[i] stores and the atomicExch that raises the flag.
// Everything else -- CUDA_CHECK, the host input loop, the cudaMemcpy in and out, the
// consumer's await and fence, the element-by-element check -- is the same.
//
// expect (src11): No, racy: true -- atomicExch is a relaxed RMW: without a release fence
//   before it, block 1's fence after reading flag == 1 synchronizes with nothing, so the
//   plain buf[i] loads race with block 0's plain stores and may read the 0 cudaMemset left
//   (out[i] == OFFSET != expected).
// expect (ptx): No -- st.global then atom.exch with no fence between: the stores are not in
//   causality order before the consumer's membar.gl / loads; a stale buf[i] == 0 is allowed.
// scopecheck (PTX view): No, found among the explored executions although the await loop is
//   cut at --unroll 2 (the same unrecognised await loop as in hh-checked-pipeline.cu).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_), \
                    __FILE__, __LINE__);                                        \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define N 4
#define SCALE 3
#define OFFSET 1
#define NUM_BLOCKS 2
#define THREADS_PER_BLOCK 1

__global__ void pipeline(const int *in, int *buf, int *flag, int *out, int n) {
    if (blockIdx.x == 0) {
        // producer
        for (int i = 0; i < N; ++i) {
            buf[i] = in[i] * SCALE;
        }
        atomicExch(flag, 1);
    } else {
        // consumer
        while (atomicAdd(flag, 0) == 0) { }
        __threadfence();
        for (int i = 0; i < N; ++i) {
            out[i] = buf[i] + OFFSET;
        }
    }
}

int main() {
    int h_in[N];
    int h_out[N];
    for (int i = 0; i < N; ++i) {
        h_in[i] = i + 1;
    }

    int *d_in, *d_buf, *d_flag, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, N * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_buf, N * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_flag, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, N * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, h_in, N * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_buf, 0, N * sizeof(int)));
    CUDA_CHECK(cudaMemset(d_flag, 0, sizeof(int)));

    pipeline<<<NUM_BLOCKS, THREADS_PER_BLOCK>>>(d_in, d_buf, d_flag, d_out, N);
    CUDA_CHECK(cudaGetLastError());
    // Synchronizing calls are checked by hand: scopecheck refuses a synchronization inside
    // CUDA_CHECK's do { ... } while (0) ("a synchronization inside a loop or `if`").
    cudaError_t sync_err = cudaDeviceSynchronize();
    if (sync_err != cudaSuccess) {
        fprintf(stderr, "kernel failed: %s\n", cudaGetErrorString(sync_err));
        return 1;
    }

    cudaError_t copy_err = cudaMemcpy(h_out, d_out, N * sizeof(int), cudaMemcpyDeviceToHost);
    if (copy_err != cudaSuccess) {
        fprintf(stderr, "copy failed: %s\n", cudaGetErrorString(copy_err));
        return 1;
    }
    for (int i = 0; i < N; ++i) {
        int expected = (i + 1) * SCALE + OFFSET;
        if (h_out[i] != expected) {
            fprintf(stderr, "mismatch at %d: got %d, expected %d\n", i, h_out[i], expected);
            return 1;
        }
    }
    printf("PASSED\n");

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_buf));
    CUDA_CHECK(cudaFree(d_flag));
    CUDA_CHECK(cudaFree(d_out));
    return 0;
}
