//--blockDim=1 --gridDim=2
// Message passing between two blocks with inline PTX, as libraries write it: block 0 stores
// the data, fences with `asm volatile("fence.acq_rel.gpu;")` and raises the flag with a
// relaxed atomic; block 1 waits for the flag with an atomic read, fences the same way and
// reads the data. Fence-fence synchronisation at gpu scope orders the data store before the
// data load: no race (read in the PTX view, where the asm is NVRTC's own PTX).
__global__ void handoff(int *data, int *flag, int *out) {
    if (blockIdx.x == 0) {
        data[0] = 42;
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        out[0] = data[0];
    }
}
