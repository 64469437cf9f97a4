#include "sor/reference.hpp"

#include <omp.h>

#include <cmath>
#include <memory>

#include "sor/cpu/host_field.hpp"
#include "sor/registry.hpp"

namespace pb::sor {

void sweep(const Consts& c, double* u, int threads) {
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  for (int colour = 0; colour < 2; ++colour) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t i = 1; i < c.m - 1; ++i) relax_row(c, u, i, colour);
  }
}

double residual(const Problem& p, const std::vector<double>& u, int threads) {
  const Consts c = consts(p);
  const std::int64_t m = p.m, n = p.n;
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  double sum = 0;
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : sum)
  for (std::int64_t i = 1; i < m - 1; ++i) {
    const double* row = u.data() + i * n;
    for (std::int64_t j = 1; j < n - 1; ++j) {
      const double e = correction(c, i, j, row[j], row[j + n], row[j - n], row[j + 1], row[j - 1]);
      sum += e * e;
    }
  }
  return std::sqrt(sum / double(p.interior()));
}

int solve(const Problem& p, std::vector<double>& u, int threads, double tol, int every,
          std::vector<double>* trace) {
  const Consts c = consts(p);
  if (every < 1) every = 1;
  int done = 0;
  while (done < p.sweeps) {
    sweep(c, u.data(), threads);
    ++done;
    if ((tol > 0 || trace) && (done % every == 0 || done == p.sweeps)) {
      const double r = residual(p, u, threads);
      if (trace) trace->push_back(r);
      if (tol > 0 && r <= tol) break;
    }
  }
  return done;
}

namespace {
// Seq: the reference on one thread, the baseline of speedups.
class Seq final : public HostField {
 public:
  void run() override {
    for (int s = 0; s < sweeps_; ++s) sweep(c_, u_.data(), 1);
  }
};
}  // namespace

std::unique_ptr<Variant> make_seq() { return std::make_unique<Seq>(); }

}  // namespace pb::sor
