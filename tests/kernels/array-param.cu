//--blockDim=2 --gridDim=1
// Not supported in the language view: a parameter declared as a two-dimensional array
// (`int m[][4]`, a pointer to rows of 4 in C), refused at the parameter (line 5, column 30),
// saying to declare `int *m` and index it `m[i * 4 + j]`. The PTX view checks it as compiled.
__global__ void first_column(int m[][4], int *out) {
    out[threadIdx.x] = m[threadIdx.x][0];
}
