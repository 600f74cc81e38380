//--blockDim=2 --gridDim=2
// The racy twin of counter-atomic.cu: `*counter += 1` is a plain load and a plain store by
// every thread of the launch to one word, unordered with each other's: a data race.
__global__ void count(unsigned int *counter) {
    *counter += 1;
}
