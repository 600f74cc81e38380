//--blockDim=1 --gridDim=2
// The racy twin of inline-ptx-fence.cu: without the fences the relaxed flag orders nothing,
// and block 1's read of data[0] races with block 0's store.
__global__ void handoff(int *data, int *flag, int *out) {
    if (blockIdx.x == 0) {
        data[0] = 42;
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        out[0] = data[0];
    }
}
