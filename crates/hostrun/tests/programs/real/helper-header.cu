// Helpers from the project's own header, found with -I (include/common/check.h): an
// error-check function that exits, a verify template, a host timer. Each thread of 2 blocks
// of 2 adds its global index into out[0] with atomicAdd: 0 + 1 + 2 + 3 = 6 in every
// execution (atomic RMWs lose no update). Expected: passes, 1 process.
#include "common/check.h"

__global__ void sum_ids(int *out) { atomicAdd(out, (int)(blockIdx.x * blockDim.x + threadIdx.x)); }

int main() {
  HostTimer t;
  int *d;
  checkCuda(cudaMalloc(&d, sizeof(int)));
  checkCuda(cudaMemset(d, 0, sizeof(int)));
  sum_ids<<<2, 2>>>(d);
  checkCuda(cudaGetLastError());
  checkCuda(cudaDeviceSynchronize());
  int h = -1;
  checkCuda(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  expect_eq(h, 6, "sum of thread ids");
  std::printf("ok in %.3f ms\n", t.ms());
  return 0;
}
