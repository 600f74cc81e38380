// Over-specified copy of examples/cuda/scan.cu for `scopecheck tune`: system-scope status flags where device scope is enough.
// A look-back style scan with two tiles (one block each): tile 0 publishes its inclusive
// prefix, then sets its status to 2 ("prefix available") with a release store; tile 1 waits
// for that status with acquire loads, reads the prefix and adds its own aggregate.
__device__ int input[2] = {5, 7};
__device__ int prefix[2];
__device__ cuda::atomic<int, cuda::thread_scope_system> status[2];

__global__ void scan(int *out) {
    int tile = blockIdx.x;
    int aggregate = input[tile];
    if (tile == 0) {
        prefix[0] = aggregate;
        status[0].store(2, cuda::memory_order_release);
        out[0] = aggregate;
    } else {
        while (status[tile - 1].load(cuda::memory_order_acquire) != 2) { }
        int exclusive = prefix[tile - 1];
        prefix[tile] = exclusive + aggregate;
        status[tile].store(2, cuda::memory_order_release);
        out[tile] = exclusive + aggregate;
    }
}

void scopecheck_main() {
    int *out;
    cudaMallocManaged(&out, 2 * sizeof(int));
    scan<<<2, 1>>>(out);
    cudaDeviceSynchronize();
    assert(out[0] == 5 && out[1] == 12);
}
