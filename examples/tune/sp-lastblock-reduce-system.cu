// Over-specified copy of examples/cuda/sp-lastblock-reduce.cu for `scopecheck tune`: atomicInc_system on the retirement count where device scope is enough.
#include <cstdio>
#include <cuda_runtime.h>
// Single-pass sum with a last-block reduction (the CUDA sample threadFenceReduction, PyTorch's
// mark_block_finished): each block of two threads sums its two inputs in shared memory;
// thread 0 writes the block's partial sum to partial[blockIdx.x], fences, and draws a ticket
// with atomicInc_system(&retirement_count, gridDim.x - 1). atomicInc wraps to 0 once the old value
// reaches the limit, so the block that draws the last ticket (gridDim.x - 1) also leaves the
// counter at 0, ready for the next launch. That block (told through a __shared__ flag and
// __syncthreads) fences, loads all partial sums (one per thread) into a second shared array,
// reduces them and writes the total. The host checks the total and that the counter wrapped
// to 0.
//
// expect (src11): Ok, racy: false -- the non-last block's thread 0 writes partial[b] (plain),
//   then __threadfence() (SC fence, device scope: a release fence), then the relaxed
//   atomicInc; the last block's thread 0 reads that atomicInc's value with its own atomicInc
//   (an RMW, so it reads the immediately preceding write in modification order: ticket
//   gridDim.x - 1 means the other block's increment came first) and then fences
//   (__threadfence(): an acquire fence), so the two fences synchronize (device scope, both
//   blocks in it). __syncthreads() then orders thread 0's fence before thread 1's load of
//   partial[1 - b] (block-scope barrier synchronization), and the block's own partial was
//   written by its own thread 0 before the same barrier. Shared-memory accesses of different
//   threads are separated by __syncthreads(); the host reads after cudaDeviceSynchronize().
//   So no race, and *result = (1 + 2) + (3 + 4) = 10 with retirement_count = 0 in every execution.
// expect (ptx): Ok -- fence.sc.gpu; atom.inc.gpu (relaxed) is a release pattern, atom.inc;
//   fence.sc.gpu an acquire pattern, morally strong (gpu scope, same GPU); bar.sync orders
//   thread 0 of the last block before thread 1 (CTA barrier synchronization), so each partial
//   store precedes its load in causality order.
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
        // Make the partial sum visible to the whole device before taking a ticket.
        __threadfence();
        unsigned int ticket = atomicInc_system(&retirement_count, gridDim.x - 1);
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
