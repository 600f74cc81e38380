// Pinning an existing host array with cudaHostRegister and handing its device alias to the
// kernel (zero-copy): the kernel writes host memory directly. Expected: the interpreted
// harness, at line 12 (cudaHostRegister).
#include <cstdio>
#include <vector>

__global__ void mark(int *p) { p[threadIdx.x] = 1; }

int main() {
  std::vector<int> h(4, 0);
  int *d = nullptr;
  cudaHostRegister(h.data(), h.size() * sizeof(int), cudaHostRegisterMapped);
  cudaHostGetDevicePointer(&d, h.data(), 0);
  mark<<<1, 4>>>(d);
  cudaDeviceSynchronize();
  cudaHostUnregister(h.data());
  return h[0] == 1 ? 0 : 1;
}
