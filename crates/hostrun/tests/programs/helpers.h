// A helper header as projects write them: an error-check macro that prints and exits, and a
// class owning device memory.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(call)                                                              \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));   \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

template <class T> class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t n) : n_(n) { CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T))); }
  ~DeviceBuffer() { cudaFree(p_); }
  T *get() const { return p_; }
  size_t size() const { return n_; }
  void download(T *h) const { CUDA_CHECK(cudaMemcpy(h, p_, n_ * sizeof(T), cudaMemcpyDeviceToHost)); }
  void upload(const T *h) { CUDA_CHECK(cudaMemcpy(p_, h, n_ * sizeof(T), cudaMemcpyHostToDevice)); }

private:
  T *p_ = nullptr;
  size_t n_;
};
