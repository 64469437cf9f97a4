// OMP: red-black SOR with one parallel region for the whole run. Each thread
// keeps the same band of rows in every half-sweep (so its rows stay in its
// cache and NUMA node), with one barrier between half-sweeps, instead of the
// reference's fork and join per half-sweep.
#include <omp.h>

#include <memory>

#include "sor/sor.hpp"

namespace pb::sor {
namespace {

class Omp final : public Variant {
 public:
  explicit Omp(int threads) : threads_(threads) {}
  void prepare(const Problem& p, const Inputs& in) override { c_ = consts(p), sweeps_ = p.sweeps, in_ = &in; }
  void reset() override { u_ = in_->u0; }
  void run() override {
    const std::int64_t m = c_.m, n = c_.n;
    const Consts c = c_;
    double* u = u_.data();
    const int sweeps = sweeps_;
#pragma omp parallel num_threads(threads_)
    {
      const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads(), rows = m - 2;
      const std::int64_t lo = 1 + rows * t / nt, hi = 1 + rows * (t + 1) / nt;
      for (int s = 0; s < sweeps; ++s) {
        for (int colour = 0; colour < 2; ++colour) {
          for (std::int64_t i = lo; i < hi; ++i) {
            double* row = u + i * n;
            for (std::int64_t j = 1 + ((i + 1 + colour) & 1); j < n - 1; j += 2)
              row[j] = relax(c, i, j, row[j], row[j + n], row[j - n], row[j + 1], row[j - 1]);
          }
#pragma omp barrier
        }
      }
    }
  }
  void result(std::vector<double>& u) override { u = u_; }

 private:
  int threads_;
  Consts c_{};
  int sweeps_ = 0;
  const Inputs* in_ = nullptr;
  std::vector<double> u_;
};

}  // namespace

std::unique_ptr<Variant> make_omp(int threads) { return std::make_unique<Omp>(threads); }

}  // namespace pb::sor
