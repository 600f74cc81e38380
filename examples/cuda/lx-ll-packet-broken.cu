// Broken twin of lx-ll-packet: the LL "packet" is a struct of two 32-bit words
// {data, flag} written with TWO separate 32-bit stores (relaxed, device scope) and no fence
// between them; the consumer polls the flag word and then reads the data word. The two
// words are no longer one single-copy-atomic access, so the consumer can see the new flag
// (epoch 2) with the stale data of the previous epoch (7).
//
// expect (src11): No, racy: false -- all accesses are device-scope relaxed atomics (no data
//   race), but relaxed orders nothing: the consumer's data load may read the stale 7 after
//   its flag load read 2 (message passing without release/acquire).
// expect (ptx): No -- st.relaxed / ld.relaxed without fence.sc/acq_rel: the MP outcome
//   flag=2, data=7 is allowed (no causality order between the two stores and the two loads).
#include <cuda/atomic>

struct LLHalf {
    unsigned int data;
    unsigned int flag;
};

__device__ void store_ll(LLHalf* line, unsigned int data, unsigned int flag) {
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> d(line->data);
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> f(line->flag);
    d.store(data, cuda::memory_order_relaxed);
    f.store(flag, cuda::memory_order_relaxed);
}

__device__ unsigned int read_ll(LLHalf* line, unsigned int flag) {
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> d(line->data);
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> f(line->flag);
    while (f.load(cuda::memory_order_relaxed) != flag) { }
    return d.load(cuda::memory_order_relaxed);
}

__global__ void send(LLHalf* line, unsigned int value, unsigned int epoch) {
    store_ll(line, value, epoch);
}

__global__ void recv(LLHalf* line, unsigned int epoch, unsigned int* out) {
    *out = read_ll(line, epoch);
}

int main() {
    LLHalf* line;
    unsigned int* out;
    cudaMallocManaged(&line, sizeof(LLHalf));
    cudaMallocManaged(&out, sizeof(unsigned int));
    line->data = 7;   // stale packet: flag 1, data 7
    line->flag = 1;
    out[0] = 0;
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    recv<<<1, 1, 0, a>>>(line, 2, out);
    send<<<1, 1, 0, b>>>(line, 42, 2);
    cudaDeviceSynchronize();
    if (out[0] != 42) return 1;
    return 0;
}
