// A grid-stride loop that doubles its elements and counts them on one shared word: thread i of
// the grid handles elements i, i + stride, ... below n (stride: the grid's thread count), so
// no two threads touch one element of `a`; every thread adds its count to `*count` with
// atomicAdd (a relaxed device-scope RMW whose result nobody reads). The only location two
// threads share is the counter, and RMWs on it do not race: no race, one final state
// (every a[i] = 2 * a[i], *count = n). Meant for warp- and block-sized launches: the threads
// share nothing but a counter whose updates commute.
__global__ void double_count(int *a, unsigned int *count, int n) {
    unsigned int done = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        a[i] = 2 * a[i];
        done += 1;
    }
    atomicAdd(count, done);
}
