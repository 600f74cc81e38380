// The same count with atomicAdd: every execution leaves 2, one outcome, no race. Expected:
// passes.
#include <cassert>

__global__ void inc(int *c) { atomicAdd(c, 1); }

int main() {
  int *d;
  cudaMalloc(&d, sizeof(int));
  cudaMemset(d, 0, sizeof(int));
  inc<<<1, 2>>>(d);
  cudaDeviceSynchronize();
  int h = 0;
  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  assert(h == 2);
  return 0;
}
