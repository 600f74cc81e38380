//--blockDim=4 --gridDim=2
// A `__device__ int g[4][8]` (4 rows of 8): block b stores row b, thread t element g[b][t];
// after __syncthreads() thread t loads its neighbour g[b][(t + 1) % 4] in the same row,
// stored by a thread of its own block before the barrier, and writes its own element of out.
// Rows 2 and 3 are never touched. No race, in both views.
__device__ int g[4][8];

__global__ void rows(int *out) {
    g[blockIdx.x][threadIdx.x] = threadIdx.x + 1;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = g[blockIdx.x][(threadIdx.x + 1) % blockDim.x];
}
