// scopecheck's CUDA runtime for the host part of a .cu file (issue 35).
//
// The host part of a test is compiled against this header by the system C++ compiler and
// linked with runtime.cpp. Every call below is answered by scopecheck over a socket: device
// memory lives in scopecheck, launches are recorded there, and where the host observes the
// device (a synchronization, a copy back) scopecheck explores the kernels under the memory
// model and this process forks once per distinct outcome. A call scopecheck does not model
// stops the program with an error naming the call and its line, never a silent success.
#ifndef SCOPECHECK_CUDA_RUNTIME_H
#define SCOPECHECK_CUDA_RUNTIME_H

// What nvcc's runtime headers bring in for every file (programs use assert, printf and
// exit without including their headers, and nvcc builds them).
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
// libcu++'s atomics, which the interpreted harness's examples use without including them.
#include <cuda/atomic>
#include <tuple>
#include <type_traits>
#include <utility>

// nvcc's execution-space and memory-space specifiers mean nothing to the host compiler: kernel
// bodies and device-only functions were removed by scopecheck's split, `__device__` variables
// are host shadows registered by name.
#define __global__
#define __device__
#define __host__
#define __shared__
#define __constant__
#define __managed__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __grid_constant__

// Vector types and dim3, as the CUDA headers define them.
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
#define SCOPECHECK_VEC(T, N2, N3, N4)                                                         \
  struct N2 { T x, y; };                                                                        \
  struct N3 { T x, y, z; };                                                                     \
  struct alignas(sizeof(T) * 4 <= 16 ? sizeof(T) * 4 : 16) N4 { T x, y, z, w; };               \
  inline N2 make_##N2(T x, T y) { return N2{x, y}; }                                            \
  inline N3 make_##N3(T x, T y, T z) { return N3{x, y, z}; }                                    \
  inline N4 make_##N4(T x, T y, T z, T w) { return N4{x, y, z, w}; }
SCOPECHECK_VEC(int, int2, int3, int4)
SCOPECHECK_VEC(float, float2, float3, float4)
SCOPECHECK_VEC(double, double2, double3, double4)
SCOPECHECK_VEC(long long, longlong2, longlong3, longlong4)
#undef SCOPECHECK_VEC
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorNotSupported = 801,
  cudaErrorLaunchFailure = 719,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaEventDefault 0x0
#define cudaEventBlockingSync 0x1
#define cudaEventDisableTiming 0x2
#define cudaHostAllocDefault 0x0
#define cudaHostAllocPortable 0x1
#define cudaHostAllocMapped 0x2
#define cudaHostAllocWriteCombined 0x4
#define cudaHostRegisterDefault 0x0
#define cudaHostRegisterPortable 0x1
#define cudaHostRegisterMapped 0x2
#define cudaDeviceScheduleAuto 0x0
#define cudaDeviceMapHost 0x8
#define cudaMemAttachGlobal 0x1
#define cudaMemAttachHost 0x2

// The fields real tests read; the values come from the platform profile scopecheck checks on.
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int hostNativeAtomicSupported;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
};

// Where each call is made: set by the macros at the end of this header before the call, so
// that scopecheck names the line of a call it refuses or of an observation it explores.
namespace scopecheck {
void here(const char *file, int line);
}

cudaError_t cudaMalloc(void **p, size_t bytes);
template <class T> inline cudaError_t cudaMalloc(T **p, size_t bytes) { return cudaMalloc((void **)p, bytes); }
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t bytes);
template <class T> inline cudaError_t cudaMallocHost(T **p, size_t bytes) { return cudaMallocHost((void **)p, bytes); }
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags);
template <class T> inline cudaError_t cudaHostAlloc(T **p, size_t bytes, unsigned int flags) { return cudaHostAlloc((void **)p, bytes, flags); }
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaMallocManaged(void **p, size_t bytes, unsigned int flags = cudaMemAttachGlobal);
template <class T> inline cudaError_t cudaMallocManaged(T **p, size_t bytes, unsigned int flags = cudaMemAttachGlobal) { return cudaMallocManaged((void **)p, bytes, flags); }
cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned int flags);
cudaError_t cudaHostUnregister(void *p);
cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned int flags);
template <class T> inline cudaError_t cudaHostGetDevicePointer(T **d, void *h, unsigned int flags) { return cudaHostGetDevicePointer((void **)d, h, flags); }
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream = 0);
cudaError_t cudaMemset(void *p, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream = 0);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t e);
const char *cudaGetErrorName(cudaError_t e);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDevice(int *d);
cudaError_t cudaSetDevice(int d);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d);
cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaRuntimeGetVersion(int *v);

