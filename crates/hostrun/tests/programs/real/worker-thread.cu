// A host worker thread launching and checking while the main thread waits on join: host
// threads run beside the kernels, which only the interpreted harness explores.
// Expected: the interpreted harness, at line 18 (std::thread).
#include <cassert>
#include <thread>

__global__ void one(int *p) { *p = 1; }

static void worker(int *d, int *seen) {
  one<<<1, 1>>>(d);
  cudaMemcpy(seen, d, sizeof(int), cudaMemcpyDeviceToHost);
}

int main() {
  int *d;
  cudaMalloc(&d, sizeof(int));
  int seen = 0;
  std::thread t(worker, d, &seen);
  t.join();
  assert(seen == 1);
  return 0;
}
