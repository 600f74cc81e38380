// The racy twin of histogram-gridstride.cu: `bins[in[j] & 1]++` is a plain load and store.
// Zero-filled input puts every element in bins[0], so every thread's increment of bins[0]
// races with the others' (the buffers are the default's, zero): racy, in both views.
__global__ void histogram(const int *in, unsigned *bins, int n) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += blockDim.x * gridDim.x) {
        bins[in[j] & 1]++;
    }
}
