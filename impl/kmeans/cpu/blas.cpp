// BLAS: the distance step in GEMM form, as scikit-learn computes it:
// |x - c|^2 = |x|^2 - 2 x.c + |c|^2. The points are cut into chunks of
// kChunk rows; `threads` OpenMP threads take chunks, and each computes its
// chunk's x.c products with a single-threaded cblas_dgemm into its own buffer
// and takes the argmin while the products are still in cache. OpenBLAS runs
// with one thread: its own pthreads next to the OpenMP team would
// oversubscribe the cores (docs/perf/kmeans-cpu.md).
// |x|^2 is computed once in prepare() (untimed: it depends on the points
// only), |c|^2 once per iteration. The update is fused into the chunk loop
// (per-thread partial sums like OMP.Reduce), as scikit-learn does, so the
// points are read once an iteration instead of twice. Rounding differs from the direct
// form (cancellation in |x|^2 - 2x.c), so exact ties may resolve differently;
// on real data the assignment matches the reference.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "core/openblas_threads.hpp"
#include "kmeans/cpu/cpu_variants.hpp"

namespace pb::kmeans {
namespace {

// Rows per dgemm: 256 x K doubles of products stay in L2 for the argmin.
constexpr std::int64_t kChunk = 256;

class Blas final : public CpuKMeans {
 public:
  explicit Blas(int threads) : threads_(threads) {}
  Support supports(const Problem& p) const override {
    if (threads_ < 1) return Support::no("threads must be >= 1");
    if (p.d > 2147483647 || p.k > 2147483647) return Support::no("dimension exceeds CBLAS int");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs& in) override {
    CpuKMeans::prepare(p, in);
    blas_threads_.set(1);  // OpenMP splits the chunks; each dgemm runs on one thread
    xx_.resize(p.n);
    for (std::int64_t i = 0; i < p.n; ++i) {
      const double* x = in.points.data() + i * p.d;
      double s = 0;
      for (std::int64_t t = 0; t < p.d; ++t) s += x[t] * x[t];
      xx_[i] = s;
    }
    g_.resize(std::size_t(threads_) * kChunk * p.k);
    cc_.resize(p.k);
    sums_.assign(threads_ * p.k * p.d, 0.0);
    counts_.assign(threads_ * p.k, 0);
  }
  void run() override {
    const auto N = p_.n, D = p_.d, K = p_.k;
    const double* X = in_->points.data();
    double* C = out_.centroids.data();
    int* A = out_.assign.data();
    for (;;) {
      for (std::int64_t c = 0; c < K; ++c) {
        double s = 0;
        for (std::int64_t t = 0; t < D; ++t) s += C[c * D + t] * C[c * D + t];
        cc_[c] = s;
      }
      std::int64_t changed = 0;
      const std::int64_t chunks = (N + kChunk - 1) / kChunk;
      double* S = sums_.data();
      std::int64_t* Cnt = counts_.data();
#pragma omp parallel num_threads(threads_)
      {
        const int me = omp_get_thread_num(), nt = omp_get_num_threads();
        double* gbuf = g_.data() + std::size_t(me) * kChunk * K;
        double* my_s = S + me * K * D;
        std::int64_t* my_n = Cnt + me * K;
        std::fill_n(my_s, K * D, 0.0);
        std::fill_n(my_n, K, 0);
#pragma omp for schedule(static) reduction(+ : changed)
        for (std::int64_t ch = 0; ch < chunks; ++ch) {
          const std::int64_t i0 = ch * kChunk, rows = std::min(kChunk, N - i0);
          const double* Xc = X + i0 * D;
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(rows), int(K), int(D), 1.0, Xc, int(D), C,
                      int(D), 0.0, gbuf, int(K));
          for (std::int64_t r = 0; r < rows; ++r) {
            const double* g = gbuf + r * K;
            const double xx = xx_[i0 + r];
            int best = 0;
            double bd = xx - 2 * g[0] + cc_[0];
            for (std::int64_t c = 1; c < K; ++c) {
              double dc = xx - 2 * g[c] + cc_[c];
              if (dc < bd) bd = dc, best = int(c);
            }
            best_d_[i0 + r] = bd;
            if (A[i0 + r] != best) ++changed, A[i0 + r] = best;
            // Update fused into the chunk loop: the chunk's rows are still in
            // cache from the dgemm, so the points are read once an iteration.
            ++my_n[best];
            const double* x = Xc + r * D;
            double* s = my_s + best * D;
            for (std::int64_t t = 0; t < D; ++t) s[t] += x[t];
          }
        }  // implicit barrier: every thread's partial sums are complete
        merge_partials(S, Cnt, K, D, nt);
      }
      double move = finish_update(S, Cnt, C, K, D);
      ++out_.iterations;
      if (p_.crit.stop(out_.iterations, changed, move, N)) break;
    }
  }

 private:
  int threads_;
  OpenBlasThreads blas_threads_;
  std::vector<double> xx_, cc_, g_, sums_;
  std::vector<std::int64_t> counts_;
};

}  // namespace

std::unique_ptr<Variant> make_blas(int threads) { return std::make_unique<Blas>(threads); }

}  // namespace pb::kmeans
