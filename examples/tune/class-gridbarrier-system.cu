// Over-specified copy of examples/cuda/class-gridbarrier.cu for `scopecheck tune`: a system-scope atomic_ref on the arrival count where device scope is enough.
#include <cuda/atomic>
// A grid barrier as a class with a device method (CUB style), passed by pointer: the last
// block to arrive (acq_rel fetch_add on the count) resets the count and bumps the generation
// with a release store; the others spin on an acquire load of the generation. Each block
// writes its element before the barrier and reads its neighbour's after it.
struct GridBarrier {
    unsigned count;
    unsigned generation;
    __device__ void sync(unsigned blocks) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> gen(generation);
        cuda::atomic_ref<unsigned, cuda::thread_scope_system> c(count);
        unsigned g = gen.load(cuda::memory_order_relaxed);
        if (c.fetch_add(1, cuda::memory_order_acq_rel) == blocks - 1) {
            c.store(0, cuda::memory_order_relaxed);
            gen.store(g + 1, cuda::memory_order_release);
        } else {
            while (gen.load(cuda::memory_order_acquire) == g) { }
        }
    }
};

__global__ void exchange(GridBarrier* bar, int* data, int* out) {
    data[blockIdx.x] = blockIdx.x + 1;
    bar->sync(gridDim.x);
    out[blockIdx.x] = data[(blockIdx.x + 1) % gridDim.x];
}

int main() {
    GridBarrier* bar;
    int *data, *out;
    cudaMallocManaged(&bar, sizeof(GridBarrier));
    cudaMallocManaged(&data, 2 * sizeof(int));
    cudaMallocManaged(&out, 2 * sizeof(int));
    exchange<<<2, 1>>>(bar, data, out);
    cudaDeviceSynchronize();
    if (out[0] != 2 || out[1] != 1) return 1;
    return 0;
}
