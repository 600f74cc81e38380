// Mapped host memory asked for by the flag's value (2 is cudaHostAllocMapped), which the
// split's search for names cannot see: the runtime refuses the call at its line (not a silent
// success), the process is stopped, and the run is not complete. Expected: a finding naming
// cudaHostAlloc at line 10, no failed process.
__global__ void set(int *p) { *p = 1; }

int main() {
  int *h;
  unsigned flags = 2;
  cudaHostAlloc(&h, sizeof(int), flags);
  return 0;
}
