// hh-streams-events.cu without the cudaStreamWaitEvent: the event is still recorded on s1
// after `produce`, but s2 never waits for it, so `consume` on s2 may start before (or run
// alongside) `produce` on s1.
//
// expect (src11): No, racy: true -- launches on two created streams are unordered: the
//   plain data[] loads of `consume` and the plain stores of `produce` conflict with no
//   happens-before between them, and a load may read the 0 of the cudaMemset
//   (out[i] == 1 != expected).
// expect (ptx): No -- the same unordered launches; ld may read the initial 0.
#include <cstdio>
#include <cuda_runtime.h>

#define N 2
#define THREADS N

__global__ void produce(int *data) {
    int t = threadIdx.x;
    data[t] = (t + 1) * 10;
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
