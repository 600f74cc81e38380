//--blockDim=2 --gridDim=2
// Every thread adds one to a counter with an inline PTX `atom.global.add.u32` (its result
// unused, as a counting kernel does), and writes its own element of `seen` plainly. Atomic
// read-modify-writes to one word never race with each other (morally strong: same scope,
// both atomic), and `seen[i]` has one writer each: no race (PTX view alone: `asm`).
__global__ void count(unsigned *counter, int *seen) {
    unsigned old;
    asm volatile("atom.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
    seen[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
