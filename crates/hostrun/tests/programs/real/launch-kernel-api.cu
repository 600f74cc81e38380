// Launching through the runtime API instead of `<<<...>>>`: cudaLaunchKernel with the
// kernel's address and an array of argument addresses, as libraries and generated code do.
// Thread i writes out[i] = base + i (one writer per element): {7, 8, 9, 10} in every
// execution. Expected: passes, 1 process.
#include <cassert>

__global__ void offset(int *out, int base) { out[threadIdx.x] = base + threadIdx.x; }

int main() {
  int *d, base = 7, h[4];
  cudaMalloc(&d, sizeof h);
  void *args[] = {&d, &base};
  cudaError_t e = cudaLaunchKernel((const void *)offset, dim3(1), dim3(4), args, 0, nullptr);
  assert(e == cudaSuccess);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 4; ++i) assert(h[i] == 7 + i);
  return 0;
}
