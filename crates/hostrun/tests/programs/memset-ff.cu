// cudaMemset of 0xff bytes makes each int -1; the kernel adds its thread index: out = {-1, 0,
// 1, 2}. One outcome. Expected: passes.
#include <cassert>

__global__ void add(int *v) { v[threadIdx.x] += threadIdx.x; }

int main() {
  int *v;
  cudaMalloc(&v, 4 * sizeof(int));
  cudaMemset(v, 0xff, 4 * sizeof(int));
  add<<<1, 4>>>(v);
  int h[4];
  cudaMemcpy(h, v, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 4; ++i) assert(h[i] == i - 1);
  return 0;
}
