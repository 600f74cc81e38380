#include <cstdio>
#include <cuda_runtime.h>
// The last-block reduction of sp-lastblock-reduce.cu with the release fence narrowed to the
// block: __threadfence_block() before the ticket orders the partial sum only for threads of
// the writer's own block, so the last block may read a stale partial sum of the other block.
//
// Single-pass sum with a last-block reduction (the CUDA sample threadFenceReduction, PyTorch's
// mark_block_finished): each block of two threads sums its two inputs in shared memory;
// thread 0 writes the block's partial sum to partial[blockIdx.x], fences, and draws a ticket
// with atomicInc(&retirement_count, gridDim.x - 1). atomicInc wraps to 0 once the old value
// reaches the limit, so the block that draws the last ticket (gridDim.x - 1) also leaves the
// counter at 0, ready for the next launch. That block (told through a __shared__ flag and
// __syncthreads) fences, loads all partial sums (one per thread) into a second shared array,
// reduces them and writes the total. The host checks the total and that the counter wrapped
// to 0.
//
// expect (src11): No, racy: true -- __threadfence_block() is a fence at block scope. In
//   scoped C11 a release fence synchronizes with an acquire fence only when each fence's scope
//   includes the other thread; the first block's fence has block scope and the last block's
//   thread is in another block, so there is no synchronizes-with edge (the ticket's atomicInc
//   is relaxed and gives none either). The first block's plain store partial[b] and the last
//   block's plain load of partial[b] are then unordered by happens-before: a data race
//   (heterogeneous: the synchronization is too narrow), and the load may read the initial 0,
//   so *result is 3 or 7 instead of 10 in some execution: the host's check fails.
// expect (ptx): No -- fence.sc.cta; atom.inc.gpu is a release pattern only at CTA scope: its
//   fence and the last block's fence.sc.gpu are not morally strong (the cta fence's scope
//   does not include the other CTA), so the partial store is not in causality order before
//   the other block's ld and the ld may read the initial value.
constexpr int THREADS = 2;

__device__ int partial[2];
__device__ unsigned int retirement_count = 0;

__global__ void sum_all(const int *in, int *result) {
    __shared__ int sdata[THREADS];
    __shared__ int sfinal[THREADS];
    __shared__ bool am_last;
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0] + sdata[1];
        // Bug: a block-scope fence does not make the partial sum visible to other blocks.
        __threadfence_block();
        unsigned int ticket = atomicInc(&retirement_count, gridDim.x - 1);
        am_last = (ticket == gridDim.x - 1);
        // The last block must see every other block's partial sum.
        __threadfence();
    }
    __syncthreads();
    if (am_last) {
        // gridDim.x == blockDim.x: thread i loads block i's partial sum.
        sfinal[tid] = partial[tid];
        __syncthreads();
        if (tid == 0) {
            *result = sfinal[0] + sfinal[1];
        }
    }
}

int main() {
    int h_in[4] = {1, 2, 3, 4};
    int *d_in, *d_result;
    cudaMalloc(&d_in, 4 * sizeof(int));
    cudaMalloc(&d_result, sizeof(int));
    cudaMemcpy(d_in, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
    cudaMemset(d_result, 0, sizeof(int));
    sum_all<<<2, THREADS>>>(d_in, d_result);
    cudaDeviceSynchronize();
    int total = 0;
    unsigned int count = 1;
    cudaMemcpy(&total, d_result, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpyFromSymbol(&count, retirement_count, sizeof(unsigned int));
    if (total != 10 || count != 0) {
        fprintf(stderr, "total %d (expected 10), counter %u (expected 0)\n", total, count);
        return 1;
    }
    printf("sum = %d\n", total);
    cudaFree(d_in);
    cudaFree(d_result);
    return 0;
}
