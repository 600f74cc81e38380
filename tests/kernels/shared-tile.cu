// A shared-memory tile rotated by one inside each block: thread t stores its element in the
// tile, the block meets at __syncthreads(), then thread t reads its neighbour's slot
// (t + 1) % blockDim.x. Every store to the tile happens before the barrier and every load
// after it, and each thread writes only its own element of `data` (one element per thread of
// the grid): no race, in either view, at the default launch (2 blocks of 2).
#define TILE 64

__global__ void rotate(int *data) {
    __shared__ int tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = data[i];
    __syncthreads();
    data[i] = tile[(threadIdx.x + 1) % blockDim.x];
}
