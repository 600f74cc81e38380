// A kernel whose control flow depends on its input: thread t writes flag[0] when a[t] is 1.
// With the buffers zero-filled (the default) no thread writes: no race. With --init index
// (a[t] holds t) exactly one thread (t = 1) writes flag[0]: still no race. With --init 1
// every thread writes flag[0]: a data race.
__global__ void mark(const int *a, int *flag) {
    if (a[blockIdx.x * blockDim.x + threadIdx.x] == 1) {
        flag[0] = 1;
    }
}
