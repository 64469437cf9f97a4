#pragma once
// The double-precision reference training step, written as plain loops in the
// order mlp.hpp gives, against which every backend's step is checked.
#include <cstdint>
#include <vector>

#include "mlp/mlp.hpp"

namespace pb::mlp {

struct Gradients {
  std::vector<std::vector<double>> w, b;  // same shapes as Params
};

// The batch's mean cross-entropy loss under `params` (rows x, labels y: the
// first p.batch rows of the data starting at `first`).
double loss(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first);

// Forward and backward: the loss and the gradients of the batch.
double gradients(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                 Gradients& g);

// One SGD step on the batch; returns the loss before the update.
double step(const Problem& p, Params<double>& params, const Data& d, std::int64_t first);

// Fraction of the n samples from `first` whose largest output is their label.
double accuracy(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                std::int64_t n);

}  // namespace pb::mlp
