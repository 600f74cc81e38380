// A kernel whose index, read from memory, is past the end of `a` (2 elements): the store of
// line 10 is out of bounds in every execution, a fault on the device at line 10. The process
// is stopped there (its synchronization, line 20, gets no outcome), the result is Unknown.
// (The host's std::vector keeps the interpreted harness from taking the file over.)
#include <cassert>
#include <vector>

__global__ void k(const int *ip, int *a) {
  int i = *ip;
  a[i] = 1;
}

int main() {
  std::vector<int> h = {5, 0, 0};
  int *ip, *a;
  cudaMalloc(&ip, sizeof(int));
  cudaMalloc(&a, 2 * sizeof(int));
  cudaMemcpy(ip, h.data(), sizeof(int), cudaMemcpyHostToDevice);
  k<<<1, 1>>>(ip, a);
  cudaDeviceSynchronize();
  return 0;
}
