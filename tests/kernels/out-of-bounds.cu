// Each thread writes the element after its own: the last thread of the launch writes one past
// the end of the buffer (at the default launch, 4 threads and buffers of 4 elements, thread 3
// writes a[4]): an out-of-bounds access, reported at line 5.
__global__ void shift(int *a) {
    a[blockIdx.x * blockDim.x + threadIdx.x + 1] = 1;
}
