// A device-query helper as the samples have it: count the devices, read the properties,
// print them, pick the block size from maxThreadsPerBlock (capped at 4). The answers come
// from the platform profile; the kernel writes out[i] = warpSize-independent i + 1 (one
// writer per element). Expected: passes, 1 process.
#include <algorithm>
#include <cstdio>

__global__ void plus1(int *out) { out[threadIdx.x] = threadIdx.x + 1; }

static int pick_block() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) return -1;
  cudaSetDevice(0);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("device 0: %s, sm %d.%d, %d SMs, max %d threads per block\n", prop.name, prop.major,
         prop.minor, prop.multiProcessorCount, prop.maxThreadsPerBlock);
  return std::min(prop.maxThreadsPerBlock, 4);
}

int main() {
  int block = pick_block();
  if (block < 1) return 1;
  int *d, h[4] = {0, 0, 0, 0};
  cudaMalloc(&d, sizeof h);
  plus1<<<1, block>>>(d);
  cudaMemcpy(h, d, block * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < block; ++i)
    if (h[i] != i + 1) return 1;
  return 0;
}
