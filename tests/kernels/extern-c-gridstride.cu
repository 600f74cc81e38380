// An `extern "C"` kernel with a grid-stride loop: thread i of the grid handles elements
// i, i + stride, ... below n, where stride is the grid's thread count, so every element has
// exactly one thread: no race. Checked with --buffer 8 --arg n=8 (two rounds of the loop
// at the default launch of 4 threads).
extern "C" __global__ void twice(int *a, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        a[i] = 2 * a[i];
    }
}
