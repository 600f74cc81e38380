// The same kernel takes another branch by architecture and dialect, in both views alike:
// compiled for sm_90 in C++17 (the defaults) each thread writes its own element (no race);
// with --arch sm_80 (__CUDA_ARCH__ 800) every thread writes a[0] (a race). With
// -include tests/kernels/include/pre.h the grid stride comes from the pre-included header.
__global__ void store(int *a) {
#if __CUDA_ARCH__ >= 900 && __cplusplus >= 201703L
#ifdef STRIDE_OF_GRID
    a[(threadIdx.x + blockDim.x * blockIdx.x) % STRIDE_OF_GRID] = 1;
#else
    a[threadIdx.x + blockDim.x * blockIdx.x] = 1;
#endif
#else
    a[0] = 1;
#endif
}
