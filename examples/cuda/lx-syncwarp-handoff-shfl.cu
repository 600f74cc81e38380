// A handoff between two lanes of one warp through global memory with the order left to a
// shuffle (a common misconception: a shuffle waits for the other lanes, so surely it orders
// what they wrote). It does not: shfl.sync exchanges registers and orders no memory; the
// handoff needs __syncwarp() (lx-syncwarp-handoff.cu) or a fence and a flag.
//
// expect (src11): No, racy: true -- nothing orders lane 0's plain store of data[0] before
//   lane 1's plain load: a data race, and the load may read the host's 0.
// expect (ptx): No -- no fence, barrier or release/acquire pair between st.global and
//   ld.global: the weak load may read 0.
__global__ void handoff(int* data, int* out) {
    int lane = threadIdx.x % 32;
    if (lane == 0) data[0] = 42;
    int go = __shfl_sync(0x3, lane, 0);
    if (lane == 1 && go == 0) *out = data[0];
}

int main() {
    int *data, *out;
    cudaMallocManaged(&data, sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    data[0] = 0;
    *out = 0;
    handoff<<<1, 2>>>(data, out);
    cudaDeviceSynchronize();
    if (*out != 42) return 1;
    return 0;
}
