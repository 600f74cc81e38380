// A grid-stride loop (2 blocks x 2 threads over 8 elements, 2 elements per thread) adding
// each element into a total with atomicAdd after a cudaMemset to 0: 1 + 2 + ... + 8 = 36 in
// every execution. Expected: passes, 1 process.
#include <cassert>
#include <numeric>
#include <vector>

__global__ void total(const int *x, int n, int *sum) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(sum, x[i]);
}

int main() {
  std::vector<int> x(8);
  std::iota(x.begin(), x.end(), 1);
  int *dx, *ds;
  cudaMalloc(&dx, x.size() * sizeof(int));
  cudaMalloc(&ds, sizeof(int));
  cudaMemcpy(dx, x.data(), x.size() * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(ds, 0, sizeof(int));
  total<<<2, 2>>>(dx, (int)x.size(), ds);
  int s = 0;
  cudaMemcpy(&s, ds, sizeof s, cudaMemcpyDeviceToHost);
  assert(s == std::accumulate(x.begin(), x.end(), 0));
  return 0;
}
