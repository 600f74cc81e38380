//--blockDim=[4,2] --gridDim=1
// The faulty twin of row-sum.cu: the loop runs k = 0..4, so t[y][4] indexes past a row of 4.
// C makes that undefined even where element y * 4 + 4 lies inside the tile (row 0's k = 4 is
// t[1][0]): the language view faults at line 13 in thread (0, 0). Row 1's t[1][4] is past
// the whole tile, which the PTX view (byte addresses, no rows) finds at line 13 too.
__global__ void row_sum(const int *in, int *out) {
    __shared__ int t[2][4];
    unsigned x = threadIdx.x, y = threadIdx.y;
    t[y][x] = in[y * 4 + x];
    __syncthreads();
    int s = 0;
    for (int k = 0; k <= 4; ++k)
        s += t[y][k];
    out[y * 4 + x] = s;
}
