//--local_size=2 --num_groups=2
// The racy twin of atomic-inc-counter.cl: `*counter += 1` by every work-item is a plain load
// and store of one __global word, unordered with the others': a data race, in both views.
__kernel void claim(__global int *counter, __global int *ids) {
    *counter += 1;
    ids[get_global_id(0)] = (int)get_global_id(0);
}
