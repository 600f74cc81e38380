//--blockDim=2 --gridDim=1
// A template kernel (so the PTX view alone checks it, `--kernel 'scratch<7>'`) whose threads
// all store to one __shared__ word that nobody reads, beside a store of their own element of
// out. The two plain stores to `tmp` by the block's two threads are unordered: a data race in
// the source, whatever the compiler makes of it. NVRTC's optimizer removes the dead stores, so
// its code keeps only the out stores, which do not race; the race is found in NVRTC's
// unoptimized compile (-G) of the same source, and reported in the PTX view at line 11.
template <int N>
__global__ void scratch(int *out) {
    __shared__ int tmp;
    tmp = threadIdx.x;
    out[threadIdx.x] = N;
}
