// A shuffle-down reduction over the four lanes of a partial warp: lanes 2 and 3 shuffle from
// lanes 4 and 5, which were never launched. CUDA leaves the value such a shuffle returns
// undefined, so scopecheck stops there with a fault at the line (lane 0's total would not
// depend on it, but the program reads an undefined value).
__global__ void total(const int* values, int* result) {
    int v = values[threadIdx.x];
    v += __shfl_down_sync(0xf, v, 2);
    v += __shfl_down_sync(0xf, v, 1);
    if (threadIdx.x == 0) result[0] = v;
}

int main() {
    int host[4] = {1, 2, 3, 4};
    int sum = 0;
    int *values, *result;
    cudaMalloc(&values, sizeof(host));
    cudaMalloc(&result, sizeof(int));
    cudaMemcpy(values, host, sizeof(host), cudaMemcpyHostToDevice);
    total<<<1, 4>>>(values, result);
    cudaMemcpy(&sum, result, sizeof(int), cudaMemcpyDeviceToHost);
    assert(sum == 10);
    return 0;
}
