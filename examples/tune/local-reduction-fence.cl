// Over-specified copy of examples/opencl/local-reduction.cl for `scopecheck tune`: a seq_cst fence before the barrier, which already orders the stores before the reads.
// A work-group reduction in local memory: each of two work-items stores its value in a
// `__local` array, the group meets at `barrier(CLK_LOCAL_MEM_FENCE)`, and work-item 0 adds
// the two values and writes the sum out. The barrier orders the stores before the reads:
// the sum is always 3, without a race. Two work-groups each reduce their own copy of the
// local array (one per group).
__kernel void reduce(__global int *in, __global int *out, __local int *scratch) {
    int lid = get_local_id(0);
    int gid = get_global_id(0);
    scratch[lid] = in[gid];
    atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_seq_cst, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        out[get_group_id(0)] = scratch[0] + scratch[1];
    }
}

__kernel void fill(__global int *in) {
    int gid = get_global_id(0);
    in[gid] = gid % 2 + 1;
}

void scopecheck_main() {
    cl_context ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, NULL);
    cl_command_queue queue = clCreateCommandQueue(ctx, NULL, 0, NULL);
    cl_program program = clCreateProgramWithSource(ctx, 1, NULL, NULL, NULL);
    cl_kernel f = clCreateKernel(program, "fill", NULL);
    cl_kernel k = clCreateKernel(program, "reduce", NULL);
    cl_mem in = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4 * sizeof(int), NULL, NULL);
    int *out = (int *)clSVMAlloc(ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, 2 * sizeof(int), 0);
    clSetKernelArg(f, 0, sizeof(cl_mem), &in);
    clSetKernelArg(k, 0, sizeof(cl_mem), &in);
    clSetKernelArgSVMPointer(k, 1, out);
    clSetKernelArg(k, 2, 2 * sizeof(int), NULL);
    size_t global = 4, local = 2;
    // In-order queue: reduce starts after fill finished.
    clEnqueueNDRangeKernel(queue, f, 1, NULL, &global, &local, 0, NULL, NULL);
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    clFinish(queue);
    assert(out[0] == 3);
    assert(out[1] == 3);
}
