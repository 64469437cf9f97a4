#pragma once
// OpenBLAS's thread count is process-wide (and, in an OpenMP build of
// OpenBLAS, also OpenMP's default team size). A variant that sets it holds
// one of these: the count it replaced comes back when the variant is freed,
// so references, fixtures and later variants never inherit it.
#include <cblas.h>

namespace pb {

class OpenBlasThreads {
 public:
  OpenBlasThreads() = default;
  OpenBlasThreads(const OpenBlasThreads&) = delete;
  OpenBlasThreads& operator=(const OpenBlasThreads&) = delete;
  ~OpenBlasThreads() {
    if (saved_ > 0) openblas_set_num_threads(saved_);
  }
  void set(int n) {
    if (saved_ == 0) saved_ = openblas_get_num_threads();
    openblas_set_num_threads(n);
  }

 private:
  int saved_ = 0;
};

}  // namespace pb
