//--blockDim=[2,2] --gridDim=1
// A 2-D shared-memory tile transpose with a two-dimensional block: thread (x, y) stores
// in[y * 2 + x] in tile[y][x], the block meets at __syncthreads(), then it reads tile[x][y]
// (the element thread (y, x) stored) and writes out[y * 2 + x]. Every tile store precedes
// the barrier and every tile load follows it; each thread writes only its own element of out:
// no race, in both views.
#define DIM 2

__global__ void transpose(const int *in, int *out) {
    __shared__ int tile[DIM][DIM];
    unsigned x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * DIM + x];
    __syncthreads();
    out[y * DIM + x] = tile[x][y];
}
