#pragma once
// THE list of MLP variants: one per GEMM family variant that can be a backend
// (gemm::Variant::backend()), named after it, with its knob and its place as
// the baseline; adding a backend to the GEMM family adds it here.
#include <vector>

#include "core/family.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {

using Entry = pb::Entry<Variant>;
const std::vector<Entry>& registry();

}  // namespace pb::mlp
