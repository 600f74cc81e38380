// A device-to-device copy between two kernels: produce writes a[i] = 5 * i, the copy moves
// a to b (ordered after produce on the default stream), consume writes c[i] = b[i] + 1.
// Stream order makes it deterministic: c = {1, 6, 11, 16}. Expected: passes, 1 process.
#include <cassert>

__global__ void produce(int *a) { a[threadIdx.x] = 5 * threadIdx.x; }
__global__ void consume(const int *b, int *c) { c[threadIdx.x] = b[threadIdx.x] + 1; }

int main() {
  int *a, *b, *c, h[4];
  cudaMalloc(&a, sizeof h);
  cudaMalloc(&b, sizeof h);
  cudaMalloc(&c, sizeof h);
  produce<<<1, 4>>>(a);
  cudaMemcpy(b, a, sizeof h, cudaMemcpyDeviceToDevice);
  consume<<<1, 4>>>(b, c);
  cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 4; ++i) assert(h[i] == 5 * i + 1);
  return 0;
}
