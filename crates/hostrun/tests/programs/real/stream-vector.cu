// Streams kept in a std::vector, one launch per stream over disjoint slices, and a
// cudaDeviceSynchronize before the copy back: out[i] = i + 10 * (stream of i).
// Expected: passes, 1 process.
#include <cassert>
#include <vector>

__global__ void tag(int *out, int s) { out[threadIdx.x] = (int)threadIdx.x + 10 * s; }

int main() {
  const int per = 2, ns = 3;
  int *d;
  cudaMalloc(&d, per * ns * sizeof(int));
  std::vector<cudaStream_t> streams(ns);
  for (auto &s : streams) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int s = 0; s < ns; ++s) tag<<<1, per, 0, streams[s]>>>(d + s * per, s);
  cudaDeviceSynchronize();
  std::vector<int> h(per * ns);
  cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost);
  for (int s = 0; s < ns; ++s)
    for (int i = 0; i < per; ++i) assert(h[s * per + i] == i + 10 * s);
  for (auto s : streams) cudaStreamDestroy(s);
  return 0;
}
