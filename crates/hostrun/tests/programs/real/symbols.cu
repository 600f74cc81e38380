// `__constant__` configuration set with cudaMemcpyToSymbol and a `__device__` result read
// back with cudaMemcpyFromSymbol (with an offset): each of 4 threads writes
// result[i] = factor * i (one writer per element). The host reads result[2..3] = {6, 9}.
// Expected: passes, 1 process.
#include <cassert>

__constant__ int factor;
__device__ int result[4];

__global__ void compute() { result[threadIdx.x] = factor * threadIdx.x; }

int main() {
  int f = 3;
  cudaMemcpyToSymbol(factor, &f, sizeof f);
  compute<<<1, 4>>>();
  int tail[2];
  cudaMemcpyFromSymbol(tail, result, sizeof tail, 2 * sizeof(int));
  assert(tail[0] == 6 && tail[1] == 9);
  return 0;
}
