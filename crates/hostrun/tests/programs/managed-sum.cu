// Managed memory: the host writes the input directly, each of 4 threads doubles its own
// element, the host reads the results directly after cudaDeviceSynchronize. A `__managed__`
// total is added to atomically. Every execution leaves {2, 4, 6, 8} and total 20: one
// outcome, no race. Expected: passes.
#include <cassert>

__managed__ int total = 0;

__global__ void twice(int *v) {
  v[threadIdx.x] *= 2;
  atomicAdd(&total, v[threadIdx.x]);
}

int main() {
  int *v;
  cudaMallocManaged(&v, 4 * sizeof(int));
  for (int i = 0; i < 4; ++i) v[i] = i + 1;
  twice<<<1, 4>>>(v);
  cudaDeviceSynchronize();
  for (int i = 0; i < 4; ++i) assert(v[i] == 2 * (i + 1));
  assert(total == 20);
  cudaFree(v);
  return 0;
}
