#include "mlp/verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace pb::mlp {

Check verify(const Problem& p, const Params<double>& start, const Params<double>& reference,
             const Params<double>& got) {
  if (got.w.size() != reference.w.size() || got.b.size() != reference.b.size())
    return {false, "wrong number of layers: " + std::to_string(got.w.size()), "step"};
  const double eps =
      p.f64 ? std::numeric_limits<double>::epsilon() : double(std::numeric_limits<float>::epsilon());
  std::int64_t k = p.batch;
  for (auto w : p.widths) k = std::max(k, w);
  // Per tensor (each layer's weights, each layer's biases): a hidden layer's
  // updates can be a small fraction of the output layer's, and one bound for
  // all would let a wrong hidden-layer gradient through.
  for (int bias = 0; bias < 2; ++bias)
    for (std::size_t l = 0; l < reference.w.size(); ++l) {
      const auto& want = bias ? reference.b[l] : reference.w[l];
      const auto& from = bias ? start.b[l] : start.w[l];
      const auto& have = bias ? got.b[l] : got.w[l];
      if (have.size() != want.size())
        return {false, "layer " + std::to_string(l + 1) + " has the wrong shape", "step"};
      double update = 0, scale = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        update = std::max(update, std::fabs(want[i] - from[i]));
        scale = std::max(scale, std::fabs(want[i]));
      }
      const double tol = 8 * double(k) * eps * update + 2 * eps * scale;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double err = std::fabs(have[i] - want[i]);
        if (!(err <= tol)) {
          char buf[200];
          std::snprintf(buf, sizeof buf, "layer %zu %s %zu: %.9g, reference %.9g (off by %.3g, bound %.3g)",
                        l + 1, bias ? "bias" : "weight", i, have[i], want[i], err, tol);
          return {false, buf, "step"};
        }
      }
    }
  return {true, "", "step"};
}

}  // namespace pb::mlp
