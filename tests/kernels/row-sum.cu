//--blockDim=[4,2] --gridDim=1
// Each thread sums its row of a shared 2 x 4 tile in a loop (the inner index a loop counter):
// thread (x, y) stores t[y][x], __syncthreads(), then loads t[y][0..3] and stores its own
// element of out. Every store to t precedes the barrier, every load follows it, and every
// index lies inside its dimension: no race and no fault, in both views.
__global__ void row_sum(const int *in, int *out) {
    __shared__ int t[2][4];
    unsigned x = threadIdx.x, y = threadIdx.y;
    t[y][x] = in[y * 4 + x];
    __syncthreads();
    int s = 0;
    for (int k = 0; k < 4; ++k)
        s += t[y][k];
    out[y * 4 + x] = s;
}
