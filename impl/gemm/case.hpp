#pragma once
// One problem's inputs and oracle, shared by every variant that runs it
// (pb::shared_case in core/family.hpp keeps the last one).
#include <memory>
#include <mutex>

#include "gemm/gemm.hpp"
#include "gemm/verify.hpp"

namespace pb::gemm {

template <class T>
class Case {
 public:
  // Problems with the same inputs and reference share a Case.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.op == b.op && a.m == b.m && a.n == b.n && a.k == b.k && a.prec == b.prec;
  }
  Case(const Problem& p, std::uint64_t base_seed)
      : problem(p), seed(base_seed), inputs(make_inputs<T>(p, base_seed)) {}
  const Problem problem;
  const std::uint64_t seed;
  const Inputs<T> inputs;
  // Built on first use: a variant that is unsupported never pays for it.
  const Oracle<T>& oracle() {
    std::call_once(once_, [&] { oracle_ = std::make_unique<Oracle<T>>(problem, inputs, seed); });
    return *oracle_;
  }

 private:
  std::once_flag once_;
  std::unique_ptr<Oracle<T>> oracle_;
};

}  // namespace pb::gemm
