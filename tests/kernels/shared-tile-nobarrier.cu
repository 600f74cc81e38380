// The racy twin of shared-tile.cu: without the __syncthreads() the load of the neighbour's
// slot tile[(t + 1) % blockDim.x] is unordered with that neighbour's store to it: a data race
// on the block's tile (two threads of one block, one writes): racy in both views.
#define TILE 64

__global__ void rotate(int *data) {
    __shared__ int tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = data[i];
    data[i] = tile[(threadIdx.x + 1) % blockDim.x];
}
