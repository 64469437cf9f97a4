#pragma once
// The SOR verifier.
#include <vector>

#include "core/status.hpp"
#include "sor/sor.hpp"

namespace pb::sor {

// The boundary bitwise as given, and every interior point within 1e-10 of
// the field's scale (max |reference|) of the reference: the same updates in
// the same red-black order, differing only where a compiler fused a
// multiply-add (a relative 1e-16 per update, which SOR's contraction keeps
// from growing). A missed halo exchange or a point updated with the wrong
// colour's old value is off by far more after one sweep.
Check verify(const Problem& p, const std::vector<double>& u0, const std::vector<double>& ref,
             const std::vector<double>& got);

}  // namespace pb::sor
