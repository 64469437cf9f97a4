#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "ceiling/ceiling.hpp"
#include "fixtures/fixtures.hpp"

namespace pb::ceiling {
namespace {

class Triad final : public Job {
 public:
  Triad(std::int64_t n, int threads, std::uint64_t seed) : n_(n), threads_(threads), seed_(seed) {}
  Backend backend() const override { return Backend::Cpu; }
  Support supports() override { return threads_ >= 1 ? Support::yes() : Support::no("threads must be >= 1"); }
  void prepare() override {
    a_.resize(n_), b_.resize(n_), c_.resize(n_);
    // Filled by the same static schedule the triad uses: each thread's pages
    // are first touched (placed) by that thread.
    fixtures::fill_uniform(b_.data(), b_.size(), fixtures::seed_for(seed_, "ceiling.triad.b", {n_}));
    fixtures::fill_uniform(c_.data(), c_.size(), fixtures::seed_for(seed_, "ceiling.triad.c", {n_}));
    const double nan = std::numeric_limits<double>::quiet_NaN();
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) a_[i] = nan;
  }
  void run() override {
    double* a = a_.data();
    const double *b = b_.data(), *c = c_.data();
    const double s = kScale;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t i = 0; i < n_; ++i) a[i] = b[i] + s * c[i];
  }
  Check check() override {
    for (std::int64_t i = 0; i < n_; ++i)
      if (!(a_[i] == b_[i] + kScale * c_[i])) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "a[%lld] = %.17g, expected %.17g", (long long)i, a_[i],
                      b_[i] + kScale * c_[i]);
        return {false, buf, "full"};
      }
    return {true, "", "full"};
  }
  Work work() const override {
    Work w;
    w.bytes = 24.0 * double(n_);
    return w;
  }

 private:
  static constexpr double kScale = 3.0;
  std::int64_t n_;
  int threads_;
  std::uint64_t seed_;
  std::vector<double> a_, b_, c_;
};

}  // namespace

std::unique_ptr<Job> make_host_triad(std::int64_t n, int threads, std::uint64_t seed) {
  return std::make_unique<Triad>(n, threads, seed);
}

}  // namespace pb::ceiling
