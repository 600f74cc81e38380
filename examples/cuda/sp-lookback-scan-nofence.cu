#include <cstdio>
#include <cuda_runtime.h>
#include <cuda/atomic>
// The decoupled look-back scan of sp-lookback-scan.cu with one fence missing: the inclusive
// prefix is stored and then its status (FLAG_PREFIX) is published by atomicExch with no
// __threadfence() in between. A successor that sees FLAG_PREFIX may read the predecessor's
// tile_inclusive before the store reaches it. (The aggregate publication and the reader's
// fence are unchanged.)
//
// expect (src11): No, racy: true -- tile_inclusive[t] = ... (plain) is followed only by a
//   relaxed atomicExch; with no release fence (or release order) before the exchange, the
//   reader's acquire fence after reading FLAG_PREFIX synchronizes with nothing, so the plain
//   write and the successor's plain read of tile_inclusive[t] are not ordered by
//   happens-before: a data race (tile 0 / tile 1 on tile_inclusive[0], and tile 1 / tile 2 on
//   tile_inclusive[1]). The racy read may return the initial 0 (cudaMemset), e.g. tile 1
//   reads tile_inclusive[0] = 0 and writes out[1] = 1, not 4: the host's check fails.
// expect (ptx): No -- the writer side st; atom.exch (no fence.sc/acq_rel in between) is not a
//   release pattern, so even though the reader does ld.relaxed; fence.sc, the store is not in
//   causality order before the reader's ld of tile_inclusive, which may read the initial 0.
constexpr int TILES = 3;
constexpr int FLAG_INVALID = 0;
constexpr int FLAG_AGGREGATE = 1;
constexpr int FLAG_PREFIX = 2;

__global__ void lookback_scan(const int *in, int *out, int *tile_flag, int *tile_aggregate,
                              int *tile_inclusive) {
    int tile = blockIdx.x;
    int aggregate = in[tile];
    int exclusive = 0;
    if (tile > 0) {
        // Publish this tile's aggregate so successors need not wait for our prefix.
        tile_aggregate[tile] = aggregate;
        __threadfence();
        atomicExch(&tile_flag[tile], FLAG_AGGREGATE);
        // Look back over the predecessors.
        for (int k = 1; k <= tile; ++k) {
            int pred = tile - k;
            cuda::atomic_ref<int, cuda::thread_scope_device> pred_flag{tile_flag[pred]};
            int status;
            do {
                status = pred_flag.load(cuda::memory_order_relaxed);
            } while (status == FLAG_INVALID);
            __threadfence();
            if (status == FLAG_PREFIX) {
                exclusive += tile_inclusive[pred];
                break;
            }
            exclusive += tile_aggregate[pred];
        }
    }
    int inclusive = exclusive + aggregate;
    tile_inclusive[tile] = inclusive;
    // missing: __threadfence(); the prefix may become visible after its status
    atomicExch(&tile_flag[tile], FLAG_PREFIX);
    out[tile] = inclusive;
}

int main() {
    int h_in[TILES] = {3, 1, 4};
    int h_out[TILES];
    int *d_in, *d_out, *d_flag, *d_aggregate, *d_inclusive;
    cudaMalloc(&d_in, TILES * sizeof(int));
    cudaMalloc(&d_out, TILES * sizeof(int));
    cudaMalloc(&d_flag, TILES * sizeof(int));
    cudaMalloc(&d_aggregate, TILES * sizeof(int));
    cudaMalloc(&d_inclusive, TILES * sizeof(int));
    cudaMemcpy(d_in, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
    cudaMemset(d_flag, 0, TILES * sizeof(int));
    cudaMemset(d_aggregate, 0, TILES * sizeof(int));
    cudaMemset(d_inclusive, 0, TILES * sizeof(int));
    lookback_scan<<<TILES, 1>>>(d_in, d_out, d_flag, d_aggregate, d_inclusive);
    cudaDeviceSynchronize();
    cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost);
    if (h_out[0] != 3 || h_out[1] != 4 || h_out[2] != 8) {
        fprintf(stderr, "bad prefixes %d %d %d\n", h_out[0], h_out[1], h_out[2]);
        return 1;
    }
    printf("ok\n");
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_flag);
    cudaFree(d_aggregate);
    cudaFree(d_inclusive);
    return 0;
}
