//--blockDim=1 --gridDim=2
// The racy twin of lookback-flags.cu: without the two __threadfence() calls the flag is a
// relaxed atomic that orders nothing, so block 1's load of sums[0] races with block 0's store
// of it, in both views.
__global__ void chained_scan(const int *in, int *sums, int *flag) {
    int b = blockIdx.x;
    int prefix = 0;
    if (b > 0) {
        while (atomicAdd(&flag[b - 1], 0) == 0) {
        }
        prefix = sums[b - 1];
    }
    sums[b] = prefix + in[b];
    atomicExch(&flag[b], 1);
}
