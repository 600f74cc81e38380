//--blockDim=[4,2] --gridDim=[1,1]
// Checked with --buffer 16 (the 4 x 4 matrices; the default buffers cover the 8 threads only).
// The tiled transpose through a padded shared tile, small: TILE 4, BLOCK_ROWS 2, so the block
// is 4 x 2 threads and thread (tx, ty) moves rows ty and ty + 2 of the tile (the loop over j).
// The tile is `float tile[4][5]`: the extra column keeps a column of the tile in distinct
// banks on hardware; here it makes row r start at element 5r, so tile[r][c] is the location
// tile@b0[5r + c].
// Phase 1: thread (tx, ty) stores tile[ty + j][tx] = in[(ty + j) * 4 + tx], j = 0, 2: the 16
// stores of the block cover the 4 x 4 part of the tile, each element once. __syncthreads().
// Phase 2: it reads tile[tx][ty + j] (stored by thread (ty + j - 2k, ...) before the barrier)
// and stores out[(ty + j) * 4 + tx]: each element of out once. Every tile store precedes the
// barrier, every tile load follows it, out's elements are distinct, the padding column is
// never touched: no race, in both views.
#define TILE 4
#define BLOCK_ROWS 2

__global__ void transpose(float *out, const float *in) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    int width = gridDim.x * TILE;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    int height = gridDim.y * TILE;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
