//--blockDim=2 --gridDim=2
// The racy twin of cg-block-sync.cu: without block.sync() thread 1's read of the shared slot
// races with thread 0's write in each block.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void handoff(int *out) {
    __shared__ int slot;
    cg::thread_block block = cg::this_thread_block();
    if (block.thread_rank() == 0) {
        slot = blockIdx.x + 1;
    }
    if (block.thread_rank() == 1) {
        out[blockIdx.x] = slot;
    }
}
