//--blockDim=2 --gridDim=1
// Not supported: a parameter declared as an array (`int m[][4]`, a pointer to rows of 4 in C;
// `int m[]` alike). The file is refused at the parameter, line 5, column 34, with the way
// round it: declare `int *m` and index it `m[i * 4 + j]`.
__global__ void first_column(int m[][4], int *out) {
    out[threadIdx.x] = m[threadIdx.x][0];
}
