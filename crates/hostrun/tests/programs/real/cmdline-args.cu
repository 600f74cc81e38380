// A command-line helper as tests write it: the element count from argv with a default (no
// arguments are given: argc == 1, n = 5), parsed with strtol. The kernel writes out[i] = -i
// (one writer per element); the host checks every element. Expected: passes, 1 process.
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void negate(int *out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = -i;
}

static int arg_int(int argc, char **argv, const char *name, int dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return (int)std::strtol(argv[i + 1], nullptr, 10);
  return dflt;
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, "-n", 5);
  int *d, h[16];
  cudaMalloc(&d, n * sizeof(int));
  negate<<<1, n>>>(d, n);
  cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i)
    if (h[i] != -i) return EXIT_FAILURE;
  printf("n = %d ok\n", n);
  return EXIT_SUCCESS;
}
