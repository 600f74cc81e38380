// The dynamic shared memory reduction of lx-dyn-smem-reduce.cu without its __syncthreads():
// thread 0 may add the partials before thread 1 has stored its own.
//
// expect (src11): No, racy: true -- thread 1's plain store to partial[1] and thread 0's plain
//   load of it are not ordered by happens-before (no barrier): a data race, and the load may
//   read the initial 0, so the host can see 3 instead of 7.
// expect (ptx): No -- without barrier.sync the ld.shared may read the initial value.
__global__ void block_sum(const int* in, int* out) {
    extern __shared__ int partial[];
    int t = threadIdx.x;
    partial[t] = in[t];
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
