// OMP.Atomic and OMP.Reduce: seed 001's OpenMP k-means. One parallel region
// spans the whole loop (threads are not re-created each iteration); points are
// split statically; the assignment and the accumulation of sums are fused in
// one pass over the points. The two variants differ only in how sums and
// counts meet:
//  - Atomic: every thread adds into the shared K x D sums with atomic adds
//    (seed 001's choice: no extra memory);
//  - Reduce: every thread adds into its own K x D partial sums, merged after
//    the pass (T x K x D doubles of memory, no contention).
// Distances use the reference's dist2(), so assignments match it bitwise.
#include <omp.h>

#include <algorithm>

#include "kmeans/cpu/cpu_variants.hpp"

namespace pb::kmeans {
namespace {

// Where each thread adds its points into the sums (the two variants).
enum class Sums { Atomic, PerThread };

template <Sums sums>
class Omp final : public CpuKMeans {
  static constexpr bool atomic = sums == Sums::Atomic;

 public:
  explicit Omp(int threads) : threads_(threads) {}
  Support supports(const Problem&) const override {
    return threads_ >= 1 ? Support::yes() : Support::no("threads must be >= 1");
  }
  void prepare(const Problem& p, const Inputs& in) override {
    CpuKMeans::prepare(p, in);
    sums_.assign((atomic ? 1 : threads_) * p.k * p.d, 0.0);
    counts_.assign((atomic ? 1 : threads_) * p.k, 0);
  }
  void run() override {
    const auto N = p_.n, D = p_.d, K = p_.k;
    const double* X = in_->points.data();
    double* C = out_.centroids.data();
    int* A = out_.assign.data();
    double* S = sums_.data();
    std::int64_t* Cnt = counts_.data();
    std::int64_t changed = 0;
    bool stop = false;
    int iterations = 0;
#pragma omp parallel num_threads(threads_)
    {
      const int me = omp_get_thread_num(), nt = omp_get_num_threads();
      double* my_s = atomic ? S : S + me * K * D;
      std::int64_t* my_n = atomic ? Cnt : Cnt + me * K;
      while (!stop) {
        if (atomic) {
#pragma omp single
          {
            std::fill_n(S, K * D, 0.0);
            std::fill_n(Cnt, K, 0);
            changed = 0;
          }
        } else {
          std::fill_n(my_s, K * D, 0.0);
          std::fill_n(my_n, K, 0);
#pragma omp single
          changed = 0;
        }
#pragma omp for schedule(static) reduction(+ : changed)
        for (std::int64_t i = 0; i < N; ++i) {
          const double* x = X + i * D;
          const int best = nearest(x, C, K, D, best_d_[i]);
          if (A[i] != best) ++changed, A[i] = best;
          if (atomic) {
#pragma omp atomic
            ++my_n[best];
            for (std::int64_t t = 0; t < D; ++t) {
#pragma omp atomic
              my_s[best * D + t] += x[t];
            }
          } else {
            ++my_n[best];
            for (std::int64_t t = 0; t < D; ++t) my_s[best * D + t] += x[t];
          }
        }  // implicit barrier: all partial sums complete
        if (!atomic) {
          merge_partials(S, Cnt, K, D, nt);
        }
#pragma omp single
        {
          double move = finish_update(S, Cnt, C, K, D);
          ++iterations;
          stop = p_.crit.stop(iterations, changed, move, N);
        }  // implicit barrier: every thread sees `stop` and the new centroids
      }
    }
    out_.iterations = iterations;
  }

 private:
  int threads_;
  std::vector<double> sums_;
  std::vector<std::int64_t> counts_;
};

}  // namespace

void merge_partials(double* S, std::int64_t* Cnt, std::int64_t k, std::int64_t d, int nt) {
#pragma omp for schedule(static)
  for (std::int64_t j = 0; j < k * d; ++j)
    for (int t = 1; t < nt; ++t) S[j] += S[t * k * d + j];
#pragma omp for schedule(static)
  for (std::int64_t c = 0; c < k; ++c)
    for (int t = 1; t < nt; ++t) Cnt[c] += Cnt[t * k + c];
}

std::unique_ptr<Variant> make_omp_atomic(int threads) { return std::make_unique<Omp<Sums::Atomic>>(threads); }
std::unique_ptr<Variant> make_omp_reduce(int threads) {
  return std::make_unique<Omp<Sums::PerThread>>(threads);
}

}  // namespace pb::kmeans
