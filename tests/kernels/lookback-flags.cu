//--blockDim=1 --gridDim=2
// A chained (look-back) scan between blocks, one thread a block: block b waits until block
// b - 1 has published (flag[b - 1] becomes 1, polled with atomicAdd(.., 0)), fences, reads
// its predecessor's inclusive sum, adds its own element and publishes: a plain store of
// sums[b], __threadfence(), atomicExch(&flag[b], 1). The fence before the flag store and the
// fence after the flag load (fence-fence synchronisation at device scope, through the flag)
// order sums[b - 1]'s store before block b's load of it; the last block never reads nothing
// beyond that: no race, in both views.
__global__ void chained_scan(const int *in, int *sums, int *flag) {
    int b = blockIdx.x;
    int prefix = 0;
    if (b > 0) {
        while (atomicAdd(&flag[b - 1], 0) == 0) {
        }
        __threadfence();
        prefix = sums[b - 1];
    }
    sums[b] = prefix + in[b];
    __threadfence();
    atomicExch(&flag[b], 1);
}
