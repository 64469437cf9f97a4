#pragma once
// One problem's inputs and reference step, shared by every variant that runs
// it (pb::shared_case in core/family.hpp keeps the last one).
#include <mutex>

#include "mlp/reference.hpp"

namespace pb::mlp {

class Case {
 public:
  // The reference is double whatever the backend's precision.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.widths == b.widths && a.batch == b.batch && a.act == b.act && a.lr == b.lr && a.mnist == b.mnist;
  }
  Case(const Problem& p, std::uint64_t base_seed)
      : problem(p), seed(base_seed), inputs(make_inputs(p, base_seed)) {}
  const Problem problem;
  const std::uint64_t seed;
  const Inputs inputs;
  // The weights after one reference step from the start, computed on first use.
  const Params<double>& reference() {
    std::call_once(once_, [&] {
      ref_ = inputs.start;
      loss_ = step(problem, ref_, inputs.data, 0);
    });
    return ref_;
  }
  double reference_loss() {
    reference();
    return loss_;
  }

 private:
  std::once_flag once_;
  Params<double> ref_;
  double loss_ = 0;
};

}  // namespace pb::mlp
