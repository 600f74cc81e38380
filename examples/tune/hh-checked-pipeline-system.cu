// Over-specified copy of examples/cuda/hh-checked-pipeline.cu for `scopecheck tune`: __threadfence_system where device-scope fences are enough.
// A two-block producer/consumer pipeline written the way an application's main() is:
// a CUDA_CHECK macro around every runtime call, #define'd sizes, an input array built on
// the host in a for loop and copied in with cudaMemcpy, the output copied back and checked
// element by element with `if (out[i] != expected) return 1;`.
// Block 0 scales the input into `buf`, fences at device scope (__threadfence) and raises
// `flag` with atomicExch; block 1 awaits the flag with atomicAdd(flag, 0), fences, and
// writes buf[i] + OFFSET to `out`. `buf` is cleared with cudaMemset first.
//
// expect (src11): Ok, racy: false -- block 0's fence before its relaxed RMW on the flag and
//   block 1's fence after the RMW that reads 1 synchronize (fence-fence, both device scope,
//   both blocks inside it), so every buf[i] store happens before the load of it; the input
//   copy happens before the launch and the DeviceToHost copy waits for the kernel.
// expect (ptx): Ok -- fence.sc.gpu / atom.gpu / fence.sc.gpu is the PTX release-acquire
//   pattern through fences, morally strong at gpu scope.
// scopecheck (PTX view): Unknown -- the compiled await loop is not recognised as one: the
//   kernel's other branch (block 0's code) stores through `out`, whose address NVRTC computes
//   after the first branch, so it is not folded and may alias the flag; the loop is unrolled
//   and cut at --unroll N (no failing execution is found at --unroll 2, 4, 8).
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
        __threadfence_system();
        atomicExch(flag, 1);
    } else {
        // consumer
        while (atomicAdd(flag, 0) == 0) { }
        __threadfence_system();
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
