// Over-specified copy of examples/cuda/sp-workqueue.cu for `scopecheck tune`: atomicAdd_system on the queue head where device scope is enough.
#include <cstdio>
#include <cuda_runtime.h>
// A persistent-blocks work queue: the host uploads a list of work items (item ids, a
// permutation of 0..NUM_ITEMS-1) with cudaMemcpy, zeroes the queue head and the results with
// cudaMemset, and launches two blocks that drain the queue: each claims the next slot with
// atomicAdd on the global head index, stops once the slot is past the end, and processes the
// claimed item by incrementing results[item] (a plain read-modify-write: every item is
// claimed by exactly one block, so no atomic is needed there). The host checks that every
// item was processed exactly once.
//
// expect (src11): Ok, racy: false -- the atomicAdd calls on head are atomic RMWs at device
//   scope, which includes both blocks, so they are totally ordered in head's modification
//   order and each reads the write just before it: the returned slots are 0, 1, 2, ...
//   without repetition, and each slot < NUM_ITEMS is claimed by exactly one block. The items
//   array was written by the host before the launch (cudaMemcpy, ordered before the kernel by
//   the launch), so items[slot] reads the uploaded permutation; distinct slots give distinct
//   items, so the plain accesses to results[item] of different blocks touch different
//   elements: no conflicting plain accesses, no race. Each block tries at most NUM_ITEMS
//   claims, enough for all items. The host reads after cudaDeviceSynchronize():
//   results = {1, 1, 1}.
// expect (ptx): Ok -- atom.global.add (relaxed, gpu) RMWs on one location are atomic
//   (morally strong, Atomicity axiom), so no two return the same old value; the weak
//   ld/st of results[item] go to different addresses in each block; the host's copies are
//   ordered before/after the kernel.
constexpr int NUM_ITEMS = 3;

__global__ void drain_queue(const int *items, unsigned int *head, int *results) {
    for (int round = 0; round < NUM_ITEMS; ++round) {
        unsigned int slot = atomicAdd_system(head, 1);
        if (slot >= NUM_ITEMS) break;
        int item = items[slot];
        results[item] += 1;
    }
}

int main() {
    int h_items[NUM_ITEMS] = {2, 0, 1};
    int h_results[NUM_ITEMS];
    int *d_items, *d_results;
    unsigned int *d_head;
    cudaMalloc(&d_items, NUM_ITEMS * sizeof(int));
    cudaMalloc(&d_results, NUM_ITEMS * sizeof(int));
    cudaMalloc(&d_head, sizeof(unsigned int));
    cudaMemcpy(d_items, h_items, sizeof(h_items), cudaMemcpyHostToDevice);
    cudaMemset(d_head, 0, sizeof(unsigned int));
    cudaMemset(d_results, 0, NUM_ITEMS * sizeof(int));
    drain_queue<<<2, 1>>>(d_items, d_head, d_results);
    cudaDeviceSynchronize();
    cudaMemcpy(h_results, d_results, sizeof(h_results), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < NUM_ITEMS; ++i) {
        if (h_results[i] != 1) bad++;
    }
    if (bad != 0) {
        fprintf(stderr, "%d items not processed exactly once\n", bad);
        return 1;
    }
    printf("ok\n");
    cudaFree(d_items);
    cudaFree(d_results);
    cudaFree(d_head);
    return 0;
}
