// Float addition is not associative: 1e8f + 1.0f rounds back to 1e8f (the floats near 1e8
// are 8 apart), so the order of the three atomic adds decides whether the 1 survives.
#include <cassert>
__global__ void add(float *d) {
    float v = threadIdx.x == 0 ? 1e8f : (threadIdx.x == 1 ? 1.0f : -1e8f);
    atomicAdd(d, v);
}
int main() {
    float *d;
    cudaMallocManaged(&d, sizeof(float));
    *d = 0.0f;
    add<<<1, 3>>>(d);
    cudaDeviceSynchronize();
    assert(*d == 0.0f || *d == 1.0f);
    return 0;
}
