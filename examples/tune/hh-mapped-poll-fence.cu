// Over-specified copy of examples/cuda/hh-mapped-poll.cu for `scopecheck tune`: a second system fence after the flag, with nothing after it to order.
// Zero-copy completion polling: the host allocates the input, the result and a "done" flag
// in pinned, mapped host memory (cudaHostAlloc(..., cudaHostAllocMapped)) and gets their
// device addresses with cudaHostGetDevicePointer. It fills the input, launches `reduce`
// and, without synchronizing, spins on the flag through a system-scope
// cuda::atomic_ref (acquire). The kernel sums the input into *result, fences at system
// scope (__threadfence_system) and raises the flag with atomicExch_system. After the flag
// is seen the host reads *result directly from the mapped memory and checks it; only then
// does it call cudaDeviceSynchronize.
//
// expect (src11): Ok, racy: false -- the device's system-scope fence before its
//   system-scope RMW on the flag, and the host's system-scope acquire load that reads 1,
//   synchronize (the host is inside system scope), so the *result store happens before the
//   host's load; the host's input stores happen before the launch.
// expect (ptx): Ok -- fence.sc.sys; atom.sys.exch on the device, ld.acquire.sys on the host:
//   a release pattern morally strong with the host at sys scope.
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
    __threadfence_system();
    atomicExch_system(done, 1);
    __threadfence_system();
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
