// Over-specified copy of examples/cuda/lx-ll-packet.cu for `scopecheck tune`: system-scope atomic_refs where device scope is enough.
// NCCL-style LL (low-latency) packet: an 8-byte line that packs a 32-bit payload with a
// 32-bit flag (the epoch/step), written by the producer with ONE 64-bit store and polled by
// the consumer with 64-bit loads until the flag holds the epoch it waits for; the payload is
// taken from the same load. No fence is needed: data and flag travel in one single-copy-atomic
// 64-bit access, so seeing the new flag means seeing the new data. The line starts holding a
// stale packet of the previous epoch (flag 1, data 7); the consumer waits for epoch 2.
//
// expect (src11): Ok, racy: false -- every access to the line is a device-scope atomic
//   (relaxed atomic_ref<uint64_t>); the consumer's exit load reads the producer's store, whose
//   value carries data 42; `out` is written by the consumer and read by the host after
//   cudaDeviceSynchronize. (The front-end may not read the shifts: then PTX only.)
// expect (ptx): Ok -- st.relaxed.gpu.b64 / ld.relaxed.gpu.b64 are morally strong and
//   single-copy atomic: the load that sees flag 2 sees data 42.
#include <cstdint>
#include <cuda/atomic>

// Packing as NCCL's LL protocol does (readLL / storeLL, here with one 8-byte word rather
// than NCCL's 16-byte line of two {data, flag} pairs): flag in the high half, data in the low.
__device__ void store_ll(uint64_t* line, uint32_t data, uint32_t flag) {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*line);
    ref.store(((uint64_t)flag << 32) | data, cuda::memory_order_relaxed);
}

__device__ uint32_t read_ll(uint64_t* line, uint32_t flag) {
    cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*line);
    uint64_t v;
    do {
        v = ref.load(cuda::memory_order_relaxed);
    } while ((uint32_t)(v >> 32) != flag);
    return (uint32_t)(v & 0xffffffffu);
}

__global__ void send(uint64_t* line, uint32_t value, uint32_t epoch) {
    store_ll(line, value, epoch);
}

__global__ void recv(uint64_t* line, uint32_t epoch, uint32_t* out) {
    *out = read_ll(line, epoch);
}

int main() {
    uint64_t* line;
    uint32_t* out;
    cudaMallocManaged(&line, sizeof(uint64_t));
    cudaMallocManaged(&out, sizeof(uint32_t));
    line[0] = (1ULL << 32) | 7;   // stale packet: flag 1, data 7
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
