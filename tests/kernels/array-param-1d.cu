//--blockDim=2 --gridDim=2
// Parameters declared as arrays are pointers, as C adjusts them: `int out[4]` of the kernel
// and `int a[]` of the device function are `int *`. Thread t of block b stores 1 in
// out[b * 2 + t] through put(): each element once, no race, in both views.
__device__ void put(int a[], int i, int v) {
    a[i] = v;
}

__global__ void fill(int out[4]) {
    put(out, blockIdx.x * blockDim.x + threadIdx.x, 1);
}
