//--blockDim=2 --gridDim=2
// Dynamic shared memory (`extern __shared__`, sized at launch), `__launch_bounds__`, `__ldg`
// and a `static __device__ __forceinline__` helper, as tuned kernels write them: each block
// reverses its slice through the dynamic array, thread t storing s[t] and, after
// __syncthreads(), loading s[blockDim.x - 1 - t]. The barrier orders every store to s before
// every load of it, each block has its own copy, each thread writes its own element of out:
// no race, in both views.
static __device__ __forceinline__ int global_index() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}

__global__ void __launch_bounds__(256) reverse(const int *__restrict__ in, int *__restrict__ out) {
    extern __shared__ int s[];
    int i = global_index();
    s[threadIdx.x] = __ldg(&in[i]);
    __syncthreads();
    out[i] = s[blockDim.x - 1 - threadIdx.x];
}
