// Polling a stream's completion with cudaStreamQuery while doing host work: the host loop
// runs while the kernel does. Expected: the interpreted harness, at line 15.
#include <cstdio>

__global__ void work(int *p) { *p = 7; }

int main() {
  int *d;
  cudaMalloc(&d, sizeof(int));
  cudaStream_t s;
  cudaStreamCreate(&s);
  work<<<1, 1, 0, s>>>(d);
  long spins = 0;
  // the host does other work until the stream is done
  while (cudaStreamQuery(s) == cudaErrorNotReady) ++spins;
  int h = 0;
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d after %ld spins\n", h, spins);
  return h == 7 ? 0 : 1;
}
