// A kernel whose run-time index, read from memory, carries its pointer 4 GiB past the start of
// `a`: C and CUDA leave pointer arithmetic that leaves its allocation undefined. In the
// language view `a[i]` is an index out of `a`'s bounds; in the PTX view NVRTC computes
// `a + i * 4` in 64-bit integers, which in scopecheck's memory layout (allocation k at
// (k + 1) * 2^32) lands on the allocation after `a`, `b`: the access must be reported as a
// fault at its line, not made to `b` (which would overwrite b[0] and fail the assertion).
__global__ void k(const int* ip, int* a, int* b) {
  int i = *ip;
  b[0] = 2;
  a[i] = 1;
}

void scopecheck_main() {
  int* ip;
  int* a;
  int* b;
  cudaMallocManaged(&ip, sizeof(int));
  cudaMallocManaged(&a, 2 * sizeof(int));
  cudaMallocManaged(&b, 2 * sizeof(int));
  *ip = 1 << 30;
  a[0] = 0;
  b[0] = 0;
  k<<<1, 1>>>(ip, a, b);
  cudaDeviceSynchronize();
  assert(b[0] == 2);
}
