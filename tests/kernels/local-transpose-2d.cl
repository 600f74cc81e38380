//--local_size=4 --num_groups=1
// OpenCL C: a 2 x 2 `__local` tile transposed by one work-group of 4 work-items: item i is
// (x, y) = (i % 2, i / 2), stores t[y][x], meets the others at barrier(CLK_LOCAL_MEM_FENCE),
// then loads t[x][y] (stored by item (y, x) before the barrier) into its own element of out.
// No race, in both views.
__kernel void transpose(__global const int *in, __global int *out) {
    __local int t[2][2];
    int i = get_local_id(0);
    int x = i % 2, y = i / 2;
    t[y][x] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = t[x][y];
}
