// scopecheck's CUDA runtime library: every call goes to scopecheck over a Unix socket
// (SCOPECHECK_SOCKET). The wire format is described in crates/hostrun/src/wire.rs; this file
// and that one change together.
//
// Processes: the first runtime call (or the constructor below) connects and forks once, so
// that the process running `main` has a supervisor: the supervisor waits for it and tells
// scopecheck how it ended (exit status or signal) and what it printed. At an observation with
// several outcomes the running process forks once per further outcome; each fork starts a
// supervisor of its own with its own connection, and continues with its outcome.
#define SCOPECHECK_RUNTIME_IMPL
#include "cuda_runtime.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

enum Op : uint8_t {
  HelloRoot = 1,
  HelloFork = 2,
  Register = 10,
  Malloc = 11,
  Free = 12,
  CopyH2D = 13,
  CopyD2H = 14,
  CopyD2D = 15,
  Memset = 16,
  Launch = 19,
  Sync = 20,
  StreamCreate = 21,
  EventCreate = 22,
  EventRecord = 23,
  WaitEvent = 24,
  Unsupported = 25,
  Props = 26,
  SymbolAddress = 27,
  ManagedPush = 28,
  MallocManaged = 29,
  Status = 30,
};

// Replies begin with one of these.
enum Tag : uint8_t { Reply = 0, Fork = 1, Stop = 2, Managed = 3 };

// Device addresses scopecheck hands out lie in this range, which no host allocation uses.
const uint64_t DEVICE_BASE = 0x5c0000000000ull;
const uint64_t DEVICE_END = 0x5d0000000000ull;

int fd = -1;

// Managed memory (cudaMallocManaged, `__managed__` variables) is this process's own memory:
// its contents go to scopecheck before every call and come back, as the device left them,
// before the answer to every call that observes the device.
struct Region {
  void *p;
  size_t n;
};
std::vector<Region> *managed_regions() {
  static std::vector<Region> *r = new std::vector<Region>();
  return r;
}
uint64_t conn_id = 0;
const char *call_file = "?";
int call_line = 0;
cudaError_t last_error = cudaSuccess;

[[noreturn]] void die(const char *why) {
  fprintf(stderr, "scopecheck runtime: %s\n", why);
  _exit(124);
}

void write_all(const void *p, size_t n) {
  const char *c = (const char *)p;
  while (n > 0) {
    ssize_t k = ::write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) _exit(124); // scopecheck is gone: nothing to report to
    c += k;
    n -= (size_t)k;
  }
}

void read_all(void *p, size_t n) {
  char *c = (char *)p;
  while (n > 0) {
    ssize_t k = ::read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) _exit(124);
    c += k;
    n -= (size_t)k;
  }
}

struct Msg {
  std::vector<uint8_t> b;
  explicit Msg(Op op) { b.push_back(op); }
  Msg &u8(uint8_t v) { b.push_back(v); return *this; }
  Msg &u32(uint32_t v) { for (int i = 0; i < 4; i++) b.push_back((uint8_t)(v >> (8 * i))); return *this; }
  Msg &u64(uint64_t v) { for (int i = 0; i < 8; i++) b.push_back((uint8_t)(v >> (8 * i))); return *this; }
  Msg &blob(const void *p, size_t n) {
    u64(n);
    const uint8_t *c = (const uint8_t *)p;
    b.insert(b.end(), c, c + n);
    return *this;
  }
  Msg &str(const char *s) { return blob(s, strlen(s)); }
  // Every request names where it was made.
  Msg &at() { return str(call_file).u32((uint32_t)call_line); }
  void send() {
    uint32_t n = (uint32_t)b.size();
    write_all(&n, 4);
    write_all(b.data(), b.size());
  }
};

