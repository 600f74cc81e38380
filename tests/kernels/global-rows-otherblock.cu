//--blockDim=4 --gridDim=2
// The racy twin of global-rows.cu: each thread loads the element of the other block's row
// (g[(b + 1) % 2][t]). __syncthreads() orders only the threads of one block, so block 0's
// load of g[1][0] and block 1's store of it are unordered: a data race on g[1][0], the
// location g[8] (rows of 8), in both views.
__device__ int g[4][8];

__global__ void rows(int *out) {
    g[blockIdx.x][threadIdx.x] = threadIdx.x + 1;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = g[(blockIdx.x + 1) % gridDim.x][threadIdx.x];
}
