#include <cstdio>
#include "counting.cuh"
// Checked with -I tests/kernels/include -DITEMS=4 (the header is in that folder; ITEMS must be
// given). Threads whose index is below COUNTING_THREADS(ITEMS) = 2 count themselves with the
// header's count_one: an atomicAdd, so no race at the default launch (2 blocks of 2: threads
// 0 and 1 of each block count). With -DPLAIN_COUNT the helper is a plain +=: four threads
// (two in each block) race on c[0]. nvcc's Linux macros are predefined in both views, so the
// #error below is not reached.
#if !defined(__linux__) || !defined(CUDART_VERSION) || __CUDACC_VER_MAJOR__ < 12
#error "compiled as nvcc on Linux would"
#endif
#ifndef ITEMS
#error "give ITEMS with -DITEMS=N"
#endif

__global__ void count(unsigned int *c) {
    if (threadIdx.x < COUNTING_THREADS(ITEMS)) {
        count_one(c);
    }
}
