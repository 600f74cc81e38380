// What the interpreted harness refused first in real tests, all at once: host globals, a
// file-scope string constant, an enum class, a typedef, `const int n` as an array bound, a
// `?:` constant, malloc'd host buffers and a host class with a static member. The kernel
// writes out[i] = i * i (one writer per element). Expected: passes, 1 process.
#include <cstdio>
#include <cstdlib>

static const char *kTestName = "host-globals";
enum class Mode { Quick, Full };
typedef float real;
const int n = 4;
const int blocks = n > 2 ? 1 : 2;
int g_failures = 0;

struct Counter {
  static int checks;
};
int Counter::checks = 0;

__global__ void sq(int *out) { out[threadIdx.x] = threadIdx.x * threadIdx.x; }

int main() {
  Mode mode = Mode::Full;
  int h[n];
  int *expected = (int *)malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) expected[i] = i * i;
  int *d;
  cudaMalloc(&d, sizeof h);
  sq<<<blocks, n>>>(d);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n && mode == Mode::Full; ++i, ++Counter::checks)
    if (h[i] != expected[i]) ++g_failures;
  real ratio = (real)g_failures / n;
  printf("%s: %d checks, %d failures (%.2f)\n", kTestName, Counter::checks, g_failures, ratio);
  free(expected);
  return g_failures == 0 ? 0 : 1;
}
