// Three kernels on three non-blocking streams chained by events: stage k reads what stage
// k - 1 wrote, after waiting for its event. The waits order the stages, so the final value
// is ((1 + 1) * 3) - 2 = 4 in every execution, no race. Expected: passes, 1 process.
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
  cudaEvent_t e1, e2;
  cudaEventCreate(&e1);
  cudaEventCreate(&e2);
  add1<<<1, 1, 0, s1>>>(d);
  cudaEventRecord(e1, s1);
  cudaStreamWaitEvent(s2, e1, 0);
  mul3<<<1, 1, 0, s2>>>(d);
  cudaEventRecord(e2, s2);
  cudaStreamWaitEvent(s3, e2, 0);
  sub2<<<1, 1, 0, s3>>>(d);
  cudaStreamSynchronize(s3);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  assert(h == 4);
  return 0;
}
