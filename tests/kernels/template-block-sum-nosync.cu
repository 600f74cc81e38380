//--blockDim=4 --gridDim=1
// The racy twin of template-block-sum.cu: the __syncthreads() between the loads into the tile
// and the first step is missing, so thread 0 of step s = 2 reads tile[2], which thread 2
// stores with nothing ordering the two: a data race on the block's tile (PTX view alone: a
// template).
template <int BLOCK>
__global__ void block_sum(const int *__restrict__ in, int *__restrict__ out) {
    __shared__ int tile[BLOCK];
    unsigned t = threadIdx.x;
    tile[t] = in[blockIdx.x * BLOCK + t];
#pragma unroll
    for (int s = BLOCK / 2; s > 0; s /= 2) {
        if (t < s) {
            tile[t] += tile[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        out[blockIdx.x] = tile[0];
    }
}
