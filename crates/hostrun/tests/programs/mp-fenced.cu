// The same message passing with a fence before the flag is raised and after it is read, the
// flag accessed atomically (atomicExch; atomicAdd of 0): if block 1 reads flag = 1 it reads
// data = 1 (the fences synchronize at device scope), and it reads data only then, so nothing
// races. Outcomes of (seen flag, seen data): (0, 0) and (1, 1), never (1, 0): two processes,
// neither fails. Expected: passes, no race.
#include <cstdio>

__global__ void mp(int *data, int *flag, int *seen) {
  if (blockIdx.x == 0) {
    *data = 1;
    __threadfence();
    atomicExch(flag, 1);
  } else {
    int f = atomicAdd(flag, 0);
    __threadfence();
    int d = 0;
    if (f == 1) d = *data;
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
  if (h[0] == 1 && h[1] != 1) {
    printf("stale data after the flag\n");
    return 1;
  }
  return 0;
}
