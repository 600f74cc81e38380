//--blockDim=1 --gridDim=2
// The last-block pattern with libcu++ instead of fences: each block writes its partial, then
// takes a ticket with an acq_rel fetch_add on a device-scope atomic_ref. The tickets form one
// read-modify-write chain; the last block's fetch_add (acquire) reads from the other block's
// (release), so that block's partial store happens before the last block's loads: no race,
// in both views.
#include <cuda/atomic>

__global__ void reduce(const int *in, int *partial, unsigned *ticket, int *out) {
    partial[blockIdx.x] = in[blockIdx.x] + 1;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
    if (t.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1) {
        out[0] = partial[0] + partial[1];
    }
}
