// The racy twin of gridstride-count.cu: the count is added with a plain `+=` (a load and a
// store), so two threads' updates of `*count` are conflicting plain accesses with nothing
// ordering them: a data race on count[0] (and lost updates: final counts below n).
__global__ void double_count(int *a, unsigned int *count, int n) {
    unsigned int done = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        a[i] = 2 * a[i];
        done += 1;
    }
    *count += done;
}
