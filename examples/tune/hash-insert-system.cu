// Over-specified copy of examples/cuda/hash-insert.cu for `scopecheck tune`: atomicCAS_system where the device-scope atomicCAS is enough.
#include <cuda/atomic>
// Open-addressing insert, cuCollections style: each thread inserts its key with atomicCAS
// into table[hash(k) % N], probing linearly; a key slot is claimed once (EMPTY -> key).
constexpr int N = 4;
constexpr int EMPTY = -1;

__device__ unsigned hash(int k) { return (unsigned)k * 2654435761u; }

__global__ void insert(int* table, const int* keys) {
    int k = keys[blockIdx.x];
    unsigned slot = hash(k) % N;
    for (int probe = 0; probe < N; ++probe) {
        int prev = atomicCAS_system(&table[slot], EMPTY, k);
        if (prev == EMPTY || prev == k) return;
        slot = (slot + 1) % N;
    }
}

int main() {
    int *table, *keys;
    cudaMallocManaged(&table, N * sizeof(int));
    cudaMallocManaged(&keys, 2 * sizeof(int));
    for (int i = 0; i < N; ++i) table[i] = EMPTY;
    keys[0] = 7;
    keys[1] = 11;
    insert<<<2, 1>>>(table, keys);
    cudaDeviceSynchronize();
    int found = 0;
    for (int i = 0; i < N; ++i) if (table[i] == 7 || table[i] == 11) found++;
    if (found != 2) return 1;
    return 0;
}
