// The chain with the second wait left out: sub2 on s3 runs concurrently with mul3 on s2.
// Both read and write v[0] with plain accesses: a race. From v = 2 (after add1, which mul3
// waits for): mul3 then sub2 gives 4; sub2 then mul3 gives 0; interleaved, a lost update
// gives 6 (mul3's write last) or 0 (sub2's write last, reading 2). The host sees 4 or 0 or
// 6: the assert holds only for 4. Expected: fails, a race reported, at least 2 processes.
#include <cassert>

__global__ void add1(int *v) { v[0] = v[0] + 1; }
__global__ void mul3(int *v) { v[0] = v[0] * 3; }
__global__ void sub2(int *v) { v[0] = v[0] - 2; }

int main() {
  int *d, h = 1;
  cudaMalloc(&d, sizeof(int));
  cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
  cudaStream_t s1, s2, s3;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking);
  cudaEvent_t e1;
  cudaEventCreate(&e1);
  add1<<<1, 1, 0, s1>>>(d);
  cudaEventRecord(e1, s1);
  cudaStreamWaitEvent(s2, e1, 0);
  cudaStreamWaitEvent(s3, e1, 0);
  mul3<<<1, 1, 0, s2>>>(d);
  sub2<<<1, 1, 0, s3>>>(d);
  cudaDeviceSynchronize();
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  assert(h == 4);
  return 0;
}
