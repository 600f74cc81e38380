// The same total added with a plain `+=`: updates may be lost, so after the sync the host can
// read 20 or less; the forks that read less than 20 fail their assert, and the race on
// `total` is reported. Expected: No (racy).
#include <cassert>

__managed__ int total = 0;

__global__ void add(const int *v) { total += v[threadIdx.x]; }

int main() {
  int *v;
  cudaMallocManaged(&v, 2 * sizeof(int));
  v[0] = 1;
  v[1] = 2;
  add<<<1, 2>>>(v);
  cudaDeviceSynchronize();
  assert(total == 3);
  return 0;
}