struct In {
  std::vector<uint8_t> b;
  size_t at = 0;
  void recv() {
    uint32_t n;
    read_all(&n, 4);
    b.resize(n);
    read_all(b.data(), n);
    at = 0;
  }
  uint8_t u8() { if (at + 1 > b.size()) die("short reply"); return b[at++]; }
  uint32_t u32() { uint32_t v = 0; for (int i = 0; i < 4; i++) v |= (uint32_t)u8() << (8 * i); return v; }
  uint64_t u64() { uint64_t v = 0; for (int i = 0; i < 8; i++) v |= (uint64_t)u8() << (8 * i); return v; }
  void blob(void *p, size_t cap) {
    uint64_t n = u64();
    if (n > cap || at + n > b.size()) die("reply larger than asked");
    memcpy(p, b.data() + at, n);
    at += n;
  }
  std::string str() {
    uint64_t n = u64();
    if (at + n > b.size()) die("short reply");
    std::string s((const char *)b.data() + at, n);
    at += n;
    return s;
  }
};

int connect_socket() {
  const char *path = getenv("SCOPECHECK_SOCKET");
  if (!path) die("SCOPECHECK_SOCKET is not set: this program is run by `scopecheck check`");
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
  if (s < 0 || connect(s, (sockaddr *)&a, sizeof(a)) != 0) die("cannot connect to scopecheck");
  return s;
}

// Becomes the supervisor of a new process that runs the program on: waits for it, then
// reports how it ended and what it printed. Returns in the new process only.
void supervise() {
  int pipefd[2];
  if (pipe(pipefd) != 0) die("pipe");
  fflush(nullptr);
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close(pipefd[0]);
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    close(pipefd[1]);
    return;
  }
  close(pipefd[1]);
  // The supervisor holds no other copy of the output: the pipe ends when the program does.
  int devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, 1);
  dup2(devnull, 2);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t k = read(pipefd[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    out.append(buf, (size_t)k);
    // Only the tail is kept: it holds the failed assertion or the error message.
    if (out.size() > (64u << 10)) out.erase(0, out.size() - (32u << 10));
  }
  int st = 0;
  while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
  }
  Msg m(Status);
  if (WIFSIGNALED(st)) m.u8(1).u32((uint32_t)WTERMSIG(st));
  else m.u8(0).u32((uint32_t)WEXITSTATUS(st));
  m.blob(out.data(), out.size()).send();
  _exit(0);
}

void start() {
  if (fd >= 0) return;
  fd = connect_socket();
  Msg(HelloRoot).u64((uint64_t)getpid()).send();
  In r;
  r.recv();
  conn_id = r.u64();
  supervise();
}

__attribute__((constructor)) void begin() { start(); }

// Sends `m` and returns the reply, forking first where scopecheck says the observation has
// several outcomes; `Stop` ends the process (scopecheck already reported why).
void push_managed() {
  std::vector<Region> &rs = *managed_regions();
  if (rs.empty()) return;
  Msg p(ManagedPush);
  p.u32((uint32_t)rs.size());
  for (const Region &r : rs) p.u64((uint64_t)r.p).blob(r.p, r.n);
  p.send();
}

// Reads replies until one that is not a managed-memory update, applying those.
uint8_t next_tag(In &r) {
  for (;;) {
    r.recv();
    uint8_t tag = r.u8();
    if (tag != Managed) return tag;
    uint32_t n = r.u32();
    for (uint32_t i = 0; i < n; i++) {
      void *p = (void *)r.u64();
      for (const Region &g : *managed_regions())
        if (g.p == p) r.blob(p, g.n);
    }
  }
}

In ask(Msg &m) {
  start();
  push_managed();
  m.send();
  In r;
  uint8_t tag = next_tag(r);
  if (tag == Fork) {
    uint64_t n = r.u64();
    for (uint64_t i = 1; i < n; i++) {
      fflush(nullptr);
      pid_t p = fork();
      if (p < 0) die("fork");
      if (p == 0) {
        close(fd);
        fd = connect_socket();
        Msg(HelloFork).u64(conn_id).u64(i).send();
        In h;
        h.recv();
        conn_id = h.u64();
        supervise();
        break; // the new process: outcome i
      }
    }
    tag = next_tag(r);
  }
  if (tag == Stop) {
    std::string why = r.str();
    fprintf(stderr, "scopecheck: %s\n", why.c_str());
    fflush(nullptr);
    _exit(125);
  }
  if (tag != Reply) die("unknown reply");
  return r;
}

