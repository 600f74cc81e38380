// Broken twin of lx-cg-block-reduce: the same cooperative-groups block reduction without
// `block.sync()` between the shared-memory stores and thread 0's loads. Thread 0 may read
// partial[1] before thread 1 stored it (the shared array is not initialised: 0 in the model).
//
// expect (src11): No, racy: true -- thread 1's st of partial[1] and thread 0's load of it are
//   unordered plain accesses (a data race); thread 0 can read the initial 0 (sum 3).
// expect (ptx): No -- no barrier: ld.shared of partial[1] may read the initial value.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void block_sum(const int* in, int* out) {
    __shared__ int partial[2];
    cg::thread_block block = cg::this_thread_block();
    unsigned int r = block.thread_rank();
    partial[r] = in[r];
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
