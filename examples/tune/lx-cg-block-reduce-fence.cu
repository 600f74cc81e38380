// Over-specified copy of examples/cuda/lx-cg-block-reduce.cu for `scopecheck tune`: a block fence before block.sync(), which already orders the shared stores before the reads.
// A block reduction written with cooperative groups, as CUB-/sample-style code does:
// `cg::thread_block block = cg::this_thread_block()`, each thread stores its input in shared
// memory at `block.thread_rank()`, `block.sync()`, and thread 0 adds the partials up and
// writes the block's sum. One block of two threads; the host checks the sum.
//
// expect (src11): Ok, racy: false -- block.sync() is a CTA barrier (as __syncthreads): both
//   shared-memory stores happen before thread 0's loads; the host reads *out after
//   cudaDeviceSynchronize. (The language-level front-end is not expected to read
//   cooperative_groups: then the PTX view alone.)
// expect (ptx): Ok -- block.sync() compiles to barrier.sync 0, which orders the st.shared
//   before the ld.shared of the other thread (barrier synchronization is morally strong).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void block_sum(const int* in, int* out) {
    __shared__ int partial[2];
    cg::thread_block block = cg::this_thread_block();
    unsigned int r = block.thread_rank();
    partial[r] = in[r];
    __threadfence_block();
    block.sync();
    if (r == 0) *out = partial[0] + partial[1];
}

int main() {
    int *in, *out;
    cudaMallocManaged(&in, 2 * sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    in[0] = 3;
    in[1] = 4;
    *out = 0;
    block_sum<<<1, 2>>>(in, out);
    cudaDeviceSynchronize();
    if (*out != 7) return 1;
    return 0;
}
