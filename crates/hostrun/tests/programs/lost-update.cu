// Two threads do a plain `*c += 1` on one word: the racy read-modify-writes may lose an
// update, so the host can see 1 or 2. Expected: a data race reported, two outcomes (the
// process forks once), and the fork that sees 1 fails its assert.
#include <cassert>

__global__ void inc(int *c) { *c += 1; }

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
