//--blockDim=4 --gridDim=1
// Cooperative groups' static tiles: the block splits into tiles of two threads
// (cg::tiled_partition<2>); in each tile rank 0 receives rank 1's element with
// tile.shfl_down(v, 1) and writes the pair's sum to out[tile.meta_group_rank()]. The shuffle
// exchanges registers, not memory (rank 1 takes part and names a lane of its own tile), each
// thread reads its own in[t], and each tile's rank 0 writes its own out slot: no race, in both
// views.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void pair_sum(const int *in, int *out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<2> tile = cg::tiled_partition<2>(block);
    int v = in[block.thread_rank()];
    int other = tile.shfl_down(v, 1);
    if (tile.thread_rank() == 0) {
        out[tile.meta_group_rank()] = v + other;
    }
}
