//--blockDim=4 --gridDim=1
// Warp vote: the four lanes of the block vote with __ballot_sync(0xf, ...) on whether their
// element is positive, and lane 0 writes the number of positive elements (__popc of the
// ballot) to out[0]. A vote exchanges predicates, not memory; each lane reads only its own
// in[l] and only lane 0 stores: no race, in both views. (Zero-filled input: the count is 0.)
__global__ void count_positive(const int *in, int *out) {
    unsigned lane = threadIdx.x;
    unsigned votes = __ballot_sync(0xf, in[lane] > 0);
    if (lane == 0) {
        out[0] = __popc(votes);
    }
}
