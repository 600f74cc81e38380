// 0/0 is NaN: NaN == NaN is false, NaN != NaN true, and NaN < 1 false.
#include <cassert>
__global__ void k(float *a, int *out) {
    float n = *a / *a;
    out[0] = n == n;
    out[1] = n != n;
    out[2] = n < 1.0f;
    out[3] = isnan(n);
}
int main() {
    float *a; int *out;
    cudaMallocManaged(&a, sizeof(float));
    cudaMallocManaged(&out, 4 * sizeof(int));
    *a = 0.0f;
    k<<<1, 1>>>(a, out);
    cudaDeviceSynchronize();
    assert(out[0] == 0 && out[1] == 1 && out[2] == 0 && out[3] == 1);
    return 0;
}
