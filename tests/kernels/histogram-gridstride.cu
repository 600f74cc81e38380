// A grid-stride histogram: thread i of the grid visits elements i, i + stride, ... below n
// (stride: the grid's thread count) and adds one to bins[in[j] & 1] with atomicAdd. The
// input is only read and the bins only change through atomic adds, which never race with
// each other: no race, in both views, whatever the input holds. Checked at the default
// launch (2 blocks of 2, buffers of 4, n = 4): one round each (--buffer 8 --arg n=8 would
// make eight atomic adds to one bin, whose 8! orders are beyond a quick test).
__global__ void histogram(const int *in, unsigned *bins, int n) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += blockDim.x * gridDim.x) {
        atomicAdd(&bins[in[j] & 1], 1u);
    }
}
