#pragma once
// A backend's step against the reference step from the same weights.
#include "core/status.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {

// Every weight and bias after the step within the bound of its tensor (one
// layer's weights, or its biases): the GEMMs' rounding of order K eps_T per
// element (K the longest sum: the widest layer or the batch) on that tensor's
// largest reference update, times a margin of 8, plus T's rounding of the
// values themselves (2 eps_T max|w|). A wrong operand or transposition is off
// by the size of the update.
Check verify(const Problem& p, const Params<double>& start, const Params<double>& reference,
             const Params<double>& got);

}  // namespace pb::mlp
