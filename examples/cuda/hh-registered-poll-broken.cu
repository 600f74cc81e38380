// hh-registered-poll.cu with the device's fence at device scope only: __threadfence() instead
// of __threadfence_system() between the result store and the system-scope atomicExch on the
// flag. The host, polling the registered flag with a system-scope acquire load, is not inside
// device scope.
//
// expect (src11): No, racy: true -- a release fence synchronizes only with threads inside its
//   scope; the host is outside the device's scope, so reading the flag as 1 orders nothing and
//   the host's plain load of the result races with the device's plain store, possibly reading
//   the 0 the host's initialiser stored.
// expect (ptx): No -- fence.sc.gpu is not morally strong with the host's ld.acquire.sys: no
//   release pattern reaches the host, and the result may be seen after the flag.
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
