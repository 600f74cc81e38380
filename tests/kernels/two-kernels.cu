// Two kernels in one file, each checked on its own: `fill` writes a[i] from thread i only (no
// race); `gather` has every thread read a[0] and write b[i] (reads do not race): no race. A
// template kernel without its arguments (`pick`) is reported as not checked, naming
// `--kernel`; `--kernel 'pick<3>'` checks it: thread t of every block writes a[t], so the two
// blocks' threads 0 both write a[0]: racy.
__global__ void fill(int *a) {
    a[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
}

__global__ void gather(const int *a, int *b) {
    b[blockIdx.x * blockDim.x + threadIdx.x] = a[0];
}

template <int K>
__global__ void pick(int *a) {
    a[threadIdx.x] = K;
}
