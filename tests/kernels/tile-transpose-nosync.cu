//--blockDim=[2,2] --gridDim=1
// The racy twin of tile-transpose.cu: without the __syncthreads() thread (0, 1) reads
// tile[0][1], which thread (1, 0) stores, with nothing ordering the two: a data race on the
// tile, in both views.
#define DIM 2

__global__ void transpose(const int *in, int *out) {
    __shared__ int tile[DIM][DIM];
    unsigned x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * DIM + x];
    out[y * DIM + x] = tile[x][y];
}
