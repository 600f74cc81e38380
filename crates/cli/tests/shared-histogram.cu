// A shared-memory histogram as kernels write it: 2 blocks of 4 threads, 2 bins. Threads 0 and
// 1 zero the block's bins, __syncthreads(), every thread adds 1 to the bin of its input
// (atomicAdd on __shared__), __syncthreads(), threads 0 and 1 add the block's bins to the
// global histogram (atomicAdd on global memory). Inputs i % 3 for i = 0..7 are 0,1,2,0,1,2,0,1
// and the bin is `in & 1`: bin 0 gets the five even inputs, bin 1 the three odd ones, so
// out = {5, 3} and the host's check of the total (8) holds. Executions: block 0's bin 0 takes
// 3 increments (inputs 0, 2, 0: 3! orders) and its bin 1 one; block 1's bin 0 takes 2 (2!)
// and its bin 1 two (2!); the two merges into out[0] and into out[1] come in either order
// (2 * 2): 6 * 2 * 2 * 4 = 96.
//
// expect (src11): Ok -- the barriers order the zeroing before the increments and the
//   increments before the merge; the atomics lose nothing: out = {5, 3} in every execution.
// expect (ptx): Ok -- the same: bar.sync orders the shared accesses, atom.add loses nothing.
__global__ void hist(const int* in, int* out) {
    __shared__ int bins[2];
    int t = threadIdx.x;
    if (t < 2) bins[t] = 0;
    __syncthreads();
    atomicAdd(&bins[in[blockIdx.x * 4 + t] & 1], 1);
    __syncthreads();
    if (t < 2) atomicAdd(&out[t], bins[t]);
}

int main() {
    int *in, *out;
    cudaMallocManaged(&in, 8 * sizeof(int));
    cudaMallocManaged(&out, 2 * sizeof(int));
    for (int i = 0; i < 8; i++) in[i] = i % 3;
    out[0] = 0;
    out[1] = 0;
    hist<<<2, 4>>>(in, out);
    cudaDeviceSynchronize();
    if (out[0] + out[1] != 8) return 1;
    return 0;
}
