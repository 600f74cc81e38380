// The last-block pattern with 2 blocks of 1 thread: each block stores its partial sum, fences
// (__threadfence), then takes a ticket with atomicAdd; the block with ticket 1 (the last)
// reads both partials and writes the total. The fence orders the partial before the ticket,
// and the last block's ticket RMW reads the other's: it sees both partials (1 + 2 = 3).
// Under scoped C11 the ticket RMWs are relaxed, so the reading needs the fences on both
// sides; the last block fences after its ticket too. Expected: passes, 1 process.
#include <cassert>

__global__ void reduce(int *partial, unsigned *count, int *total) {
  int b = blockIdx.x;
  partial[b] = b + 1;
  __threadfence();
  unsigned ticket = atomicAdd(count, 1u);
  if (ticket == gridDim.x - 1) {
    __threadfence();
    *total = partial[0] + partial[1];
  }
}

int main() {
  int *partial, *total;
  unsigned *count;
  cudaMalloc(&partial, 2 * sizeof(int));
  cudaMalloc(&total, sizeof(int));
  cudaMalloc(&count, sizeof(unsigned));
  cudaMemset(count, 0, sizeof(unsigned));
  cudaMemset(total, 0, sizeof(int));
  reduce<<<2, 1>>>(partial, count, total);
  int h = 0;
  cudaMemcpy(&h, total, sizeof h, cudaMemcpyDeviceToHost);
  assert(h == 3);
  return 0;
}
