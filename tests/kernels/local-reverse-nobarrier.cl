//--local_size=4 --num_groups=2
// The racy twin of local-reverse.cl: without the barrier, work-item l's load of
// tmp[size - 1 - l] is unordered with work-item size - 1 - l's store there: a data race on
// the group's local memory.
__kernel void reverse(__global const int *in, __global int *out, __local int *tmp) {
    int l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];
}
