// An LL-style packet through a union: the writer fills a local packet (data and flag, 32 bits
// each) and publishes it with one 64-bit atomicExch of the union's `v`; the reader takes the
// whole packet with one 64-bit atomic read (an add of 0) and uses the data only when the flag
// in the same word is set. The language-level front-end does not read unions, so this file
// is checked as NVRTC's PTX.
//
// expect (src11): not read (unions), the PTX view answers.
// expect (ptx): Ok -- data and flag travel in one single-copy-atomic 64-bit access: a reader
//   that sees the flag sees the data of the same packet, so out is always 5.
#include <cassert>
#include <cuda_runtime.h>

union Packet {
    unsigned long long v;
    struct {
        int data;
        int flag;
    } p;
};

__device__ Packet slot;

__global__ void exchange(int *out) {
    if (blockIdx.x == 0) {
        Packet q;
        q.p.data = 5;
        q.p.flag = 1;
        atomicExch(&slot.v, q.v);
    } else {
        Packet r;
        r.v = atomicAdd(&slot.v, 0ULL);
        out[0] = r.p.flag == 1 ? r.p.data : 5;
    }
}

int main() {
    int *out;
    cudaMallocManaged(&out, sizeof(int));
    out[0] = 0;
    exchange<<<2, 1>>>(out);
    cudaDeviceSynchronize();
    assert(out[0] == 5);
    return 0;
}
