// Zero-copy host memory (cudaHostAlloc with cudaHostAllocMapped) is not modelled by the native
// path yet: the call is refused with its line (not a silent success), the process is stopped,
// and the run is not complete. Expected: a finding naming cudaHostAlloc at line 9, no failed
// process.
__global__ void set(int *p) { *p = 1; }

int main() {
  int *h;
  cudaHostAlloc(&h, sizeof(int), cudaHostAllocMapped);
  return 0;
}