namespace scopecheck {
cudaError_t symbol_to(const void *shadow, const void *src, size_t bytes, size_t offset, cudaMemcpyKind kind);
cudaError_t symbol_from(void *dst, const void *shadow, size_t bytes, size_t offset, cudaMemcpyKind kind);
cudaError_t symbol_address(void **p, const void *shadow);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t bytes, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return scopecheck::symbol_to((const void *)&symbol, src, bytes, offset, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t bytes, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return scopecheck::symbol_from(dst, (const void *)&symbol, bytes, offset, kind);
}
template <class T> inline cudaError_t cudaGetSymbolAddress(void **p, const T &symbol) {
  return scopecheck::symbol_address(p, (const void *)&symbol);
}

namespace scopecheck {
// A `__device__` variable's host shadow, registered by name (the split adds one after each
// declaration): its initial bytes are the variable's initial value.
struct Symbol {
  Symbol(const void *shadow, size_t bytes, const char *name, int managed);
};

// One argument of a launch, converted to the kernel parameter's type first, as a call would.
struct Arg {
  const void *bytes;
  size_t size;
};
void launch(const char *kernel, dim3 grid, dim3 block, size_t shared, cudaStream_t stream, const Arg *args,
            size_t n);

// Each non-template kernel of the file, registered by its host stub's address (the split adds
// `kernel_name(k, "k")` after each definition), with its parameters' sizes: what
// cudaLaunchKernel needs to read its `void **args`.
void register_kernel(const void *stub, const char *name, const size_t *sizes, size_t n);
template <class... P> int kernel_name(void (*stub)(P...), const char *name) {
  size_t sizes[sizeof...(P) + 1] = {sizeof(typename std::decay<P>::type)...};
  register_kernel((const void *)stub, name, sizes, sizeof...(P));
  return 0;
}
cudaError_t launch_stub(const void *stub, dim3 grid, dim3 block, void **args, size_t shared,
                        cudaStream_t stream, const char *api);

// `k<<<grid, block, shared, stream>>>(args)` as the split writes it:
// `scopecheck::Launch("k", __FILE__, __LINE__, grid, block, shared, stream).run(k, args)`.
struct Launch {
  const char *kernel;
  dim3 grid, block;
  size_t shared;
  cudaStream_t stream;
  Launch(const char *k, const char *file, int line, dim3 g, dim3 b, size_t s = 0, cudaStream_t st = 0)
      : kernel(k), grid(g), block(b), shared(s), stream(st) {
    here(file, line);
  }
  template <class... P, class... A> void run(void (*)(P...), A &&...a) {
    static_assert(sizeof...(P) == sizeof...(A), "a kernel launch with the wrong number of arguments");
    std::tuple<typename std::decay<P>::type...> values(std::forward<A>(a)...);
    send(values, std::index_sequence_for<P...>{});
  }
  template <class Tuple, std::size_t... I> void send(const Tuple &values, std::index_sequence<I...>) {
    Arg args[sizeof...(I) + 1] = {Arg{(const void *)&std::get<I>(values), sizeof(std::get<I>(values))}...};
    launch(kernel, grid, block, shared, stream, args, sizeof...(I));
  }
};
} // namespace scopecheck

// cudaLaunchKernel, with the kernel given by its host stub: a launch as `k<<<...>>>` is.
// cudaLaunchCooperativeKernel is refused at run time (the split sends a file naming it to the
// interpreted harness, which explores cooperative launches).
template <class T>
inline cudaError_t cudaLaunchKernel(T *func, dim3 grid, dim3 block, void **args, size_t shared = 0,
                                    cudaStream_t stream = 0) {
  return scopecheck::launch_stub((const void *)func, grid, block, args, shared, stream, "cudaLaunchKernel");
}
template <class T>
inline cudaError_t cudaLaunchCooperativeKernel(T *func, dim3 grid, dim3 block, void **args, size_t shared = 0,
                                               cudaStream_t stream = 0) {
  return scopecheck::launch_stub(nullptr, grid, block, args, shared, stream,
                                 "cudaLaunchCooperativeKernel (a cooperative launch)");
}

#ifndef SCOPECHECK_RUNTIME_IMPL
// Each call records its line first (`__LINE__` inside a user's error-check macro is the
// macro's use, as in a real build).
#define SCOPECHECK_AT(call) (scopecheck::here(__FILE__, __LINE__), ::call)
#define cudaMalloc(...) SCOPECHECK_AT(cudaMalloc(__VA_ARGS__))
#define cudaFree(...) SCOPECHECK_AT(cudaFree(__VA_ARGS__))
#define cudaMallocHost(...) SCOPECHECK_AT(cudaMallocHost(__VA_ARGS__))
#define cudaHostAlloc(...) SCOPECHECK_AT(cudaHostAlloc(__VA_ARGS__))
#define cudaFreeHost(...) SCOPECHECK_AT(cudaFreeHost(__VA_ARGS__))
#define cudaMallocManaged(...) SCOPECHECK_AT(cudaMallocManaged(__VA_ARGS__))
#define cudaHostRegister(...) SCOPECHECK_AT(cudaHostRegister(__VA_ARGS__))
#define cudaHostGetDevicePointer(...) SCOPECHECK_AT(cudaHostGetDevicePointer(__VA_ARGS__))
#define cudaMemcpy(...) SCOPECHECK_AT(cudaMemcpy(__VA_ARGS__))
#define cudaMemcpyAsync(...) SCOPECHECK_AT(cudaMemcpyAsync(__VA_ARGS__))
#define cudaMemset(...) SCOPECHECK_AT(cudaMemset(__VA_ARGS__))
#define cudaMemsetAsync(...) SCOPECHECK_AT(cudaMemsetAsync(__VA_ARGS__))
#define cudaMemcpyToSymbol(...) SCOPECHECK_AT(cudaMemcpyToSymbol(__VA_ARGS__))
#define cudaMemcpyFromSymbol(...) SCOPECHECK_AT(cudaMemcpyFromSymbol(__VA_ARGS__))
#define cudaDeviceSynchronize(...) SCOPECHECK_AT(cudaDeviceSynchronize(__VA_ARGS__))
#define cudaStreamSynchronize(...) SCOPECHECK_AT(cudaStreamSynchronize(__VA_ARGS__))
#define cudaStreamQuery(...) SCOPECHECK_AT(cudaStreamQuery(__VA_ARGS__))
#define cudaStreamWaitEvent(...) SCOPECHECK_AT(cudaStreamWaitEvent(__VA_ARGS__))
#define cudaEventRecord(...) SCOPECHECK_AT(cudaEventRecord(__VA_ARGS__))
#define cudaEventSynchronize(...) SCOPECHECK_AT(cudaEventSynchronize(__VA_ARGS__))
#define cudaEventQuery(...) SCOPECHECK_AT(cudaEventQuery(__VA_ARGS__))
#define cudaLaunchKernel(...) SCOPECHECK_AT(cudaLaunchKernel(__VA_ARGS__))
#define cudaLaunchCooperativeKernel(...) SCOPECHECK_AT(cudaLaunchCooperativeKernel(__VA_ARGS__))
#define cudaEventElapsedTime(...) SCOPECHECK_AT(cudaEventElapsedTime(__VA_ARGS__))
#define cudaGetDeviceProperties(...) SCOPECHECK_AT(cudaGetDeviceProperties(__VA_ARGS__))
#endif

#endif
