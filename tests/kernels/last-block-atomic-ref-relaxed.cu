//--blockDim=1 --gridDim=2
// The racy twin of last-block-atomic-ref.cu: a relaxed fetch_add orders nothing, so the last
// block's load of the other block's partial races with its store, in both views.
#include <cuda/atomic>

__global__ void reduce(const int *in, int *partial, unsigned *ticket, int *out) {
    partial[blockIdx.x] = in[blockIdx.x] + 1;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
    if (t.fetch_add(1, cuda::memory_order_relaxed) == gridDim.x - 1) {
        out[0] = partial[0] + partial[1];
    }
}
