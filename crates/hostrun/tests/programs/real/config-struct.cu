// A host-side configuration struct with a constructor and a method, its members passed to
// the kernel as scalars; the result checked against the struct's own formula:
// out[i] = a * i + b with a = 2, b = 5 (one writer per element). Expected: passes, 1 process.
#include <cstdio>

struct Config {
  int a, b, n;
  Config(int a_, int b_, int n_) : a(a_), b(b_), n(n_) {}
  int expected(int i) const { return a * i + b; }
};

__global__ void affine(int *out, int a, int b, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = a * i + b;
}

int main() {
  Config cfg(2, 5, 4);
  int *d, h[4];
  cudaMalloc(&d, cfg.n * sizeof(int));
  affine<<<1, cfg.n>>>(d, cfg.a, cfg.b, cfg.n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < cfg.n; ++i)
    if (h[i] != cfg.expected(i)) {
      printf("FAIL %d\n", i);
      return 1;
    }
  return 0;
}
