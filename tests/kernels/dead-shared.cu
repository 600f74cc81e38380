//--blockDim=2 --gridDim=1
// Both threads store to one __shared__ word that nobody reads: a data race in the source
// (two unordered plain writes), which the language view reports. NVRTC's optimizer removes
// the stores (dead code), so its PTX accesses no memory: the PTX view says so in a warning
// instead of passing the kernel off as race-free without a word.
__global__ void dead(int *unused) {
    __shared__ int word;
    word = threadIdx.x;
}
