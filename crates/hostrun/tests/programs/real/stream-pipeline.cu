// A two-stream pipeline: each stream takes half of the data through an async upload, a
// kernel and an async download, then the host synchronizes both streams and verifies.
// Within a stream the three steps are ordered; the halves are disjoint; so out[i] = 2 * in[i]
// in every execution. Expected: passes, 1 process.
#include <cstdio>
#include <vector>

__global__ void twice(const int *in, int *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = 2 * in[i];
}

int main() {
  const int n = 8, half = n / 2;
  std::vector<int> in(n), out(n, 0);
  for (int i = 0; i < n; ++i) in[i] = i + 1;
  int *din, *dout;
  cudaMalloc(&din, n * sizeof(int));
  cudaMalloc(&dout, n * sizeof(int));
  cudaStream_t s[2];
  for (auto &st : s) cudaStreamCreate(&st);
  for (int k = 0; k < 2; ++k) {
    int off = k * half;
    cudaMemcpyAsync(din + off, in.data() + off, half * sizeof(int), cudaMemcpyHostToDevice, s[k]);
    twice<<<1, half, 0, s[k]>>>(din + off, dout + off, half);
    cudaMemcpyAsync(out.data() + off, dout + off, half * sizeof(int), cudaMemcpyDeviceToHost, s[k]);
  }
  for (auto &st : s) cudaStreamSynchronize(st);
  for (int i = 0; i < n; ++i)
    if (out[i] != 2 * (i + 1)) {
      printf("out[%d] = %d\n", i, out[i]);
      return 1;
    }
  for (auto &st : s) cudaStreamDestroy(st);
  return 0;
}
