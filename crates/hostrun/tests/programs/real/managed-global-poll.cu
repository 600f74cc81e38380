// A `__managed__` flag polled by the host between the launch and the synchronization: the
// host waits for the kernel through memory. The native path sends the file to the
// interpreted harness at line 13, where the loop reads `ready`.
// Expected: the interpreted harness, at line 13.
#include <cuda/atomic>

__managed__ int ready = 0;

__global__ void raise_ready() { atomicExch(&ready, 1); }

int main() {
  raise_ready<<<1, 1>>>();
  while (ready == 0) {
  }
  cudaDeviceSynchronize();
  return 0;
}
