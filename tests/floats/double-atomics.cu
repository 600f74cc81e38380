// Three double atomic adds of 0.1: in every order the sum is (0.1 + 0.1) + 0.1, which rounds
// to 0.30000000000000004, not 0.3.
#include <cassert>
__global__ void add(double *d) {
    atomicAdd(d, 0.1);
}
int main() {
    double *d;
    cudaMallocManaged(&d, sizeof(double));
    *d = 0;
    add<<<1, 3>>>(d);
    cudaDeviceSynchronize();
    assert(*d == 0.30000000000000004);
    assert(*d != 0.3);
    return 0;
}
