// The same exchange through a __global buffer as global-exchange.cl, but the barrier names
// only local memory (a common slip when the scratch moved from __local to __global): its
// entry fence only local-synchronizes-with the others' exit fences, so nothing orders the
// global stores before work-item 0's loads. OpenCL: a data race, the sum may be 1.
__kernel void exchange(__global int *buf, __global int *out) {
    int lid = get_local_id(0);
    buf[lid] = lid + 1;
    barrier(CLK_LOCAL_MEM_FENCE);
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
