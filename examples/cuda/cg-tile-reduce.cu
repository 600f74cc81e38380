// A tile reduction with cooperative groups: tiles of 4 threads (cg::tiled_partition<4>) sum
// their inputs with tile.shfl_down in a loop of halving steps; each tile's rank 0 writes its
// sum. Inputs 0..7: the two tiles sum to 0+1+2+3 = 6 and 4+5+6+7 = 22.
//
// expect (src11): Ok, racy: false -- shuffles exchange registers within the tile and every
//   input is written by the host before the launch.
// expect (ptx): Ok -- the same: shfl.sync.down moves registers within the tile. (The hole
//   search's precise completeness gate vouches for the lanes that wait for their input before
//   a shuffle others wait at: what those others may still write is only the tile's sum.)
#include <cassert>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void reduce(const int *in, int *out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<4> tile = cg::tiled_partition<4>(block);
    int v = in[block.thread_rank()];
    for (int d = tile.size() / 2; d > 0; d /= 2) {
        v += tile.shfl_down(v, d);
    }
    if (tile.thread_rank() == 0) {
        out[tile.meta_group_rank()] = v;
    }
}
int main() {
    int *in, *out;
    cudaMallocManaged(&in, 8 * sizeof(int));
    cudaMallocManaged(&out, 2 * sizeof(int));
    for (int i = 0; i < 8; ++i) in[i] = i;
    reduce<<<1, 8>>>(in, out);
    cudaDeviceSynchronize();
    assert(out[0] == 6);
    assert(out[1] == 22);
    return 0;
}
