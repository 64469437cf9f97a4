#pragma once
// One problem's inputs and oracle, shared by every variant that runs it.
// Benchmarks are registered problem by problem, so a one-entry cache means
// inputs are generated and the reference computed once per problem.
#include <memory>
#include <mutex>

#include "gemm/gemm.hpp"
#include "gemm/verify.hpp"

namespace pb::gemm {

template <class T>
class Case {
 public:
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

// The case of (problem, seed), reusing the previous one when it matches.
template <class T>
std::shared_ptr<Case<T>> shared_case(const Problem& p, std::uint64_t base_seed);

}  // namespace pb::gemm
