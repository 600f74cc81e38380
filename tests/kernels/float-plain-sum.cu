//--blockDim=2 --gridDim=2
// The racy twin of float-atomic-sum.cu: `*sum += x[i] * 0.5f` is a plain float load and a
// plain float store by every thread to one word, unordered with each other's: a data race
// (and lost updates), in both views.
__global__ void accumulate(const float *x, float *sum) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    *sum += x[i] * 0.5f;
}
