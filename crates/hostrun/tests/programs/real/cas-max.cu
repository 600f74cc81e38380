// A maximum with an atomicCAS loop (the pre-atomicMax idiom, as often written): 2 threads
// each try to raise *m to their value v[i] = {3, 9}; a CAS that fails retries with
// the value it saw while its own is still larger. Every execution ends with the largest, 9
// (a CAS only succeeds on the value it read, so no larger value is overwritten), but the
// first read `old = *m` is a plain load racing with the other threads' CAS writes: a data
// race under scoped C11. Expected: passes in its 1 process, with a race reported.
#include <cassert>

__global__ void cas_max(const int *v, int *m) {
  int mine = v[threadIdx.x];
  int old = *m;
  while (old < mine) {
    int seen = atomicCAS(m, old, mine);
    if (seen == old) break;
    old = seen;
  }
}

int main() {
  int h[2] = {3, 9};
  int *dv, *dm, zero = 0, m = -1;
  cudaMalloc(&dv, sizeof h);
  cudaMalloc(&dm, sizeof(int));
  cudaMemcpy(dv, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemcpy(dm, &zero, sizeof zero, cudaMemcpyHostToDevice);
  cas_max<<<1, 2>>>(dv, dm);
  cudaMemcpy(&m, dm, sizeof m, cudaMemcpyDeviceToHost);
  assert(m == 9);
  return 0;
}
