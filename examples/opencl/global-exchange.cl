// Two work-items of one work-group exchange values through a __global buffer: each stores
// its value, the group meets at barrier(CLK_GLOBAL_MEM_FENCE), and work-item 0 adds both.
// The barrier's flags name global memory, so its entry fence global-synchronizes-with the
// other work-item's exit fence: the sum is always 3, without a race.
__kernel void exchange(__global int *buf, __global int *out) {
    int lid = get_local_id(0);
    buf[lid] = lid + 1;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
        out[0] = buf[0] + buf[1];
    }
}

void scopecheck_main() {
    cl_context ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, NULL);
    cl_command_queue queue = clCreateCommandQueue(ctx, NULL, 0, NULL);
    cl_program program = clCreateProgramWithSource(ctx, 1, NULL, NULL, NULL);
    cl_kernel k = clCreateKernel(program, "exchange", NULL);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 2 * sizeof(int), NULL, NULL);
    int *out = (int *)clSVMAlloc(ctx, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, sizeof(int), 0);
    clSetKernelArg(k, 0, sizeof(cl_mem), &buf);
    clSetKernelArgSVMPointer(k, 1, out);
    size_t global = 2, local = 2;
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    clFinish(queue);
    assert(out[0] == 3);
}
