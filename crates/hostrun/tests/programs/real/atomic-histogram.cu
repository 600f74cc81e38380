// A histogram with atomics: 4 threads, thread i adds 1 to bins[i % 2]. Atomic RMWs on a bin
// lose no update: bins = {2, 2} in every execution. Expected: passes, 1 process, no race.
#include <cassert>
#include <vector>

__global__ void histogram(const int *data, int *bins, int n) {
  int i = threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i] % 2], 1);
}

int main() {
  std::vector<int> data = {0, 1, 2, 3};
  int *dd, *db;
  cudaMalloc(&dd, data.size() * sizeof(int));
  cudaMalloc(&db, 2 * sizeof(int));
  cudaMemcpy(dd, data.data(), data.size() * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(db, 0, 2 * sizeof(int));
  histogram<<<1, 4>>>(dd, db, (int)data.size());
  int bins[2];
  cudaMemcpy(bins, db, sizeof bins, cudaMemcpyDeviceToHost);
  assert(bins[0] == 2 && bins[1] == 2);
  return 0;
}
