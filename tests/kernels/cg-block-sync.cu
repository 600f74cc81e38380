//--blockDim=2 --gridDim=2
// Cooperative groups: a block-wide handoff through shared memory with block.sync(). Thread 0
// of each block writes the block's shared slot, the block synchronises, thread 1 copies it
// out: the barrier orders the write before the read, each block has its own slot: no race.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void handoff(int *out) {
    __shared__ int slot;
    cg::thread_block block = cg::this_thread_block();
    if (block.thread_rank() == 0) {
        slot = blockIdx.x + 1;
    }
    block.sync();
    if (block.thread_rank() == 1) {
        out[blockIdx.x] = slot;
    }
}
