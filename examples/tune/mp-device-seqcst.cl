// Over-specified copy of examples/opencl/mp-device.cl for `scopecheck tune`: seq_cst flag accesses where release and acquire are enough.
// Message passing between two work-groups of one kernel: work-group 0 writes the data and
// releases the flag at device scope; work-group 1 awaits the flag with device-scope acquire
// loads and reads the data. Release/acquire at device scope between work-items of one
// device synchronize: the reader always sees 42.
__kernel void mp(__global int *data, __global atomic_int *flag, __global int *out) {
    if (get_group_id(0) == 0) {
        *data = 42;
        atomic_store_explicit(flag, 1, memory_order_seq_cst, memory_scope_device);
    } else {
        while (atomic_load_explicit(flag, memory_order_seq_cst, memory_scope_device) == 0) { }
        *out = *data;
    }
}

void scopecheck_main() {
    cl_context ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, NULL);
    cl_command_queue queue = clCreateCommandQueue(ctx, NULL, 0, NULL);
    cl_program program = clCreateProgramWithSource(ctx, 1, NULL, NULL, NULL);
    clBuildProgram(program, 0, NULL, NULL, NULL, NULL);
    cl_kernel k = clCreateKernel(program, "mp", NULL);
    cl_mem data = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, NULL);
    cl_mem flag = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, NULL);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, NULL);
    clSetKernelArg(k, 0, sizeof(cl_mem), &data);
    clSetKernelArg(k, 1, sizeof(cl_mem), &flag);
    clSetKernelArg(k, 2, sizeof(cl_mem), &out);
    size_t global = 2, local = 1;
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    clFinish(queue);
    int result;
    clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof(int), &result, 0, NULL, NULL);
    assert(result == 42);
}
