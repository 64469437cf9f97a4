// OMP: the outer (row) loop split across threads with a static schedule, as
// in seed 003. Relative to Naive the loops run i-k-j (A^T B and A B stream
// rows of B; A B^T keeps its contiguous dot products), so the inner loop is
// unit-stride and vectorises; threads each own whole rows of the output.
#include <omp.h>

#include "gemm/cpu/cpu_variant.hpp"

namespace pb::gemm {
namespace {
// The loops, on values and pointers only (what the timed run() always had as
// locals): run() and compute() share them without changing the timed code.
template <class T>
void omp_gemm(Op op, std::int64_t M, std::int64_t N, std::int64_t K, const T* A, const T* B, const T* Cin,
              T* C, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < M; ++i) {
    T* crow = C + i * N;
    if (op == Op::ABtC) {
      const T* arow = A + i * K;
      for (std::int64_t j = 0; j < N; ++j) {
        const T* brow = B + j * K;
        T acc = 0;
#pragma omp simd reduction(+ : acc)
        for (std::int64_t k = 0; k < K; ++k) acc += arow[k] * brow[k];
        crow[j] = acc + Cin[i * N + j];
      }
      continue;
    }
    for (std::int64_t j = 0; j < N; ++j) crow[j] = 0;
    for (std::int64_t k = 0; k < K; ++k) {
      const T a = op == Op::AtB ? A[k * M + i] : A[i * K + k];
      const T* brow = B + k * N;
#pragma omp simd
      for (std::int64_t j = 0; j < N; ++j) crow[j] += a * brow[j];
    }
  }
}

template <class T>
class Omp final : public CpuVariant<T> {
  using CpuVariant<T>::p_, CpuVariant<T>::in_, CpuVariant<T>::out_;

 public:
  explicit Omp(int threads) : threads_(threads) {}
  Support supports(const Problem&) const override {
    if (threads_ < 1) return Support::no("threads must be >= 1");
    return Support::yes();
  }
  void run() override {
    omp_gemm(p_.op, p_.m, p_.n, p_.k, in_->a.data(), in_->b.data(), in_->c.data(), out_.data(), threads_);
  }
  bool computes_for_caller() const override { return true; }
  void compute(const Problem& p, const T* a, const T* b, const T* c, T* out) override {
    omp_gemm(p.op, p.m, p.n, p.k, a, b, c, out, threads_);
  }

 private:
  int threads_;
};

}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_cpu_omp(int threads) {
  return std::make_unique<Omp<T>>(threads);
}
template std::unique_ptr<Variant<float>> make_cpu_omp(int);
template std::unique_ptr<Variant<double>> make_cpu_omp(int);

}  // namespace pb::gemm
