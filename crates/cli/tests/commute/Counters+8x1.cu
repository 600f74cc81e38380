// 8 threads of one block each atomicAdd 1 to one device counter; the host checks it.
__global__ void count(int *counter) {
    atomicAdd(counter, 1);
}

void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    *counter = 0;
    count<<<1, 8>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == 8);
}
