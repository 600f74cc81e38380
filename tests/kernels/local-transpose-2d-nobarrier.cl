//--local_size=4 --num_groups=1
// The racy twin of local-transpose-2d.cl: without the barrier item 1 (x 1, y 0) loads
// t[1][0], which item 2 (x 0, y 1) stores, and item 2 loads t[0][1], which item 1 stores:
// data races on t[0][1] and t[1][0], the elements 1 and 2, in both views.
__kernel void transpose(__global const int *in, __global int *out) {
    __local int t[2][2];
    int i = get_local_id(0);
    int x = i % 2, y = i / 2;
    t[y][x] = in[i];
    out[i] = t[x][y];
}
