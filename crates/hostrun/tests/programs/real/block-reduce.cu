// A shared-memory tree reduction in one block of 4: each thread loads x[i] into shared
// memory, then two halving steps, each after __syncthreads; thread 0 writes the sum. The
// barriers order every shared write before the reads of the next step: 1 + 2 + 3 + 4 = 10
// in every execution. Expected: passes, 1 process.
#include <cassert>

__global__ void reduce(const int *x, int *out) {
  __shared__ int s[4];
  int t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  for (int stride = 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) *out = s[0];
}

int main() {
  int h[4] = {1, 2, 3, 4}, r = 0;
  int *dx, *dr;
  cudaMalloc(&dx, sizeof h);
  cudaMalloc(&dr, sizeof(int));
  cudaMemcpy(dx, h, sizeof h, cudaMemcpyHostToDevice);
  reduce<<<1, 4>>>(dx, dr);
  cudaMemcpy(&r, dr, sizeof r, cudaMemcpyDeviceToHost);
  assert(r == 10);
  return 0;
}
