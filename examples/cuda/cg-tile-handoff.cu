// A handoff inside a warp through cooperative groups' tiles: the block is split into tiles of
// 4 threads (cg::tiled_partition<4>); in each tile, rank 0 writes a value to shared memory,
// the tile synchronizes (tile.sync(), a __syncwarp over the tile's lanes), and rank 1 copies
// the value out.
//
// expect (src11): Ok, racy: false -- tile.sync() is a warp barrier over the tile's lanes: the
//   write before it happens before the read after it, in each tile.
// expect (ptx): Ok -- NVRTC compiles tile.sync() to bar.warp.sync with the tile's lane mask.
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