cudaError_t result(In &r) {
  cudaError_t e = (cudaError_t)r.u32();
  if (e != cudaSuccess) last_error = e;
  return e;
}

// Device memory, or managed memory (whose copies scopecheck orders after the device work).
bool is_device(const void *p) {
  uint64_t a = (uint64_t)p;
  if (a >= DEVICE_BASE && a < DEVICE_END) return true;
  for (const Region &r : *managed_regions())
    if (a >= (uint64_t)r.p && a < (uint64_t)r.p + r.n) return true;
  return false;
}

cudaError_t add_managed(void *p, size_t bytes, const char *name) {
  Msg m(MallocManaged);
  m.at().u64((uint64_t)p).u64(bytes).str(name);
  In r = ask(m);
  cudaError_t e = result(r);
  if (e == cudaSuccess) managed_regions()->push_back(Region{p, bytes});
  return e;
}

[[noreturn]] void unsupported(const char *call) {
  Msg m(Unsupported);
  m.at().str(call);
  ask(m);
  die("unsupported call"); // scopecheck answers with Stop
}

cudaError_t copy(void *dst, const void *src, size_t bytes) {
  bool d = is_device(dst), s = is_device(src);
  if (!d && !s) {
    memmove(dst, src, bytes);
    return cudaSuccess;
  }
  if (d && !s) {
    Msg m(CopyH2D);
    m.at().u64((uint64_t)dst).blob(src, bytes);
    In r = ask(m);
    return result(r);
  }
  if (!d && s) {
    Msg m(CopyD2H);
    m.at().u64((uint64_t)src).u64(bytes);
    In r = ask(m);
    cudaError_t e = result(r);
    if (e == cudaSuccess) r.blob(dst, bytes);
    return e;
  }
  Msg m(CopyD2D);
  m.at().u64((uint64_t)dst).u64((uint64_t)src).u64(bytes);
  In r = ask(m);
  return result(r);
}

cudaError_t sync(uint8_t what, uint64_t handle) {
  Msg m(Sync);
  m.at().u8(what).u64(handle);
  In r = ask(m);
  return result(r);
}

} // namespace

