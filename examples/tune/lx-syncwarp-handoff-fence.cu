// Over-specified copy of examples/cuda/lx-syncwarp-handoff.cu for `scopecheck tune`: a block fence before __syncwarp, which already orders memory among the lanes it names.
// Lanes handing data through shared memory inside one warp, as warp-specialised kernels do:
// lane 0 fills a shared slot, __syncwarp() (a barrier of the lanes it names that also orders
// their memory), lane 1 reads the slot and stores it out. Two lanes of one warp.
//
// expect (src11): Ok, racy: false -- __syncwarp synchronizes the two lanes: the store of
//   slot happens before lane 1's load, which reads 42.
// expect (ptx): Ok -- bar.warp.sync orders st.shared before ld.shared (PTX ISA: it
//   "guarantees memory ordering among threads participating in barrier").
__global__ void handoff(int* out) {
    __shared__ int slot;
    int lane = threadIdx.x % 32;
    if (lane == 0) slot = 42;
    __threadfence_block();
    __syncwarp(0x3);
    if (lane == 1) *out = slot;
}

int main() {
    int* out;
    cudaMallocManaged(&out, sizeof(int));
    *out = 0;
    handoff<<<1, 2>>>(out);
    cudaDeviceSynchronize();
    if (*out != 42) return 1;
    return 0;
}
