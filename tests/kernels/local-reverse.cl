//--local_size=4 --num_groups=2
// Each work-group reverses its slice through `__local` memory: work-item l stores its
// element in tmp[l], the group meets at barrier(CLK_LOCAL_MEM_FENCE), then it reads
// tmp[size - 1 - l]. The barrier orders every store to tmp before every load from it, each
// group has its own tmp, and each work-item writes only its own element of out: no race.
__kernel void reverse(__global const int *in, __global int *out, __local int *tmp) {
    int l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}
