// The reader asserts it sees the writer's flag, but nothing orders the two threads: an
// execution where it reads 0 fails the assertion (line 8).
#include <cassert>
#include <cstdio>
__global__ void k(int *flag) {
    if (threadIdx.x == 0) { atomicExch(flag, 1); }
    else {
        printf("reading\n");
        assert(atomicAdd(flag, 0) == 1);
    }
}
int main() {
    int *flag;
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    k<<<1, 2>>>(flag);
    cudaDeviceSynchronize();
    return 0;
}
