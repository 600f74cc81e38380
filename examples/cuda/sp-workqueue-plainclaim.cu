#include <cstdio>
#include <cuda_runtime.h>
// sp-workqueue.cu with the claim written as a plain read-modify-write of the head index (load,
// +1, store) instead of atomicAdd: two blocks can read the same head and claim the same item.
//
// A persistent-blocks work queue: the host uploads a list of work items (item ids, a
// permutation of 0..NUM_ITEMS-1) with cudaMemcpy, zeroes the queue head and the results with
// cudaMemset, and launches two blocks that drain the queue: each claims the next slot with
// atomicAdd on the global head index, stops once the slot is past the end, and processes the
// claimed item by incrementing results[item] (a plain read-modify-write: every item is
// claimed by exactly one block, so no atomic is needed there). The host checks that every
// item was processed exactly once.
//
// expect (src11): No, racy: true -- *head is read and written with plain accesses by both
//   blocks, unordered by happens-before: a data race on head. In an execution where both
//   blocks read head = 0 before either stores 1, both claim slot 0 and process item 2: the
//   plain results[2] += 1 of the two blocks also race, and (interleaved one after the other)
//   leave results[2] = 2 (or 1 with a lost update while another item is processed twice),
//   so some result is not 1 and the host's check fails.
// expect (ptx): No -- the compiled ld.global / st.global of head are weak and not atomic
//   together; both blocks may load 0 (e.g. in an interleaving where neither has stored yet),
//   so item 2 is processed twice.
constexpr int NUM_ITEMS = 3;

__global__ void drain_queue(const int *items, unsigned int *head, int *results) {
    for (int round = 0; round < NUM_ITEMS; ++round) {
        unsigned int slot = *head;   // bug: not atomic
        *head = slot + 1;
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
