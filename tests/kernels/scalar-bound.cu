//--blockDim=2 --gridDim=2
// A bound check on scalar parameters. By default every scalar is the buffers' length (4), so
// shift is 4 too and thread 0 writes a[4]: out of bounds (line 11). With --arg shift=0 each
// thread i < 4 writes a[i] once: no race. With --arg n=2 --arg shift=1 threads 0 and 1 write
// a[1] and a[2], threads 2 and 3 nothing: no race. With --arg n=3 --arg shift=-1 thread 0
// writes a[-1]: out of bounds.
__global__ void put(int *a, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int at = i + shift;
        a[at] = i;
    }
}
