// A verify helper that prints and calls exit(1), over a kernel with a lost update: two
// threads do a plain `*c = *c + 1`. The host sees 1 or 2: two outcomes, the fork that sees
// 1 exits with status 1 from inside the helper. Expected: fails, 2 processes, 1 failed
// (exit 1), a race reported.
#include <cstdio>
#include <cstdlib>

__global__ void incr(int *c) { *c = *c + 1; }

static void verify(int got, int want) {
  if (got != want) {
    fprintf(stderr, "verify: got %d, want %d\n", got, want);
    exit(1);
  }
}

int main() {
  int *d, h = 0;
  cudaMalloc(&d, sizeof(int));
  cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
  incr<<<1, 2>>>(d);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  verify(h, 2);
  return 0;
}
