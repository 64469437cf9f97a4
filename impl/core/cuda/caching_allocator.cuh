#pragma once
// Thrust's temporary storage without cudaMalloc / cudaFree in a timed run:
// every block Thrust asks for is kept and a free one of sufficient size is
// handed back on the next request, so the untimed warm-up run fills it.
#include <cstddef>
#include <vector>

#include "core/cuda/check.cuh"

namespace pb {

class CachingAllocator {
 public:
  using value_type = char;
  CachingAllocator() = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator() {
    for (auto& b : blocks_) cudaFree(b.p);
  }
  char* allocate(std::ptrdiff_t n) {
    for (auto& b : blocks_)
      if (!b.used && b.bytes >= std::size_t(n)) {
        b.used = true;
        return b.p;
      }
    char* p = nullptr;
    PB_CUDA(cudaMalloc(&p, std::size_t(n)));
    blocks_.push_back({p, std::size_t(n), true});
    return p;
  }
  void deallocate(char* p, std::size_t) {
    for (auto& b : blocks_)
      if (b.p == p) b.used = false;
  }

 private:
  struct Block {
    char* p;
    std::size_t bytes;
    bool used;
  };
  std::vector<Block> blocks_;
};

}  // namespace pb
