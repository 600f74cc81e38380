// Two threads each add 0.5f to a float: 0.5 + 0.5 is exactly 1.0.
#include <cassert>
__global__ void add(float *d) {
    atomicAdd(d, 0.5f);
}
int main() {
    float *d;
    cudaMallocManaged(&d, sizeof(float));
    *d = 0.0f;
    add<<<1, 2>>>(d);
    cudaDeviceSynchronize();
    assert(*d == 1.0f);
    return 0;
}
