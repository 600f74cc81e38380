// Broken twin of lx-backoff-lock: the same spin lock with exponential __nanosleep backoff,
// without the two __threadfence calls. The relaxed atomicCAS / atomicExch still give mutual
// exclusion on the lock word, but nothing orders the counter's plain load and store with
// them: the second holder may read the counter before the first holder's store is visible.
//
// expect (src11): No, racy: true -- relaxed RMWs create no happens-before, so the two critical
//   sections' plain accesses to *counter race; an execution ends with *counter == 1.
// expect (ptx): No -- without fence.sc the plain ld/st.global of the counter are not ordered
//   by the relaxed atom.cas/atom.exch (no causality order): a lost update (and a data race).
// note: as in lx-backoff-lock, --unroll 5 or more makes the exploration complete.
__device__ int lock = 0;

__device__ void lock_acquire(int* l) {
    unsigned int ns = 8;
    while (atomicCAS(l, 0, 1) != 0) {
        __nanosleep(ns);
        if (ns < 256) ns *= 2;
    }
}

__device__ void lock_release(int* l) {
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
