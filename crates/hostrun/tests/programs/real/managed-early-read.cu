// The host reads a managed result right after the launch, before synchronizing: it may see
// the kernel's write or not, concurrently with it. Only the interpreted harness explores a
// host access during a kernel: the native path sends the file there, naming line 15 where
// `out` is read. Expected: the interpreted harness, at line 15.
#include <cstdio>

__global__ void answer(int *out) { *out = 42; }

int main() {
  int *out;
  cudaMallocManaged(&out, sizeof(int));
  *out = 0;
  answer<<<1, 1>>>(out);
  int seen =
      *out;
  cudaDeviceSynchronize();
  printf("%d\n", seen);
  return 0;
}
