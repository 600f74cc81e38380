// Not supported in the language view: an array of three dimensions, refused at its
// declarator (line 5, column 20). The PTX view checks the kernel as NVRTC compiles it.
__global__ void cube(int *out) {
    // A 2 x 2 x 2 cube, one plane a thread of a block.
    __shared__ int c[2][2][2];
    c[threadIdx.x][0][0] = 1;
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
