// The harness of mp.ptx and mp-relaxed.ptx: the kernels are declared, their code is the PTX.
__global__ void produce(int *data, int *flag);
__global__ void consume(int *data, int *flag, int *out);

int main() {
    int *data, *flag, *out;
    cudaMalloc(&data, sizeof(int));
    cudaMalloc(&flag, sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    consume<<<1, 1, 0, b>>>(data, flag, out);
    produce<<<1, 1, 0, a>>>(data, flag);
    cudaDeviceSynchronize();
    if (*out != 42) return 1;
    return 0;
}
