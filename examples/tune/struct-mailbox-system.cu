// Over-specified copy of examples/cuda/struct-mailbox.cu for `scopecheck tune`: atomicExch_system on the flag where device scope is enough.
// A mailbox struct in managed memory: one location per field (`box.payload`, `box.flag`).
// The producer writes the payload, fences at device scope and raises the flag with an atomic;
// the consumer (another block, on another stream) awaits the flag through `&box->flag`,
// fences, and copies the payload out.
struct Mailbox {
    int payload;
    int flag;
};

__global__ void produce(Mailbox *box, int v) {
    box->payload = v;
    __threadfence();
    atomicExch_system(&box->flag, 1);
}

__global__ void consume(Mailbox *box, int *out) {
    while (atomicAdd(&box->flag, 0) == 0) { }
    __threadfence();
    *out = box->payload;
}

void scopecheck_main() {
    Mailbox *box;
    int *out;
    cudaMallocManaged(&box, sizeof(Mailbox));
    cudaMallocManaged(&out, sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    consume<<<1, 1, 0, a>>>(box, out);
    produce<<<1, 1, 0, b>>>(box, 42);
    cudaDeviceSynchronize();
    assert(*out == 42);
    assert(box->flag == 1);
}
