// Message passing between two blocks: block 0 writes the data, fences, then sets the flag
// with atomicExch; block 1 spins on the flag with atomicAdd(flag, 0), fences, then copies
// the data out. The fences order data before flag and flag before the read: block 1 sees
// 42 in every execution. Expected: passes, 1 process.
#include <cassert>

__global__ void mp(int *data, int *flag, int *out) {
  if (blockIdx.x == 0) {
    *data = 42;
    __threadfence();
    atomicExch(flag, 1);
  } else {
    while (atomicAdd(flag, 0) == 0) {
    }
    __threadfence();
    *out = *data;
  }
}

int main() {
  int *data, *flag, *out, h = 0;
  cudaMalloc(&data, sizeof(int));
  cudaMalloc(&flag, sizeof(int));
  cudaMalloc(&out, sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  mp<<<2, 1>>>(data, flag, out);
  cudaDeviceSynchronize();
  cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost);
  assert(h == 42);
  return 0;
}
