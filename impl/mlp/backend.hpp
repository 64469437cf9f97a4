#pragma once
// A GEMM family variant as the MLP step's backend, by name: made with an
// instance's knobs, and asked whether it takes every product of a step.
#include <memory>
#include <string>

#include "core/knobs.hpp"
#include "core/status.hpp"
#include "gemm/gemm.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {

// The GEMM variant `name` in precision T; std::logic_error for an unknown name.
template <class T>
std::unique_ptr<gemm::Variant<T>> make_gemm(const std::string& name, const Knobs& k);

// Whether GEMM variant `name` (in p's precision) takes the three products of
// every layer of p's step: the forward A B, the weight gradient A^T B and the
// delta propagation A B^T + C. The first refusal, or yes.
Support gemm_supports(const Problem& p, const std::string& name, const Knobs& k);

}  // namespace pb::mlp
