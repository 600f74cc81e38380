// A project's helper header, found with -I (tests/programs/real/include): an error-check
// function that prints and exits, a verify helper, and a host timer.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>

inline void check_cuda(cudaError_t e, const char *what, const char *file, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what, cudaGetErrorString(e),
                 cudaGetErrorName(e));
    std::exit(2);
  }
}
#define checkCuda(call) check_cuda((call), #call, __FILE__, __LINE__)

template <class T> void expect_eq(const T &got, const T &want, const char *what) {
  if (!(got == want)) {
    std::fprintf(stderr, "FAILED %s\n", what);
    std::exit(1);
  }
}

struct HostTimer {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
        .count();
  }
};
