// Three lanes of one warp run __activemask() twice. Which lanes run it converged is the
// scheduler's choice each time, but lanes that report each other report the same mask, with
// their own lane in it: each execution of it partitions the lanes. Three lanes have Bell(3) = 5
// partitions ({0}{1}{2}, {01}{2}, {02}{1}, {0}{12}, {012}), chosen independently at the two
// executions: 25 executions, 25 final states, and the host's consistency check always holds.
__global__ void k(unsigned int* out) {
    for (int i = 0; i < 2; i++) out[i * 3 + threadIdx.x] = __activemask();
}

int main() {
    unsigned int* out;
    cudaMallocManaged(&out, 6 * sizeof(unsigned int));
    k<<<1, 3>>>(out);
    cudaDeviceSynchronize();
    for (int i = 0; i < 2; i++) {
        for (int l = 0; l < 3; l++) {
            unsigned int m = out[i * 3 + l];
            if ((m & (1u << l)) == 0) return 1;
            for (int o = 0; o < 3; o++) {
                if ((m & (1u << o)) != 0 && out[i * 3 + o] != m) return 1;
            }
        }
    }
    return 0;
}
