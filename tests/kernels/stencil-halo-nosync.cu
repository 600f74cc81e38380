//--blockDim=[2,2] --gridDim=1
// The racy twin of stencil-halo.cu: without the __syncthreads() thread (0, 0) loads its
// right neighbour s[1][2], which thread (1, 0) stores with nothing ordering the two: a data
// race on s[1][2], the location s@b0[6] (rows of 4: 1 * 4 + 2), in both views.
#define W 2
#define H 2

__global__ void laplace(const int *in, int *out) {
    __shared__ int s[H + 2][W + 2];
    int x = threadIdx.x, y = threadIdx.y;
    int v = in[y * W + x];
    s[y + 1][x + 1] = v;
    if (x == 0)
        s[y + 1][0] = v;
    if (x == W - 1)
        s[y + 1][W + 1] = v;
    if (y == 0)
        s[0][x + 1] = v;
    if (y == H - 1)
        s[H + 1][x + 1] = v;
    out[y * W + x] = s[y][x + 1] + s[y + 2][x + 1] + s[y + 1][x] + s[y + 1][x + 2]
                     - 4 * s[y + 1][x + 1];
}
