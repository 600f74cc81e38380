// A spin lock with exponential __nanosleep backoff in the retry loop (the shape of libcu++'s
// and CUTLASS's polling loops): atomicCAS(0 -> 1) to acquire, then __threadfence; the
// critical section increments a plain counter; __threadfence then atomicExch(0) to release.
// One thread in each of two blocks; the host checks both increments landed.
//
// expect (src11): Ok, racy: false -- the releasing fence (seq_cst, device) before the
//   atomicExch that writes 0 and the acquiring fence after the CAS that reads that 0 make the
//   first critical section happen before the second (fence-fence synchronization), so the
//   counter's plain accesses are ordered; mutual exclusion comes from the CAS. __nanosleep
//   only delays: it orders nothing and cannot change the result.
// expect (ptx): Ok -- atom.cas.b32 / fence.sc.gpu / atom.exch.b32: the fences give the
//   release/acquire pattern; nanosleep is a no-op for the memory model.
// note: the retry loop changes `ns`, and `if (ns < 256)` branches on it, so in the language-level
//   view ns is live and the loop is an await loop only once ns saturates at 256 (after 5
//   doublings): check with --unroll 5 or more for a complete verdict. NVRTC compiles the update
//   to a branch-free select, and a register that only feeds itself and the sleep is not live,
//   so the PTX view is complete at the default --unroll.
__device__ int lock = 0;

__device__ void lock_acquire(int* l) {
    unsigned int ns = 8;
    while (atomicCAS(l, 0, 1) != 0) {
        __nanosleep(ns);
        if (ns < 256) ns *= 2;
    }
    __threadfence();
}

__device__ void lock_release(int* l) {
    __threadfence();
    atomicExch(l, 0);
}

__global__ void increment(int* counter) {
    lock_acquire(&lock);
    *counter = *counter + 1;
    lock_release(&lock);
}

int main() {
    int* counter;
    cudaMallocManaged(&counter, sizeof(int));
    *counter = 0;
    increment<<<2, 1>>>(counter);
    cudaDeviceSynchronize();
    if (*counter != 2) return 1;
    return 0;
}
