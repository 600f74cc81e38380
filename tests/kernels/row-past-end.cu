//--blockDim=[2,2] --gridDim=1
// Thread (1, y) stores t[y][2], past a row of `int t[2][2]`: undefined behaviour in C even for
// y = 0, where element 2 (t[1][0]) lies inside the tile. The language view faults at line 7 in
// thread (1, 0), `shift.b0.t1`: a constant index outside its dimension faults when it runs.
__global__ void shift(int *out) {
    __shared__ int t[2][2];
    t[threadIdx.y][threadIdx.x + 1] = 1;
    __syncthreads();
    out[threadIdx.y * 2 + threadIdx.x] = t[threadIdx.y][0];
}
