// A verification bug of the host's own: only the first half of c is copied back, and the
// loop checks all of it. c was filled with 0 on the host; c[4] stays 0 while 3 * 4 = 12 is
// expected, in every execution (the kernel is deterministic: one writer per element).
// Expected: fails, 1 process, exit 1.
#include <cstdio>
#include <vector>

__global__ void triple(int *c, int n) {
  int i = threadIdx.x;
  if (i < n) c[i] = 3 * i;
}

int main() {
  const int n = 8;
  std::vector<int> c(n, 0);
  int *dc;
  cudaMalloc(&dc, n * sizeof(int));
  triple<<<1, n>>>(dc, n);
  cudaMemcpy(c.data(), dc, n / 2 * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    if (c[i] != 3 * i) {
      printf("mismatch at %d: %d\n", i, c[i]);
      return 1;
    }
  }
  return 0;
}