namespace scopecheck {
void here(const char *file, int line) {
  call_file = file;
  call_line = line;
}

Symbol::Symbol(const void *shadow, size_t bytes, const char *name, int managed) {
  if (managed) {
    add_managed((void *)shadow, bytes, name);
    return;
  }
  Msg m(Register);
  m.at().str(name).u64((uint64_t)shadow).blob(shadow, bytes).u8((uint8_t)managed);
  ask(m);
}

// A launch's own result (a `<<<...>>>` launch leaves it for cudaGetLastError).
static cudaError_t send_launch(const char *kernel, dim3 g, dim3 b, size_t shared, cudaStream_t stream,
                               const Arg *args, size_t n) {
  Msg m(Op::Launch);
  m.at().str(kernel).u32(g.x).u32(g.y).u32(g.z).u32(b.x).u32(b.y).u32(b.z);
  m.u64(shared).u64((uint64_t)stream).u32((uint32_t)n);
  for (size_t i = 0; i < n; i++) m.blob(args[i].bytes, args[i].size);
  In r = ask(m);
  return result(r);
}

void launch(const char *kernel, dim3 g, dim3 b, size_t shared, cudaStream_t stream, const Arg *args, size_t n) {
  send_launch(kernel, g, b, shared, stream, args, n);
}

namespace {
struct KernelStub {
  const void *stub;
  const char *name;
  std::vector<size_t> sizes;
};
std::vector<KernelStub> &kernel_stubs() {
  static std::vector<KernelStub> all;
  return all;
}
} // namespace

void register_kernel(const void *stub, const char *name, const size_t *sizes, size_t n) {
  kernel_stubs().push_back(KernelStub{stub, name, std::vector<size_t>(sizes, sizes + n)});
}

cudaError_t launch_stub(const void *stub, dim3 g, dim3 b, void **args, size_t shared, cudaStream_t stream,
                        const char *api) {
  if (!stub) unsupported(api);
  for (const KernelStub &k : kernel_stubs()) {
    if (k.stub != stub) continue;
    std::vector<Arg> a;
    for (size_t i = 0; i < k.sizes.size(); i++) a.push_back(Arg{args[i], k.sizes[i]});
    return send_launch(k.name, g, b, shared, stream, a.data(), a.size());
  }
  std::string why = std::string(api) + " of a function that is not a (non-template) kernel of this file";
  unsupported(why.c_str());
}

cudaError_t symbol_address(void **p, const void *shadow) {
  Msg m(SymbolAddress);
  m.at().u64((uint64_t)shadow);
  In r = ask(m);
  cudaError_t e = result(r);
  *p = (void *)r.u64();
  return e;
}

cudaError_t symbol_to(const void *shadow, const void *src, size_t bytes, size_t offset, cudaMemcpyKind) {
  void *d;
  cudaError_t e = symbol_address(&d, shadow);
  if (e != cudaSuccess) return e;
  return copy((char *)d + offset, src, bytes);
}

cudaError_t symbol_from(void *dst, const void *shadow, size_t bytes, size_t offset, cudaMemcpyKind) {
  void *d;
  cudaError_t e = symbol_address(&d, shadow);
  if (e != cudaSuccess) return e;
  return copy(dst, (char *)d + offset, bytes);
}
} // namespace scopecheck

cudaError_t cudaMalloc(void **p, size_t bytes) {
  Msg m(Malloc);
  m.at().u64(bytes);
  In r = ask(m);
  cudaError_t e = result(r);
  *p = (void *)r.u64();
  return e;
}

cudaError_t cudaFree(void *p) {
  if (p == nullptr) return cudaSuccess;
  std::vector<Region> &rs = *managed_regions();
  for (size_t i = 0; i < rs.size(); i++)
    if (rs[i].p == p) {
      cudaDeviceSynchronize();
      rs.erase(rs.begin() + (long)i);
      free(p);
      return cudaSuccess;
    }
  Msg m(Free);
  m.at().u64((uint64_t)p);
  In r = ask(m);
  return result(r);
}

// Pinned host memory that kernels do not access is ordinary host memory to the host part.
cudaError_t cudaMallocHost(void **p, size_t bytes) {
  *p = malloc(bytes ? bytes : 1);
  return *p ? cudaSuccess : (last_error = cudaErrorMemoryAllocation);
}
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags) {
  if (flags & cudaHostAllocMapped) unsupported("cudaHostAlloc with cudaHostAllocMapped (zero-copy memory kernels access)");
  return cudaMallocHost(p, bytes);
}
cudaError_t cudaFreeHost(void *p) {
  free(p);
  return cudaSuccess;
}
cudaError_t cudaMallocManaged(void **p, size_t bytes, unsigned int) {
  *p = calloc(bytes ? bytes : 1, 1);
  if (!*p) return last_error = cudaErrorMemoryAllocation;
  return add_managed(*p, bytes, "");
}
cudaError_t cudaHostRegister(void *, size_t, unsigned int) { unsupported("cudaHostRegister"); }
cudaError_t cudaHostUnregister(void *) { unsupported("cudaHostUnregister"); }
cudaError_t cudaHostGetDevicePointer(void **, void *, unsigned int) { unsupported("cudaHostGetDevicePointer"); }

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) { return copy(dst, src, bytes); }
// The host waits for an asynchronous copy as for a synchronous one: it observes the same
// memory, one call later at most.
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  return copy(dst, src, bytes);
}
cudaError_t cudaMemset(void *p, int value, size_t bytes) {
  if (!is_device(p)) {
    memset(p, value, bytes);
    return cudaSuccess;
  }
  Msg m(Memset);
  m.at().u64((uint64_t)p).u8((uint8_t)value).u64(bytes);
  In r = ask(m);
  return result(r);
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t) { return cudaMemset(p, value, bytes); }

