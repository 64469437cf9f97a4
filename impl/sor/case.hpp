#pragma once
// One problem's inputs and reference field, shared by every variant that runs
// it (pb::shared_case in core/family.hpp keeps the last one).
#include <mutex>

#include "sor/reference.hpp"

namespace pb::sor {

class Case {
 public:
  // Problems with the same inputs and reference share a Case.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.m == b.m && a.n == b.n && a.sweeps == b.sweeps && a.omega == b.omega && a.field == b.field &&
           a.h1 == b.h1 && a.h2 == b.h2;
  }
  Case(const Problem& p, std::uint64_t base_seed)
      : problem(p), seed(base_seed), inputs(make_inputs(p, base_seed)) {}
  const Problem problem;
  const std::uint64_t seed;
  const Inputs inputs;
  // The field after p.sweeps sweeps, computed on first use with every core
  // (bitwise the one-thread result, reference.hpp).
  const std::vector<double>& reference() {
    std::call_once(once_, [&] {
      ref_ = inputs.u0;
      solve(problem, ref_, 0);
    });
    return ref_;
  }

 private:
  std::once_flag once_;
  std::vector<double> ref_;
};

}  // namespace pb::sor
