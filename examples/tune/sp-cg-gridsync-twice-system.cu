// Over-specified copy of examples/cuda/sp-cg-gridsync-twice.cu for `scopecheck tune`: a system-scope atomic_ref on the barrier counter where device scope is enough.
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda/atomic>
// A grid-wide barrier in the style of cooperative_groups' sync_grids(), used twice in a row by
// two blocks. One 32-bit word counts arrivals and carries a generation bit: every block's
// thread 0 fences and adds to it, block 0 adds 0x80000000 - (expected - 1) and the others add
// 1, so once all have arrived the word has grown by exactly 0x80000000: its top bit flips.
// Each arriving thread spins (relaxed device-scope loads) until the top bit differs from the
// value its own add returned, then fences; __syncthreads() before and after brings the rest
// of the block along. The word needs no reset between uses (after two uses it is back to 0),
// which is what makes the barrier reusable.
// Phase 1 writes data[me]; barrier; phase 2 reads the other block's data and writes
// buf[me] = 10 * that; barrier; phase 3 overwrites data[me] (a write-after-read hazard with
// the other block's phase-2 read) and reads the other block's buf. The host checks out[] and
// that the barrier word is 0 again.
//
// expect (src11): Ok, racy: false -- at each use, thread 0 of each block runs __syncthreads(),
//   __threadfence() (SC fence at device scope: a release fence), a relaxed atomicAdd, relaxed
//   loads until the flip, __threadfence() (an acquire fence), __syncthreads(). The flipped
//   value exists only after both adds; the block whose add came first in the modification
//   order exits by reading the other block's add (the only later write in this use), the
//   block whose add came second read the first add's value with its own RMW. Either way the
//   other block's release fence synchronizes with this block's acquire fence (both device
//   scope), so every phase-1 write happens before the other block's phase-2 read, and every
//   phase-2 access (read of data, write of buf) happens before the other block's conflicting
//   phase-3 access (write of data, read of buf): no race. out[me] = (other + 1) + 10 * (me +
//   1) = {12, 21}; the word is 2 * 0x80000000 mod 2^32 = 0 in every execution.
// expect (ptx): Ok -- fence.sc.gpu; atom.add.gpu (relaxed) is a release pattern,
//   ld.relaxed.gpu ...; fence.sc.gpu an acquire pattern, morally strong with it (gpu scope,
//   one GPU); the read of the flipped value observes the other block's atom (directly or
//   through this block's own atom, which read it), so each phase's accesses precede the other
//   block's next-phase accesses in causality order, and coherence/causality forbid stale or
//   too-new values.
constexpr int N = 2;

__device__ bool bar_has_flipped(unsigned int old_arrive, unsigned int current_arrive) {
    return ((old_arrive ^ current_arrive) & 0x80000000) != 0;
}

__device__ void sync_grids(unsigned int expected, unsigned int *arrived) {
    bool cta_master = (threadIdx.x == 0);
    bool gpu_master = (blockIdx.x == 0);
    __syncthreads();
    if (cta_master) {
        unsigned int nb = 1;
        if (gpu_master) {
            nb = 0x80000000 - (expected - 1);
        }
        __threadfence();
        unsigned int old_arrive = atomicAdd(arrived, nb);
        cuda::atomic_ref<unsigned int, cuda::thread_scope_system> bar(*arrived);
        while (!bar_has_flipped(old_arrive, bar.load(cuda::memory_order_relaxed))) {
        }
        // flush the barrier upon leaving
        __threadfence();
    }
    __syncthreads();
}

__global__ void three_phases(unsigned int *arrived, int *data, int *buf, int *out) {
    int me = blockIdx.x * blockDim.x + threadIdx.x;
    int other = (me + blockDim.x) % N;
    data[me] = me + 1;
    sync_grids(gridDim.x, arrived);
    int v = data[other];
    buf[me] = 10 * v;
    sync_grids(gridDim.x, arrived);
    data[me] = 0;
    out[me] = v + buf[other];
}

int main() {
    unsigned int *d_arrived;
    int *d_data, *d_buf, *d_out;
    cudaMalloc(&d_arrived, sizeof(unsigned int));
    cudaMalloc(&d_data, N * sizeof(int));
    cudaMalloc(&d_buf, N * sizeof(int));
    cudaMalloc(&d_out, N * sizeof(int));
    cudaMemset(d_arrived, 0, sizeof(unsigned int));
    cudaMemset(d_data, 0, N * sizeof(int));
    cudaMemset(d_buf, 0, N * sizeof(int));
    three_phases<<<2, 1>>>(d_arrived, d_data, d_buf, d_out);
    cudaDeviceSynchronize();
    int h_out[N];
    unsigned int h_arrived = 1;
    cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost);
    cudaMemcpy(&h_arrived, d_arrived, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    if (h_out[0] != 12 || h_out[1] != 21) {
        fprintf(stderr, "bad: %d %d\n", h_out[0], h_out[1]);
        return 1;
    }
    if (h_arrived != 0) {
        fprintf(stderr, "barrier word %u, expected 0\n", h_arrived);
        return 1;
    }
    printf("ok\n");
    return 0;
}
