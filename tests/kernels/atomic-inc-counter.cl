//--global_size=4 --local_size=2
// (The launch comment gives the global size: 4 work-items in groups of 2, 2 groups.) An
// OpenCL 1.x counter: every work-item takes a slot with atomic_inc on a __global counter
// (a relaxed device-scope read-modify-write) and writes its own global id to its own element
// of `ids`. Atomic increments never race with each other and each `ids` element has one
// writer: no race, in both views.
__kernel void claim(__global int *counter, __global int *ids) {
    atomic_inc(counter);
    ids[get_global_id(0)] = (int)get_global_id(0);
}
