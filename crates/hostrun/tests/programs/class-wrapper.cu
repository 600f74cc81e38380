// Device memory owned by a template class from a helper header, every call wrapped in an
// error-check macro that exits, data in std::vector: the host uploads 1..4, the kernel
// doubles each element (one thread per element, no sharing), the host checks 2, 4, 6, 8.
// One outcome, no race. Expected: passes.
#include "helpers.h"
#include <numeric>
#include <vector>

__global__ void scale(float *v, float k, int n) {
  int i = threadIdx.x;
  if (i < n) v[i] = v[i] * k;
}

int main() {
  std::vector<float> h(4);
  std::iota(h.begin(), h.end(), 1.0f);
  DeviceBuffer<float> d(h.size());
  d.upload(h.data());
  scale<<<1, 4>>>(d.get(), 2.0f, (int)d.size());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  d.download(h.data());
  for (size_t i = 0; i < h.size(); ++i) {
    if (h[i] != 2.0f * (i + 1)) {
      fprintf(stderr, "h[%zu] = %f\n", i, h[i]);
      return 1;
    }
  }
  return 0;
}
