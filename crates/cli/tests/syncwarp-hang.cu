// Lane 0 waits at __syncwarp(0x3) for lane 1, which spins on a flag only lane 0 sets after
// the barrier: neither can go on. A hang, found in both views.
__global__ void stuck(int* flag) {
    int lane = threadIdx.x % 32;
    if (lane == 0) {
        __syncwarp(0x3);
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {
        }
        __syncwarp(0x3);
    }
}

int main() {
    int* flag;
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    stuck<<<1, 2>>>(flag);
    cudaDeviceSynchronize();
    return 0;
}
