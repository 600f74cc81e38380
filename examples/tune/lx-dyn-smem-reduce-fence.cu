// Over-specified copy of examples/cuda/lx-dyn-smem-reduce.cu for `scopecheck tune`: a block fence before __syncthreads(), which already orders the shared stores before the reads.
// A block reduction in dynamic shared memory, as library kernels size their scratch space:
// `extern __shared__ int partial[]`, sized at launch by the third <<<>>> argument
// (2 * sizeof(int)); each thread stores its input, __syncthreads(), thread 0 adds the
// partials and writes the sum. One block of two threads; the host checks the sum.
//
// expect (src11): Ok, racy: false -- __syncthreads() orders both shared stores before thread
//   0's loads; the host reads *out after cudaDeviceSynchronize.
// expect (ptx): Ok -- barrier.sync 0 between st.shared and ld.shared of the dynamic array.
__global__ void block_sum(const int* in, int* out) {
    extern __shared__ int partial[];
    int t = threadIdx.x;
    partial[t] = in[t];
    __threadfence_block();
    __syncthreads();
    if (t == 0) *out = partial[0] + partial[1];
}

int main() {
    int *in, *out;
    cudaMallocManaged(&in, 2 * sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    in[0] = 3;
    in[1] = 4;
    *out = 0;
    block_sum<<<1, 2, 2 * sizeof(int)>>>(in, out);
    cudaDeviceSynchronize();
    if (*out != 7) return 1;
    return 0;
}
