// Two launches on the legacy default stream: the second starts after the first finished, so
// it reads every element the first wrote. out[i] = in[i] + 1 = 10 * i + 1 in every execution:
// one outcome, no race, the host's loop of checks holds. Expected: passes.
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void fill(int *in) { in[threadIdx.x] = 10 * threadIdx.x; }
__global__ void next(const int *in, int *out) { out[threadIdx.x] = in[threadIdx.x] + 1; }

int main() {
  const int n = 4;
  int *in, *out;
  cudaMalloc(&in, n * sizeof(int));
  cudaMalloc(&out, n * sizeof(int));
  fill<<<1, n>>>(in);
  next<<<1, n>>>(in, out);
  std::vector<int> h(n);
  cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) {
    if (h[i] != 10 * i + 1) {
      printf("out[%d] = %d\n", i, h[i]);
      return EXIT_FAILURE;
    }
  }
  return 0;
}
