#pragma once
// One problem's inputs and reference permutation, shared by every variant
// that runs it (pb::shared_case in core/family.hpp keeps the last one).
#include <mutex>

#include "sort/reference.hpp"

namespace pb::sort {

class Case {
 public:
  // Problems with the same inputs and reference share a Case: everything but
  // the payload (the reference permutation serves keys-only and pairs alike).
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.n == b.n && a.length == b.length && a.key == b.key && a.order == b.order && a.dist == b.dist;
  }
  Case(const Problem& p, std::uint64_t base_seed)
      : problem(p), seed(base_seed), inputs(make_inputs(p, base_seed)) {}
  const Problem problem;
  const std::uint64_t seed;
  const Inputs inputs;
  const std::vector<std::uint32_t>& ref() {
    std::call_once(once_, [&] { ref_ = reference(problem, inputs); });
    return ref_;
  }

 private:
  std::once_flag once_;
  std::vector<std::uint32_t> ref_;
};

}  // namespace pb::sort
