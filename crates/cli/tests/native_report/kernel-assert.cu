// Message passing without release/acquire, checked by an assert in the kernel: thread 0 writes
// x (plain) and then exchanges y to 1 (relaxed, line 11); thread 1, having read y=1 (line 12),
// asserts x == 1. Nothing orders the write of x before the exchange, so thread 1 may read x=0
// from the initial value: the kernel's assert fails in that execution (and x races). The host
// never looks at x: its one process exits 0. Expected: No (racy), an assertion in a kernel can
// fail, with the witness: t0's exchange reads y=0 (initial), t1 reads y=1 from t0's line 11 and
// x=0 from the initial value. (The host's std::vector keeps the interpreted harness away.)
#include <cassert>
#include <vector>
__global__ void k(int *x, int *y) {
  if (threadIdx.x == 0) { *x = 1; atomicExch(y, 1); }
  else { if (atomicAdd(y, 0) == 1) { assert(*x == 1); } }
}

int main() {
  std::vector<int> h(1, 0);
  int *x, *y;
  cudaMalloc(&x, sizeof(int));
  cudaMalloc(&y, sizeof(int));
  cudaMemcpy(x, h.data(), sizeof(int), cudaMemcpyHostToDevice);
  k<<<1, 2>>>(x, y);
  cudaDeviceSynchronize();
  return 0;
}
