//--blockDim=[2,2] --gridDim=1
// A 5-point stencil (the discrete Laplacian) on a 2 x 2 grid through a shared tile with a
// one-element halo, `int s[H + 2][W + 2]` (4 rows of 4): thread (x, y) stores its value in
// s[y + 1][x + 1]; the threads on an edge also store it in the halo cell beyond the edge
// (clamp-to-edge boundary): s[y + 1][0] for x == 0, s[y + 1][3] for x == 1, s[0][x + 1] for
// y == 0, s[3][x + 1] for y == 1. Each cell of the tile is stored by one thread (the corners
// by none; every thread of a 2 x 2 block is on two edges). After __syncthreads() each
// thread loads its four neighbours and itself and stores its own element of out. Every
// store to s precedes the barrier, every load follows it: no race, in both views.
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
    __syncthreads();
    out[y * W + x] = s[y][x + 1] + s[y + 2][x + 1] + s[y + 1][x] + s[y + 1][x + 2]
                     - 4 * s[y + 1][x + 1];
}
