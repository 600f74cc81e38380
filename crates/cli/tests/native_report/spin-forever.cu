// A kernel that waits for a flag nobody sets: its one thread reads flag=0 (line 8) forever,
// so no execution of the launch finishes and the host's synchronization (line 16) would
// wait forever. Expected: a hang reported at line 8 (the thread spins reading flag=0), the
// process stopped by scopecheck, the result Unknown. (The host's std::vector keeps the
// interpreted harness from reading the file, so the native report is the one given.)
#include <cstdio>
#include <vector>
__global__ void wait(volatile int *flag) { while (atomicAdd((int *)flag, 0) == 0) { } }

int main() {
  std::vector<int> h(1, 0);
  int *flag;
  cudaMalloc(&flag, sizeof(int));
  cudaMemcpy(flag, h.data(), sizeof(int), cudaMemcpyHostToDevice);
  wait<<<1, 1>>>(flag);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
