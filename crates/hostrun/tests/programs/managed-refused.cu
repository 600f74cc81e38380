// cudaMallocManaged is not modelled by the native path yet: the call is refused with its line
// (not a silent success), the process is stopped, and the run is not complete. Expected:
// a finding naming cudaMallocManaged at line 9, no failed process.
#include <cassert>

__global__ void set(int *p) { *p = 1; }
int main() {
  int *p;
  cudaMallocManaged(&p, sizeof(int));
  set<<<1, 1>>>(p);
  cudaDeviceSynchronize();
  assert(*p == 1);
  return 0;
}
