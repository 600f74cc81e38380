// Vector addition as the samples write it: std::vector inputs, three device buffers, a grid
// of 2 blocks x 4 threads, one element per thread, a host loop that verifies. Each c[i] is
// written by one thread only from a[i] and b[i], copied in before the launch: one outcome,
// c[i] = 3i, no race. Expected: passes, 1 process.
#include <cstdio>
#include <vector>

__global__ void vecAdd(const int *a, const int *b, int *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 8;
  std::vector<int> a(n), b(n), c(n, -1);
  for (int i = 0; i < n; ++i) {
    a[i] = i;
    b[i] = 2 * i;
  }
  int *da, *db, *dc;
  size_t bytes = n * sizeof(int);
  cudaMalloc(&da, bytes);
  cudaMalloc(&db, bytes);
  cudaMalloc(&dc, bytes);
  cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
  vecAdd<<<(n + 3) / 4, 4>>>(da, db, dc, n);
  cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    if (c[i] != 3 * i) {
      printf("mismatch at %d: %d\n", i, c[i]);
      return 1;
    }
  }
  printf("PASSED\n");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return 0;
}
