//--blockDim=4 --gridDim=1
// The broken twin of warp-shfl-sum.cu: __shfl_down_sync by 2 makes lane 2 read lane 4, which
// is not among the lanes of the mask 0xf (the block has four): CUDA leaves the value
// undefined, reported at line 8.
__global__ void warp_sum(const int *in, int *out) {
    int v = in[threadIdx.x];
    for (int offset = 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xf, v, offset);
    }
    if (threadIdx.x == 0) {
        out[0] = v;
    }
}
