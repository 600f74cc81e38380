//--blockDim=4 --gridDim=1
// A template tree reduction in shared memory, as libraries write it, checked as
// `--kernel 'block_sum<4>'` (a template: the PTX view alone). Each thread stores its element in
// tile[t]; __syncthreads(); then for s = 2, 1 the threads t < s add tile[t + s] into tile[t],
// with a __syncthreads() after every step; thread 0 writes tile[0] to out[blockIdx.x].
// Every store to a tile slot is separated from every other thread's access of that slot by a
// barrier (step s writes tile[t] for t < s and reads tile[t + s] >= s, which no thread writes in
// that step), each block has its own tile and its own out slot: no race.
template <int BLOCK>
__global__ void block_sum(const int *__restrict__ in, int *__restrict__ out) {
    __shared__ int tile[BLOCK];
    unsigned t = threadIdx.x;
    tile[t] = in[blockIdx.x * BLOCK + t];
    __syncthreads();
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
