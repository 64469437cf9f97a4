// OMP: red-black SOR with one parallel region for the whole run. Each thread
// keeps the same band of rows in every half-sweep (so its rows stay in its
// cache and NUMA node), with one barrier between half-sweeps, instead of the
// reference's fork and join per half-sweep.
#include <omp.h>

#include <memory>

#include "sor/cpu/host_field.hpp"

namespace pb::sor {
namespace {

class Omp final : public HostField {
 public:
  explicit Omp(int threads) : threads_(threads) {}
  void run() override {
    const std::int64_t m = c_.m;
    const Consts c = c_;
    double* u = u_.data();
    const int sweeps = sweeps_;
#pragma omp parallel num_threads(threads_)
    {
      const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads(), rows = m - 2;
      const std::int64_t lo = 1 + rows * t / nt, hi = 1 + rows * (t + 1) / nt;
      for (int s = 0; s < sweeps; ++s) {
        for (int colour = 0; colour < 2; ++colour) {
          for (std::int64_t i = lo; i < hi; ++i) relax_row(c, u, i, colour);
#pragma omp barrier
        }
      }
    }
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<Variant> make_omp(int threads) { return std::make_unique<Omp>(threads); }

}  // namespace pb::sor
