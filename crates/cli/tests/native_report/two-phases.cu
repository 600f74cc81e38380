// Two observations on the way to a failure. Phase 1: two threads do a plain `*c += 1` (line 8)
// on a word the host set to 0, so the host's synchronization (line 18) sees 1 or 2: two
// outcomes. Phase 2: one thread copies the word (line 9) into another; the copy back (line
// 21) has one outcome. The process that saw 1 fails its assert (line 22), and the executions
// that led there are: phase 1, both threads read c=0 from the initial value; phase 2, the
// copy read in=1 from the initial value (the memory phase 1 left).
#include <cassert>
__global__ void inc(int *c) { *c += 1; }
__global__ void copy(const int *in, int *out) { *out = *in; }

int main() {
  int *c, *d;
  cudaMalloc(&c, sizeof(int));
  cudaMalloc(&d, sizeof(int));
  cudaMemset(c, 0, sizeof(int));
  cudaMemset(d, 0, sizeof(int));
  inc<<<1, 2>>>(c);
  cudaDeviceSynchronize();
  copy<<<1, 1>>>(c, d);
  int h = 0;
  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  assert(h == 2);
  return 0;
}
