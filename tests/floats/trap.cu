__global__ void k(int *x) {
    if (threadIdx.x == 1) __trap();
    x[threadIdx.x] = 1;
}
int main() {
    int *x;
    cudaMalloc(&x, 2 * sizeof(int));
    k<<<1, 2>>>(x);
    cudaDeviceSynchronize();
    return 0;
}
