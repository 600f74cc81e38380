// One kernel writes, the host copies back and checks: every execution leaves out[i] = 2*i,
// so one outcome, no fork, and the assert holds. Expected: passes, no race.
#include <cassert>
#include <cstdio>
#include <vector>

__global__ void twice(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2 * i;
}

int main() {
  const int n = 4;
  std::vector<int> h(n, -1);
  int *d;
  cudaMalloc(&d, n * sizeof(int));
  twice<<<2, 2>>>(d, n);
  cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) assert(h[i] == 2 * i);
  cudaFree(d);
  printf("ok\n");
  return 0;
}
