#include "kmeans/reference.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace pb::kmeans {

double finish_update(const double* sums, const std::int64_t* counts, double* centroids, std::int64_t k,
                     std::int64_t d) {
  double max_move2 = 0;
  for (std::int64_t c = 0; c < k; ++c) {
    if (counts[c] == 0) continue;  // an empty cluster keeps its centroid
    double move2 = 0;
    for (std::int64_t t = 0; t < d; ++t) {
      double v = sums[c * d + t] / double(counts[c]);
      double diff = v - centroids[c * d + t];
      move2 += diff * diff;
      centroids[c * d + t] = v;
    }
    max_move2 = std::max(max_move2, move2);
  }
  return std::sqrt(max_move2);
}

void lloyd(const Problem& p, const Inputs& in, int threads, Result& out) {
  const auto N = p.n, D = p.d, K = p.k;
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  out.assign.assign(N, -1);
  out.centroids = in.init;
  std::vector<double> sums(K * D), best_d(N);
  std::vector<std::int64_t> counts(K);
  const double* X = in.points.data();
  for (out.iterations = 0;;) {
    std::int64_t changed = 0;
    const double* C = out.centroids.data();
    int* A = out.assign.data();
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : changed)
    for (std::int64_t i = 0; i < N; ++i) {
      const int best = nearest(X + i * D, C, K, D, best_d[i]);
      if (A[i] != best) ++changed, A[i] = best;
    }
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(counts.begin(), counts.end(), 0);
    for (std::int64_t i = 0; i < N; ++i) {
      const int c = A[i];
      ++counts[c];
      for (std::int64_t t = 0; t < D; ++t) sums[c * D + t] += X[i * D + t];
    }
    double move = finish_update(sums.data(), counts.data(), out.centroids.data(), K, D);
    ++out.iterations;
    if (p.crit.stop(out.iterations, changed, move, N)) break;
  }
  out.inertia = 0;
  for (double v : best_d) out.inertia += v;
}

namespace {
// Seq: the reference itself, one thread, timed as the baseline of speedups.
class Seq final : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override { p_ = p, in_ = &in; }
  void reset() override { out_ = Result{}; }
  void run() override { lloyd(p_, *in_, 1, out_); }
  void result(Result& out) override { out = out_; }

 private:
  Problem p_;
  const Inputs* in_ = nullptr;
  Result out_;
};
}  // namespace

std::unique_ptr<Variant> make_seq() { return std::make_unique<Seq>(); }

}  // namespace pb::kmeans
