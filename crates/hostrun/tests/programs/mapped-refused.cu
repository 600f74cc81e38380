// Zero-copy host memory (cudaHostAlloc with cudaHostAllocMapped): the host may touch it while
// a kernel runs, which only the interpreted harness explores. Splitting finds the flag's name
// in the host code, and the native path sends the file to the interpreted harness, naming
// line 9 (HostError::Concurrent); nothing is built or run.
__global__ void set(int *p) { *p = 1; }

int main() {
  int *h;
  cudaHostAlloc(&h, sizeof(int), cudaHostAllocMapped);
  return 0;
}
