#pragma once
// A user's header, read by both views when its folder is given with -I: a device helper that
// counts with an atomic (or, with -DPLAIN_COUNT, with a plain +=), a macro from a header it
// includes itself, and a host helper (which NVRTC never sees: its host code is blanked).
#include "detail/limits.h"
#include "detail/limits.h"

__device__ inline void count_one(unsigned int *c) {
#ifdef PLAIN_COUNT
    *c += 1;
#else
    atomicAdd(c, 1u);
#endif
}

inline void check_error(cudaError_t e) {
    if (e != cudaSuccess) {
        printf("CUDA error %d\n", (int)e);
    }
}
