// The racy twin of extern-c-gridstride.cu: the stride is the block's size, not the grid's,
// so the blocks' ranges overlap (at the default 2 blocks of 2 threads: element 2 is block 0
// thread 0's second element and block 1 thread 0's first): a data race on a[2].
extern "C" __global__ void twice(int *a, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x) {
        a[i] = 2 * a[i];
    }
}
