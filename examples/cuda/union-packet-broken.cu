// union-packet.cu with the packet sent as two 32-bit fields: the writer stores the data
// plainly and raises the flag with a 32-bit atomicExch, and the reader reads the flag and then
// the data as separate accesses, with no fence on either side.
//
// expect (src11): not read (unions), the PTX view answers.
// expect (ptx): No, racy: true -- nothing orders the data store before the flag, nor the
//   data load after the flag read: the reader may see the flag and stale data (0).
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
        slot.p.data = 5;
        atomicExch(&slot.p.flag, 1);
    } else {
        int f = atomicAdd(&slot.p.flag, 0);
        out[0] = f == 1 ? slot.p.data : 5;
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
