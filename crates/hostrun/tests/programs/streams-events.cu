// Two created streams: the producer on s1 writes the buffer, an event recorded on s1 after it
// is waited for by s2, whose consumer copies the buffer. The wait orders the consumer after
// the producer: out = {7, 7} in every execution, no race. Expected: passes, one process.
#include <cassert>

__global__ void produce(int *buf) { buf[threadIdx.x] = 7; }
__global__ void consume(const int *buf, int *out) { out[threadIdx.x] = buf[threadIdx.x]; }

int main() {
  int *buf, *out;
  cudaMalloc(&buf, 2 * sizeof(int));
  cudaMalloc(&out, 2 * sizeof(int));
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cudaEvent_t done;
  cudaEventCreate(&done);
  produce<<<1, 2, 0, s1>>>(buf);
  cudaEventRecord(done, s1);
  cudaStreamWaitEvent(s2, done, 0);
  consume<<<1, 2, 0, s2>>>(buf, out);
  cudaStreamSynchronize(s2);
  int h[2];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  assert(h[0] == 7 && h[1] == 7);
  return 0;
}
