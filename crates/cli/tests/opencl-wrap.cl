// atomic_int and atomic_uint wrap at their 32 bits: INT_MAX + 1 is INT_MIN, UINT_MAX + 2 is 1
// (C11 7.17.7.5, which OpenCL C 2.0's atomics follow: atomic arithmetic on a signed type is two's
// complement with silent wrap-around). One work-item.
// expect (src11): Ok, racy: false -- one work-item, relaxed device-scope atomics; the host reads
//   each buffer after clFinish with a blocking read.
__kernel void bump(__global atomic_int *x, __global atomic_uint *u) {
    atomic_fetch_add_explicit(x, INT_MAX, memory_order_relaxed, memory_scope_device);
    atomic_fetch_add_explicit(x, 1, memory_order_relaxed, memory_scope_device);
    atomic_fetch_add_explicit(u, UINT_MAX, memory_order_relaxed, memory_scope_device);
    atomic_fetch_add_explicit(u, 2u, memory_order_relaxed, memory_scope_device);
}

void scopecheck_main() {
    cl_context ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, NULL);
    cl_command_queue queue = clCreateCommandQueue(ctx, NULL, 0, NULL);
    cl_program program = clCreateProgramWithSource(ctx, 1, NULL, NULL, NULL);
    clBuildProgram(program, 0, NULL, NULL, NULL, NULL);
    cl_kernel k = clCreateKernel(program, "bump", NULL);
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, NULL);
    cl_mem u = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, NULL);
    clSetKernelArg(k, 0, sizeof(cl_mem), &x);
    clSetKernelArg(k, 1, sizeof(cl_mem), &u);
    size_t global = 1, local = 1;
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    clFinish(queue);
    int rx;
    unsigned ru;
    clEnqueueReadBuffer(queue, x, CL_TRUE, 0, sizeof(int), &rx, 0, NULL, NULL);
    assert(rx == INT_MIN);
    clEnqueueReadBuffer(queue, u, CL_TRUE, 0, sizeof(int), &ru, 0, NULL, NULL);
    assert(ru == 1u);
}
