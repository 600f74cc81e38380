//--blockDim=2 --gridDim=1
// A handoff between two lanes of one warp through shared memory: lane 0 stores the value,
// both lanes meet at __syncwarp(), lane 1 loads it. __syncwarp() orders memory among the
// lanes it names (a warp barrier: what a lane did before it happens before what the others
// do after it), so the store happens before the load: no race, in both views.
__global__ void handoff(const int *in, int *out) {
    __shared__ int slot;
    if (threadIdx.x == 0) {
        slot = in[0] + 1;
    }
    __syncwarp();
    if (threadIdx.x == 1) {
        out[0] = slot;
    }
}
