// OpenBLAS: cblas_?gemm in row-major mode; the transposes are flags, not
// copies. For D = A B^T + C, C is copied into D (inside the timed call: it is
// part of the operation) and accumulated with beta = 1.
#include <cblas.h>

#include <algorithm>

#include "core/openblas_threads.hpp"
#include "gemm/cpu/cpu_variant.hpp"

namespace pb::gemm {
namespace {

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
class OpenBlas final : public CpuVariant<T> {
  using CpuVariant<T>::p_, CpuVariant<T>::in_, CpuVariant<T>::out_;

 public:
  explicit OpenBlas(int threads) : threads_(threads) {}
  Support supports(const Problem& p) const override {
    const std::int64_t lim = 2147483647;  // CBLAS takes int dimensions
    if (p.m > lim || p.n > lim || p.k > lim) return Support::no("dimension exceeds CBLAS int");
    if (threads_ < 1) return Support::no("threads must be >= 1");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs<T>& in) override {
    CpuVariant<T>::prepare(p, in);
    blas_threads_.set(threads_);
  }
  void run() override { compute(p_, in_->a.data(), in_->b.data(), in_->c.data(), out_.data()); }
  bool computes_for_caller() const override { return true; }
  void bind() override { blas_threads_.set(threads_); }
  void compute(const Problem& p, const T* A, const T* B, const T* Cin, T* C) override {
    const int M = int(p.m), N = int(p.n), K = int(p.k);
    switch (p.op) {
      case Op::AB: gemm(CblasNoTrans, CblasNoTrans, M, N, K, A, K, B, N, T(0), C, N); break;
      case Op::AtB: gemm(CblasTrans, CblasNoTrans, M, N, K, A, M, B, N, T(0), C, N); break;
      case Op::ABtC:
        std::copy(Cin, Cin + p.c_elems(), C);
        gemm(CblasNoTrans, CblasTrans, M, N, K, A, K, B, K, T(1), C, N);
        break;
    }
  }

 private:
  int threads_;
  OpenBlasThreads blas_threads_;
};
}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_openblas(int threads) {
  return std::make_unique<OpenBlas<T>>(threads);
}
template std::unique_ptr<Variant<float>> make_openblas(int);
template std::unique_ptr<Variant<double>> make_openblas(int);

}  // namespace pb::gemm
