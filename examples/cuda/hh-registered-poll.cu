// Zero-copy polling on memory the host already had: ordinary host arrays are page-locked and
// mapped with cudaHostRegister(..., cudaHostRegisterMapped), their device addresses taken with
// cudaHostGetDevicePointer. The host fills the input, launches `reduce` and, without
// synchronizing, spins on the flag through a system-scope cuda::atomic_ref (acquire). The
// kernel sums the input into the result, fences at system scope and raises the flag with
// atomicExch_system; the host then reads the result directly and checks it.
//
// expect (src11): Ok, racy: false -- registered memory is pinned mapped host memory, which
//   kernels may access; the device's system-scope fence before its system-scope RMW on the
//   flag and the host's system-scope acquire load that reads 1 synchronize (the host is inside
//   system scope), so the result store happens before the host's load; the host's input
//   stores happen before the launch.
// expect (ptx): Ok -- fence.sc.sys; atom.sys.exch on the device, ld.acquire.sys on the host.
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
}

int main() {
    int h_in[N];
    int h_result[1] = {0};
    int h_done[1] = {0};
    cudaHostRegister(h_in, sizeof(h_in), cudaHostRegisterMapped);
    cudaHostRegister(h_result, sizeof(h_result), cudaHostRegisterMapped);
    cudaHostRegister(h_done, sizeof(h_done), cudaHostRegisterMapped);
    int *d_in, *d_result, *d_done;
    cudaHostGetDevicePointer(&d_in, h_in, 0);
    cudaHostGetDevicePointer(&d_result, h_result, 0);
    cudaHostGetDevicePointer(&d_done, h_done, 0);
    for (int i = 0; i < N; ++i) {
        h_in[i] = i + 1;
    }

    reduce<<<1, 1>>>(d_in, d_result, d_done);

    cuda::atomic_ref<int, cuda::thread_scope_system> done(h_done[0]);
    while (done.load(cuda::memory_order_acquire) == 0) { }
    if (h_result[0] != 10) return 1;

    cudaDeviceSynchronize();
    cudaHostUnregister(h_in);
    cudaHostUnregister(h_result);
    cudaHostUnregister(h_done);
    return 0;
}
