// A harness whose host code keeps a 2 x 2 matrix in a two-dimensional array: it copies h
// (row-major: 1, 2, 3, 4) to the device, the kernel doubles each element (one thread each,
// no element shared: no race), and the copy back gives h[i][j] == 2 * (i * 2 + j + 1). The
// asserts hold in every execution: Ok, in both views. Read column-major, h[0][1] would be 3
// before and 6 after, not 4: the asserts check the layout.
#include <cassert>

__global__ void twice(int *d) {
    d[threadIdx.x] = d[threadIdx.x] * 2;
}

int main() {
    int h[2][2] = {{1, 2}, {3, 4}};
    int *d;
    cudaMalloc(&d, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    twice<<<1, 4>>>(d);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            assert(h[i][j] == 2 * (i * 2 + j + 1));
    return 0;
}
