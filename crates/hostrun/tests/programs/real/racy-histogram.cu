// The same histogram with a plain increment: bins[b] += 1 by two threads per bin is a data
// race, and either thread's update may be lost. Per bin the host sees 1 or 2, independently:
// 4 outcomes {1,1} {1,2} {2,1} {2,2}; only {2,2} passes the assert, the other 3 forks abort.
// Expected: fails, 4 processes, 3 failed, a race reported.
#include <cassert>

__global__ void histogram(int *bins) { bins[threadIdx.x % 2] += 1; }

int main() {
  int *db;
  cudaMalloc(&db, 2 * sizeof(int));
  cudaMemset(db, 0, 2 * sizeof(int));
  histogram<<<1, 4>>>(db);
  cudaDeviceSynchronize();
  int bins[2];
  cudaMemcpy(bins, db, sizeof bins, cudaMemcpyDeviceToHost);
  assert(bins[0] == 2 && bins[1] == 2);
  return 0;
}
