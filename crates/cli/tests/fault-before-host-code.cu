// A kernel whose run-time index leaves its array, followed by host code that waits for it: the
// host code is never launched in the faulting execution, which must not hide the fault.
__device__ int idx;

__global__ void k(int* a) {
  int i = idx;
  a[i + 2] = 1;
}

void scopecheck_main() {
  int* a;
  cudaMallocManaged(&a, 2 * sizeof(int));
  a[0] = 0;
  k<<<1, 1>>>(a);
  cudaDeviceSynchronize();
  assert(a[0] == 0);

}
