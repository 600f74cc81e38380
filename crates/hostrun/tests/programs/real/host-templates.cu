// Host templates around a non-template kernel: a launcher templated on the block size, a
// verify template over the element type, and a typedef. fill writes out[i] = i + 100 (one
// writer per element): one outcome, every check holds. Expected: passes, 1 process.
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef unsigned int uint;

__global__ void fill(uint *out, uint base) { out[threadIdx.x] = threadIdx.x + base; }

template <int Block> void launch_fill(uint *d, uint base) { fill<<<1, Block>>>(d, base); }

template <class T> bool all_equal_plus(const std::vector<T> &v, T base) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<T>(i) + base) return false;
  return true;
}

int main() {
  constexpr int kBlock = 4;
  uint *d;
  cudaMalloc(&d, kBlock * sizeof(uint));
  launch_fill<kBlock>(d, 100u);
  std::vector<uint> h(kBlock);
  cudaMemcpy(h.data(), d, kBlock * sizeof(uint), cudaMemcpyDeviceToHost);
  if (!all_equal_plus(h, 100u)) {
    puts("FAILED");
    exit(EXIT_FAILURE);
  }
  puts("PASSED");
  return 0;
}
