#pragma once
// One problem's inputs and reference result, shared by every variant that
// runs it (benchmarks are registered problem by problem: a one-entry cache).
#include <memory>
#include <mutex>

#include "kmeans/reference.hpp"

namespace pb::kmeans {

class Case {
 public:
  Case(const Problem& p, std::uint64_t base_seed)
      : problem(p), seed(base_seed), inputs(make_inputs(p, base_seed)) {}
  const Problem problem;
  const std::uint64_t seed;
  const Inputs inputs;
  // The reference result, computed on first use with every core (bitwise the
  // sequential result, see reference.hpp).
  const Result& reference() {
    std::call_once(once_, [&] { lloyd(problem, inputs, 0, ref_); });
    return ref_;
  }

 private:
  std::once_flag once_;
  Result ref_;
};

std::shared_ptr<Case> shared_case(const Problem& p, std::uint64_t base_seed);

}  // namespace pb::kmeans
