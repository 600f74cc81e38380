//--blockDim=2 --gridDim=2
// Every thread counts itself with atomicAdd on one word: relaxed device-scope RMWs by four
// threads of two blocks, all atomic: no race. The launch comment asks 2 blocks of 2.
__global__ void count(unsigned int *counter) {
    atomicAdd(counter, 1u);
}
