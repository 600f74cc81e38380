// Managed memory as the "unified memory" samples use it: the host fills the array through
// the managed pointer, the kernel scales it in place (one writer per element), the host
// synchronizes and then reads it. Nothing touches the array while the kernel runs.
// Expected: passes, 1 process (the native path runs it: no concurrent host access).
#include <cstdio>

__global__ void scale(float *x, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= k;
}

int main() {
  const int n = 6;
  float *x;
  cudaMallocManaged(&x, n * sizeof(float));
  for (int i = 0; i < n; ++i) x[i] = (float)i;
  scale<<<2, 3>>>(x, 0.5f, n);
  cudaDeviceSynchronize();
  for (int i = 0; i < n; ++i)
    if (x[i] != 0.5f * i) {
      printf("x[%d] = %f\n", i, x[i]);
      return 1;
    }
  cudaFree(x);
  return 0;
}
