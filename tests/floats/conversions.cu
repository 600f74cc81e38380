#include <cassert>
__global__ void k(float *f, int *i, float *g) {
    float h = *f;            // -2.5
    i[0] = (int)h;           // C truncates: -2
    i[1] = __float2int_rd(h);  // -3
    i[2] = __float2int_rn(h);  // -2 (ties to even)
    int big = i[3];          // 16777217 = 2^24 + 1, no float
    g[0] = (float)big;       // to nearest (even): 16777216
    g[1] = __int2float_ru(big);  // up: 16777218
    double d = h;            // exact
    g[2] = d * 2;            // -5
}
int main() {
    float *f, *g; int *i;
    cudaMallocManaged(&f, sizeof(float));
    cudaMallocManaged(&g, 3 * sizeof(float));
    cudaMallocManaged(&i, 4 * sizeof(int));
    *f = -2.5f;
    i[3] = 16777217;
    k<<<1, 1>>>(f, i, g);
    cudaDeviceSynchronize();
    assert(i[0] == -2 && i[1] == -3 && i[2] == -2);
    assert(g[0] == 16777216.0f && g[1] == 16777218.0f && g[2] == -5.0f);
    return 0;
}
