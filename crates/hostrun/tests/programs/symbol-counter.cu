// A `__device__` counter set to 10 by cudaMemcpyToSymbol, then each of 4 threads adds 1
// atomically: every execution leaves 14, which cudaMemcpyFromSymbol reads back. One outcome,
// no race. Expected: passes.
#include <cassert>

__device__ int counter = 3;

__global__ void add() { atomicAdd(&counter, 1); }

int main() {
  int h = 0;
  cudaMemcpyFromSymbol(&h, counter, sizeof(int));
  assert(h == 3); // the variable's initialiser, through its host shadow
  int ten = 10;
  cudaMemcpyToSymbol(counter, &ten, sizeof(int));
  add<<<2, 2>>>();
  cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(&h, counter, sizeof(int));
  assert(h == 14);
  return 0;
}
