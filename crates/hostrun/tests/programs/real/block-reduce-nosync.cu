// The reduction with the barrier after the loads left out: at the first step thread t < 2
// may read s[t + 2] before thread t + 2 stored it (a race on shared memory), and then sees
// the initial value the front-end gives shared memory (0), losing that term: the sum is 10,
// or less. Expected: fails, a race reported, at least 2 processes.
#include <cassert>

__global__ void reduce(const int *x, int *out) {
  __shared__ int s[4];
  int t = threadIdx.x;
  s[t] = x[t];
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
