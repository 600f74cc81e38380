//--blockDim=[4,2] --gridDim=[1,1]
// Checked with --buffer 16. The racy twin of transpose-padded.cu: without the
// __syncthreads() nothing orders a tile store before the load of another thread. Thread
// (tx 1, ty 0) loads tile[1][0] (j = 0), which thread (tx 0, ty 1) stores (j = 0): a data
// race on tile[1][0], the location tile@b0[5] (row 1 starts at element 5: the padded row is 5
// long), in both views.
#define TILE 4
#define BLOCK_ROWS 2

__global__ void transpose(float *out, const float *in) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    int width = gridDim.x * TILE;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    int height = gridDim.y * TILE;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
