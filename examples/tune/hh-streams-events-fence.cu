// Over-specified copy of examples/cuda/hh-streams-events.cu for `scopecheck tune`: a device fence after the producer's store, which the event between the kernels already orders.
// Two kernels on two streams ordered by an event, as a multi-stream pipeline sets it up:
// `produce` runs on stream s1 and writes data[t] = (t + 1) * 10; an event is recorded on s1
// after it and s2 waits for that event (cudaStreamWaitEvent) before `consume`, which reads
// the other thread's element, data[1 - t], and writes it plus 1 to out[t]. data is cleared
// with cudaMemset first; after cudaDeviceSynchronize the host copies `out` back and checks
// each element. Two threads per kernel, four device threads in all.
//
// expect (src11): Ok, racy: false -- the event recorded on s1 covers `produce`; s2's wait
//   makes `consume` start after it, so every data[] store happens before every data[] load;
//   the cudaMemset (before any launch) happens before both launches, and the DeviceToHost
//   copy after cudaDeviceSynchronize comes after `consume`.
// expect (ptx): Ok -- the same launch order; the kernels' code is plain ld/st.
#include <cstdio>
#include <cuda_runtime.h>

#define N 2
#define THREADS N

__global__ void produce(int *data) {
    int t = threadIdx.x;
    data[t] = (t + 1) * 10;
    __threadfence();
}

__global__ void consume(const int *data, int *out) {
    int t = threadIdx.x;
    out[t] = data[N - 1 - t] + 1;
}

int main() {
    int *d_data, *d_out;
    int h_out[N];
    cudaMalloc(&d_data, N * sizeof(int));
    cudaMalloc(&d_out, N * sizeof(int));
    cudaMemset(d_data, 0, N * sizeof(int));

    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaEvent_t produced;
    cudaEventCreateWithFlags(&produced, cudaEventDisableTiming);

    produce<<<1, THREADS, 0, s1>>>(d_data);
    cudaEventRecord(produced, s1);
    cudaStreamWaitEvent(s2, produced, 0);
    consume<<<1, THREADS, 0, s2>>>(d_data, d_out);

    cudaDeviceSynchronize();
    cudaMemcpy(h_out, d_out, N * sizeof(int), cudaMemcpyDeviceToHost);
    for (int i = 0; i < N; ++i) {
        int expected = (N - i) * 10 + 1;
        if (h_out[i] != expected) {
            printf("out[%d] = %d, expected %d\n", i, h_out[i], expected);
            return 1;
        }
    }
    printf("ok\n");

    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaFree(d_data);
    cudaFree(d_out);
    return 0;
}
