#pragma once
// One problem's inputs and reference result, shared by every variant that
// runs it (pb::shared_case in core/family.hpp keeps the last one).
#include <memory>
#include <mutex>

#include "kmeans/reference.hpp"

namespace pb::kmeans {

class Case {
 public:
  // Problems with the same inputs and reference share a Case.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.n == b.n && a.d == b.d && a.k == b.k && a.dist == b.dist && a.crit.fixed == b.crit.fixed &&
           a.crit.loops == b.crit.loops && a.crit.max_iter == b.crit.max_iter &&
           a.crit.min_changes == b.crit.min_changes && a.crit.precision == b.crit.precision;
  }
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

}  // namespace pb::kmeans
