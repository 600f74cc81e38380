// Over-specified copy of examples/cuda/hh-symbol-lastblock.cu for `scopecheck tune`: atomicAdd_system on the ticket where device scope is enough.
// The "last block finishes the reduction" pattern (as in the CUDA threadFenceReduction
// sample) with its data in __device__ globals moved by cudaMemcpyToSymbol /
// cudaMemcpyFromSymbol, and the arrival counter in cudaMalloc memory cleared with
// cudaMemset. Each of the 2 blocks scales its input element into d_partial[b], fences at
// device scope and takes a ticket with atomicAdd on *arrived; the block whose ticket is
// gridDim.x - 1 (by the value atomicAdd returned) fences again and adds the partials up
// into d_total, recording itself in a LastBlockInfo struct (managed memory, passed by
// pointer). The host copies d_total back from the symbol and the counter back with
// cudaMemcpy and checks them and the struct.
// (A struct holding the counter, cleared with cudaMemset(d_state, 0, sizeof(State)), is
// refused by scopecheck: "not supported yet: copying `struct ...` memory (copy scalars)".)
//
// expect (src11): Ok, racy: false -- the two atomicAdds are device-scope RMWs on one
//   location, so exactly one block gets ticket 1; the other block's fence before its RMW,
//   the RMW chain on `arrived`, and the last block's fence after its RMW synchronize, so its
//   d_partial loads see both stores; cudaMemcpyToSymbol / cudaMemset happen before the launch
//   and the copies back wait for the kernel.
// expect (ptx): Ok -- membar.gl; atom.add.gpu / atom.add.gpu; membar.gl: fence-fence release
//   and acquire through an RMW chain, morally strong at gpu scope.
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
    unsigned int ticket = atomicAdd_system(arrived, 1u);
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
