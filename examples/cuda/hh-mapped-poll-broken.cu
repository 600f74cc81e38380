// hh-mapped-poll.cu with the device's fence at device scope only: __threadfence() instead of
// __threadfence_system() between the *result store and the system-scope atomicExch on the
// flag. The host, polling the mapped flag with a system-scope acquire load, is not inside
// device scope.
//
// expect (src11): No, racy: true -- a release fence synchronizes only with threads inside
//   its scope; the host is outside the device's scope, so reading flag == 1 orders nothing
//   and the host's plain *h_result load races with the device's plain store, possibly
//   reading the 0 the host stored before the launch.
// expect (ptx): No -- fence.sc.gpu is not morally strong with the host's ld.acquire.sys:
//   no release pattern reaches the host, the st to result may be seen after the flag.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda/atomic>

#define N 4

__global__ void reduce(const int *in, int *result, int *done) {
    int sum = 0;
    for (int i = 0; i < N; ++i) {
        sum += in[i];
    }
    *result = sum;
    __threadfence();
    atomicExch_system(done, 1);
}

int main() {
    int *h_in, *h_result, *h_done;
    int *d_in, *d_result, *d_done;
    cudaHostAlloc(&h_in, N * sizeof(int), cudaHostAllocMapped);
    cudaHostAlloc(&h_result, sizeof(int), cudaHostAllocMapped);
    cudaHostAlloc(&h_done, sizeof(int), cudaHostAllocMapped);
    cudaHostGetDevicePointer(&d_in, h_in, 0);
    cudaHostGetDevicePointer(&d_result, h_result, 0);
    cudaHostGetDevicePointer(&d_done, h_done, 0);

    for (int i = 0; i < N; ++i) {
        h_in[i] = i + 1;
    }
    *h_result = 0;
    *h_done = 0;

    reduce<<<1, 1>>>(d_in, d_result, d_done);

    // Poll the completion flag while the kernel runs.
    cuda::atomic_ref<int, cuda::thread_scope_system> done(*h_done);
    while (done.load(cuda::memory_order_acquire) == 0) { }

    if (*h_result != 10) {
        fprintf(stderr, "result %d, expected 10\n", *h_result);
        return 1;
    }
    printf("ok\n");

    cudaDeviceSynchronize();
    cudaFreeHost(h_in);
    cudaFreeHost(h_result);
    cudaFreeHost(h_done);
    return 0;
}
