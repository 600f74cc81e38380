// A move-only class owning device memory (constructor allocates, destructor frees), a method
// that launches, and host code using it through references. The kernel writes v[i] = i * i
// (one writer per element): one outcome; the host's sum 0 + 1 + 4 + 9 + 16 + 25 = 55 holds.
// Expected: passes, 1 process.
#include <cassert>
#include <utility>
#include <vector>

__global__ void squares(int *v, int n) {
  int i = threadIdx.x;
  if (i < n) v[i] = i * i;
}

class Buffer {
public:
  explicit Buffer(int n) : n_(n) { cudaMalloc(&p_, n * sizeof(int)); }
  Buffer(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
  ~Buffer() {
    if (p_) cudaFree(p_);
  }
  void fill_squares() { squares<<<1, n_>>>(p_, n_); }
  std::vector<int> download() const {
    std::vector<int> h(n_);
    cudaMemcpy(h.data(), p_, n_ * sizeof(int), cudaMemcpyDeviceToHost);
    return h;
  }

private:
  int *p_ = nullptr;
  int n_;
};

static int sum(const std::vector<int> &v) {
  int s = 0;
  for (int x : v) s += x;
  return s;
}

int main() {
  Buffer b(6);
  Buffer moved = std::move(b);
  moved.fill_squares();
  assert(sum(moved.download()) == 55);
  return 0;
}
