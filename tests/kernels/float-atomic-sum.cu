//--blockDim=2 --gridDim=2
// A float accumulator: every thread adds its element times 0.5f to one float with
// atomicAdd (a float atomic, `atom.global.add.f32`). Atomic adds to one word never race with
// each other, and the elements are only read: no race, in both views.
__global__ void accumulate(const float *x, float *sum) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(sum, x[i] * 0.5f);
}
