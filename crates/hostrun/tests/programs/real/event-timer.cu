// Timing with events as benchmarks do: start/stop recorded around the launch, elapsed time
// printed (scopecheck answers 0 ms: no verdict depends on time). The kernel writes
// out[i] = i (one writer per element). Expected: passes, 1 process.
#include <cstdio>

__global__ void iota(int *out) { out[threadIdx.x] = threadIdx.x; }

int main() {
  int *d, h[4];
  cudaMalloc(&d, sizeof h);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  iota<<<1, 4>>>(d);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = -1.0f;
  cudaEventElapsedTime(&ms, start, stop);
  printf("kernel: %.3f ms\n", ms);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 4; ++i)
    if (h[i] != i) return 1;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms >= 0.0f ? 0 : 1;
}
