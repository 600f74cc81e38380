// Over-specified copy of examples/cuda/sp-lookback-scan.cu for `scopecheck tune`: a system-scope atomic_ref on the predecessor's flag where device scope is enough.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda/atomic>
// Decoupled look-back scan (Merrill & Garland, CUB's DeviceScan style), one item per tile and
// one tile per block. Each tile keeps a status word in tile_flag[tile]: 0 = invalid, 1 = its
// aggregate is published in tile_aggregate[tile], 2 = its inclusive prefix is published in
// tile_inclusive[tile]. A tile first publishes its aggregate (fence, then atomicExch on its
// flag), then looks back over its predecessors: it polls a predecessor's flag (a relaxed
// device-scope atomic_ref load, CUB's ld.relaxed / ld.cg poll) until it leaves 0, fences, and
// on 2 adds that tile's inclusive prefix and stops, on 1 adds that tile's aggregate and moves
// one tile further back. Finally it publishes its own inclusive prefix (fence, then atomicExch
// of 2). The host fills the input with cudaMemcpy and checks the prefixes.
//
// expect (src11): Ok, racy: false -- every published value (tile_aggregate / tile_inclusive,
//   plain stores) is sequenced before a __threadfence() (an SC fence at device scope, so a
//   release fence) that is sequenced before the relaxed atomicExch on the flag; the reader's
//   relaxed load of the flag reads that exchange's value and is followed by __threadfence()
//   (an acquire fence), so the writer's fence synchronizes with the reader's (fence-fence
//   synchronization, both device scope, all threads on one GPU). The reader only reads the
//   value matching the status it saw (1 -> aggregate, written before the first exchange; 2 ->
//   inclusive, written before the second), so every plain read happens after the one write
//   it can see: no race, and out = {3, 4, 8} in every execution.
// expect (ptx): Ok -- NVRTC emits fence.sc.gpu (membar.gl) for __threadfence(), a relaxed gpu
//   atom.exch for atomicExch and ld.relaxed.gpu for the poll: writer side fence.sc; atom.exch
//   is a release pattern, reader side ld.relaxed; fence.sc an acquire pattern, morally strong
//   (both gpu scope, one GPU), so the writer's store precedes the reader's load in causality
//   order and the load must see it (coherence then forbids the initial 0).
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
            cuda::atomic_ref<int, cuda::thread_scope_system> pred_flag{tile_flag[pred]};
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
    __threadfence();
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
