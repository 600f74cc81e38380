// An error-check macro that prints and exits, catching a real bug: the copy back asks for 8
// ints from a buffer of 4. The runtime answers cudaErrorInvalidValue (the range is outside
// the allocation), so the macro prints the error and calls exit(2), in every execution.
// Expected: fails, 1 process, exit 2, its message printed.
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                       \
  do {                                                                                    \
    cudaError_t e = (call);                                                               \
    if (e != cudaSuccess) {                                                               \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__);    \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

__global__ void ones(int *p) { p[threadIdx.x] = 1; }

int main() {
  int *d;
  int h[8];
  CHECK(cudaMalloc(&d, 4 * sizeof(int)));
  ones<<<1, 4>>>(d);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost));
  return 0;
}
