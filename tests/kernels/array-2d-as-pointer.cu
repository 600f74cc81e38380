// Not supported in the language view: a two-dimensional array used as a pointer to its rows
// (`g + 1` points at row 1, a step of a whole row, which the view's pointers to elements do
// not take), refused where `g` is used (line 8, column 31). NVRTC compiles it, and the PTX
// view checks the kernel as compiled. (`(int *)g` alone is `&g[0][0]`, which is read.)
__device__ int g[2][4];

__global__ void k(int *out) {
    const int *row1 = (int *)(g + 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = row1[threadIdx.x];
}
