// A template kernel with `__restrict__` pointers and `__align__`ed element type, checked as
// `--kernel 'scale<int,2>'`: the language-level front-end does not read templates, so the
// PTX view (NVRTC's instantiation) checks it. Thread i reads in[i] and writes out[i] only
// (elements of distinct threads are distinct): no race.
struct __align__(8) Pair { int a; int b; };

template <typename T, int FACTOR>
__global__ void scale(const T *__restrict__ in, T *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * FACTOR;
    }
}
