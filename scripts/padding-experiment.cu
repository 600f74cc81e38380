// What a flag on its payload's 128-byte line costs the producer (issue 36, deliverable 5).
//
// One producer thread (block 0) writes a payload of 31 words, word after word, N times over
// (st.relaxed.gpu: each store goes to L2, as a payload another SM will read must), while
// `pollers` other blocks each spin on one flag word with ld.acquire.gpu (or atomicAdd(flag, 0)),
// as a consumer awaiting the flag does. The flag sits either on the payload's line (byte 124 of
// it: a struct { int payload[31]; int flag; }) or on a line of its own (128 bytes on). The
// producer times its stores with %globaltimer; the pollers count their polls. Each point is the
// median of 5 launches.
//
// Build and run (on the GPU machine): nvcc -O3 -arch=sm_90 -o pad padding-experiment.cu && ./pad
// Output: one CSV line per point: layout,poll,pollers,ns_per_store,stores_per_us,polls_per_us.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e = (x);                                                                  \
        if (e != cudaSuccess) {                                                               \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                          \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static const unsigned STOP = 0xffffffffu;
static const int PAYLOAD = 31;

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void st_relaxed(unsigned *p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// out[0]: producer ns; out[1]: polls (summed over pollers).
__global__ void experiment(unsigned *line, unsigned *flag, int stores, int atomic_poll,
                           unsigned long long *out, unsigned *started) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        // Wait (bounded) until every poller is polling, so that the stores meet the polls.
        unsigned long long t0 = now_ns();
        while (atomicAdd(started, 0) < gridDim.x - 1 && now_ns() - t0 < 100000000ull) {
        }
        unsigned long long begin = now_ns();
        for (int i = 0; i < stores; i++) st_relaxed(&line[i % PAYLOAD], (unsigned)i);
        __threadfence();
        unsigned long long end = now_ns();
        atomicExch(flag, STOP);
        out[0] = end - begin;
    } else {
        atomicAdd(started, 1u);
        unsigned long long polls = 0;
        unsigned long long t0 = now_ns();
        for (;;) {
            unsigned v = atomic_poll ? atomicAdd(flag, 0u) : ld_acquire(flag);
            polls++;
            // Bounded: a lost producer must not hang the GPU.
            if (v == STOP || (polls % 1024 == 0 && now_ns() - t0 > 2000000000ull)) break;
        }
        atomicAdd(&out[1], polls);
    }
}

int main(int argc, char **argv) {
    int stores = argc > 1 ? atoi(argv[1]) : 200000;
    unsigned *buf, *started;
    unsigned long long *out;
    CHECK(cudaMalloc(&buf, 4096));
    CHECK(cudaMalloc(&started, 4));
    CHECK(cudaMalloc(&out, 16));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    printf("layout,poll,pollers,ns_per_store,stores_per_us,polls_per_us\n");
    const int pollers_list[] = {0, 1, 8, 32, 132, 264};
    for (int atomic_poll = 0; atomic_poll < 2; atomic_poll++) {
        for (int pollers : pollers_list) {
            for (int padded = 0; padded < 2; padded++) {
                // The line starts at byte 256 of the allocation (cudaMalloc aligns to 256).
                unsigned *line = buf + 64;
                unsigned *flag = padded ? line + 32 : line + PAYLOAD;
                std::vector<double> ns, polls;
                for (int rep = 0; rep < 5; rep++) {
                    CHECK(cudaMemset(buf, 0, 4096));
                    CHECK(cudaMemset(started, 0, 4));
                    CHECK(cudaMemset(out, 0, 16));
                    experiment<<<1 + pollers, 32>>>(line, flag, stores, atomic_poll, out, started);
                    CHECK(cudaGetLastError());
                    CHECK(cudaDeviceSynchronize());
                    unsigned long long h[2];
                    CHECK(cudaMemcpy(h, out, 16, cudaMemcpyDeviceToHost));
                    ns.push_back((double)h[0]);
                    polls.push_back((double)h[1] / ((double)h[0] / 1000.0));
                }
                std::sort(ns.begin(), ns.end());
                std::sort(polls.begin(), polls.end());
                double med = ns[2];
                printf("%s,%s,%d,%.3f,%.1f,%.1f\n", padded ? "padded" : "shared",
                       atomic_poll ? "atomicAdd" : "ld.acquire.gpu", pollers, med / stores,
                       stores / (med / 1000.0), polls[2]);
                fflush(stdout);
            }
        }
    }
    return 0;
}
