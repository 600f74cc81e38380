// The last-block pattern without fences: the partial store and the ticket RMW are not
// ordered for the other block, so the last block's read of the other partial races with
// its store and may read 0 (the cudaMemset). The total is 3, or 1 / 2 when the other's
// partial is missed. Expected: fails, a race reported, at least 2 processes.
#include <cassert>

__global__ void reduce(int *partial, unsigned *count, int *total) {
  int b = blockIdx.x;
  partial[b] = b + 1;
  unsigned ticket = atomicAdd(count, 1u);
  if (ticket == gridDim.x - 1) {
    *total = partial[0] + partial[1];
  }
}

int main() {
  int *partial, *total;
  unsigned *count;
  cudaMalloc(&partial, 2 * sizeof(int));
  cudaMalloc(&total, sizeof(int));
  cudaMalloc(&count, sizeof(unsigned));
  cudaMemset(partial, 0, 2 * sizeof(int));
  cudaMemset(count, 0, sizeof(unsigned));
  cudaMemset(total, 0, sizeof(int));
  reduce<<<2, 1>>>(partial, count, total);
  int h = 0;
  cudaMemcpy(&h, total, sizeof h, cudaMemcpyDeviceToHost);
  assert(h == 3);
  return 0;
}