cudaError_t cudaDeviceSynchronize(void) { return sync(0, 0); }
cudaError_t cudaThreadSynchronize(void) { return sync(0, 0); }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return sync(1, (uint64_t)s); }
cudaError_t cudaStreamQuery(cudaStream_t) { unsupported("cudaStreamQuery (its answer depends on timing)"); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return sync(2, (uint64_t)e); }
cudaError_t cudaEventQuery(cudaEvent_t) { unsupported("cudaEventQuery (its answer depends on timing)"); }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) {
  // Time is not modelled: every interval is reported as zero, which no verdict depends on.
  *ms = 0.0f;
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
  Msg m(StreamCreate);
  m.at().u32(flags);
  In r = ask(m);
  cudaError_t e = result(r);
  *s = (cudaStream_t)r.u64();
  return e;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int) {
  Msg m(EventCreate);
  m.at();
  In r = ask(m);
  cudaError_t err = result(r);
  *e = (cudaEvent_t)r.u64();
  return err;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  Msg m(EventRecord);
  m.at().u64((uint64_t)e).u64((uint64_t)s);
  In r = ask(m);
  return result(r);
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  Msg m(WaitEvent);
  m.at().u64((uint64_t)s).u64((uint64_t)e);
  In r = ask(m);
  return result(r);
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
  case cudaErrorInvalidSymbol: return "cudaErrorInvalidSymbol";
  case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
  case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
  case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
  case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  default: return "cudaErrorUnknown";
  }
}
const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorInvalidSymbol: return "invalid device symbol";
  case cudaErrorInvalidDevicePointer: return "invalid device pointer";
  case cudaErrorInvalidDevice: return "invalid device ordinal";
  case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  case cudaErrorLaunchFailure: return "unspecified launch failure";
  default: return "unknown error";
  }
}

cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : (last_error = cudaErrorInvalidDevice); }
cudaError_t cudaSetDeviceFlags(unsigned int) { return cudaSuccess; }
cudaError_t cudaDeviceReset(void) { return sync(0, 0); }
cudaError_t cudaDriverGetVersion(int *v) {
  *v = 12090;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) {
  *v = 12090;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d) {
  if (d != 0) return last_error = cudaErrorInvalidDevice;
  Msg m(Props);
  m.at();
  In r = ask(m);
  cudaError_t e = result(r);
  memset(p, 0, sizeof *p);
  std::string name = r.str();
  strncpy(p->name, name.c_str(), sizeof(p->name) - 1);
  p->major = (int)r.u32();
  p->minor = (int)r.u32();
  p->multiProcessorCount = (int)r.u32();
  p->hostNativeAtomicSupported = (int)r.u8();
  p->concurrentManagedAccess = (int)r.u8();
  p->pageableMemoryAccess = (int)r.u8();
  // The rest as on the H100/H200 generation the built-in profiles describe.
  p->totalGlobalMem = (size_t)80 << 30;
  p->sharedMemPerBlock = 48 << 10;
  p->sharedMemPerBlockOptin = 227 << 10;
  p->sharedMemPerMultiprocessor = 228 << 10;
  p->regsPerBlock = 65536;
  p->regsPerMultiprocessor = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->maxThreadsPerMultiProcessor = 2048;
  p->clockRate = 1980000;
  p->memoryClockRate = 2619000;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 << 20;
  p->totalConstMem = 64 << 10;
  p->concurrentKernels = 1;
  p->canMapHostMemory = 1;
  p->unifiedAddressing = 1;
  p->managedMemory = 1;
  p->cooperativeLaunch = 1;
  p->asyncEngineCount = 2;
  p->deviceOverlap = 1;
  return e;
}
