// Naive: the textbook triple loop, one thread, accumulating in T. The
// baseline every speedup is measured from (seed 004's sequential code); the
// oracle that checks results is gemm/reference.cpp (its Oracle works in double).
#include "gemm/cpu/cpu_variant.hpp"

namespace pb::gemm {
namespace {
// The loops, on values and pointers only (what the timed run() always had as
// locals): run() and compute() share them without changing the timed code.
template <class T>
void naive_gemm(Op op, std::int64_t M, std::int64_t N, std::int64_t K, const T* A, const T* B, const T* Cin,
                T* C) {
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      T acc = 0;
      switch (op) {
        case Op::AB:
          for (std::int64_t k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
          break;
        case Op::AtB:
          for (std::int64_t k = 0; k < K; ++k) acc += A[k * M + i] * B[k * N + j];
          break;
        case Op::ABtC:
          for (std::int64_t k = 0; k < K; ++k) acc += A[i * K + k] * B[j * K + k];
          acc += Cin[i * N + j];
          break;
      }
      C[i * N + j] = acc;
    }
}

template <class T>
class Naive final : public CpuVariant<T> {
  using CpuVariant<T>::p_, CpuVariant<T>::in_, CpuVariant<T>::out_;

 public:
  void run() override {
    naive_gemm(p_.op, p_.m, p_.n, p_.k, in_->a.data(), in_->b.data(), in_->c.data(), out_.data());
  }
  bool computes_for_caller() const override { return true; }
  void compute(const Problem& p, const T* a, const T* b, const T* c, T* out) override {
    naive_gemm(p.op, p.m, p.n, p.k, a, b, c, out);
  }
};

}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_cpu_naive() {
  return std::make_unique<Naive<T>>();
}
template std::unique_ptr<Variant<float>> make_cpu_naive();
template std::unique_ptr<Variant<double>> make_cpu_naive();

}  // namespace pb::gemm
