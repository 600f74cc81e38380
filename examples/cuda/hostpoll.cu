// A flag polled by the host through a plain load while the kernel runs: the kernel writes
// the result, then sets the flag with a plain store; the host spins on the flag and reads the
// result before synchronizing. Nothing orders the result before the flag: a data race.
__global__ void work(int *result, int *flag) {
    *result = 42;
    *flag = 1;
}

void scopecheck_main() {
    int *result, *flag;
    cudaMallocManaged(&result, sizeof(int));
    cudaMallocManaged(&flag, sizeof(int));
    work<<<1, 1>>>(result, flag);
    while (*flag == 0) { }
    assert(*result == 42);
    cudaDeviceSynchronize();
}
