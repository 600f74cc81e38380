// Message passing with plain accesses: block 0 writes data then flag, block 1 reads flag then
// data. Nothing orders them, so the model allows block 1 to see flag = 1 and data = 0 (and the
// accesses race). The host sees up to three outcomes of (seen flag, seen data); in the one with
// (1, 0) its check fails and it returns 1. Expected: races reported, some fork exits 1.
#include <cstdio>

__global__ void mp(int *data, int *flag, int *seen) {
  if (blockIdx.x == 0) {
    *data = 1;
    *flag = 1;
  } else {
    int f = *flag;
    int d = *data;
    seen[0] = f;
    seen[1] = d;
  }
}

int main() {
  int *data, *flag, *seen;
  cudaMalloc(&data, sizeof(int));
  cudaMalloc(&flag, sizeof(int));
  cudaMalloc(&seen, 2 * sizeof(int));
  mp<<<2, 1>>>(data, flag, seen);
  int h[2];
  cudaMemcpy(h, seen, sizeof h, cudaMemcpyDeviceToHost);
  if (h[0] == 1 && h[1] == 0) {
    printf("stale data after the flag\n");
    return 1;
  }
  return 0;
}
