// hh-symbol-lastblock.cu with the ticket taken by a plain read and `+=` on the counter
// instead of atomicAdd: `unsigned int ticket = *arrived; *arrived += 1;`. Everything else
// (the symbols, cudaMemset, the fences, the host checks) is the same.
//
// expect (src11): No, racy: true -- the two blocks' plain loads and stores of *arrived
//   conflict with no happens-before between them (a data race); both may read 0, so both
//   get ticket 0, nobody is last: d_total keeps its -1, info->seen stays 0 and *arrived
//   ends at 1.
// expect (ptx): No -- plain ld/st of the counter: both blocks may load 0 before either
//   stores (a lost update), so neither block finishes the reduction.
#include <cstdio>
#include <cuda_runtime.h>

#define NUM_BLOCKS 2
#define SCALE 5

__device__ int d_input[NUM_BLOCKS];
__device__ int d_partial[NUM_BLOCKS];
__device__ int d_total = -1;

// Which block finished, and the ticket count it saw: a struct passed by pointer (managed).
struct LastBlockInfo {
    int block;
    unsigned int seen;
};

__global__ void reduce_last_block(unsigned int *arrived, LastBlockInfo *info) {
    int b = blockIdx.x;
    d_partial[b] = d_input[b] * SCALE;
    __threadfence();
    unsigned int ticket = *arrived;
    *arrived += 1;
    if (ticket == gridDim.x - 1) {
        __threadfence();
        int total = 0;
        for (int i = 0; i < NUM_BLOCKS; ++i) {
            total += d_partial[i];
        }
        d_total = total;
        info->block = b;
        info->seen = ticket + 1;
    }
}

int main() {
    int h_input[NUM_BLOCKS];
    for (int i = 0; i < NUM_BLOCKS; ++i) {
        h_input[i] = 2 * i + 3;
    }
    cudaMemcpyToSymbol(d_input, h_input, sizeof(h_input));

    unsigned int *d_arrived;
    cudaMalloc(&d_arrived, sizeof(unsigned int));
    cudaMemset(d_arrived, 0, sizeof(unsigned int));

    LastBlockInfo *info;
    cudaMallocManaged(&info, sizeof(LastBlockInfo));
    info->block = -1;
    info->seen = 0;

    reduce_last_block<<<NUM_BLOCKS, 1>>>(d_arrived, info);
    cudaDeviceSynchronize();

    int h_total = 0;
    unsigned int h_arrived = 0;
    cudaMemcpyFromSymbol(&h_total, d_total, sizeof(int));
    cudaMemcpy(&h_arrived, d_arrived, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    int expected = 0;
    for (int i = 0; i < NUM_BLOCKS; ++i) {
        expected += (2 * i + 3) * SCALE;
    }
    if (h_arrived != NUM_BLOCKS) {
        printf("%u blocks arrived, expected %d\n", h_arrived, NUM_BLOCKS);
        return 1;
    }
    if (info->seen != NUM_BLOCKS) {
        printf("last block %d saw %u arrivals\n", info->block, info->seen);
        return 1;
    }
    if (h_total != expected) {
        printf("total %d, expected %d\n", h_total, expected);
        return 1;
    }
    printf("ok\n");
    cudaFree(d_arrived);
    cudaFree(info);
    return 0;
}
