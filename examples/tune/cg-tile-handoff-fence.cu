// Over-specified copy of examples/cuda/cg-tile-handoff.cu for `scopecheck tune`: a
// __threadfence_block() before tile.sync(), which the warp barrier makes unnecessary.
#include <cassert>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void handoff(int *out) {
    __shared__ int slot[2];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<4> tile = cg::tiled_partition<4>(block);
    int t = tile.meta_group_rank();
    if (tile.thread_rank() == 0) {
        slot[t] = 10 + t;
    }
    __threadfence_block();
    tile.sync();
    if (tile.thread_rank() == 1) {
        out[t] = slot[t];
    }
}

int main() {
    int *out;
    cudaMallocManaged(&out, 2 * sizeof(int));
    out[0] = 0;
    out[1] = 0;
    handoff<<<1, 8>>>(out);
    cudaDeviceSynchronize();
    assert(out[0] == 10);
    assert(out[1] == 11);
    return 0;
}
