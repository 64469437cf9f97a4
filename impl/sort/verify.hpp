#pragma once
// The sorting family's verifier.
#include <vector>

#include "core/status.hpp"
#include "sort/sort.hpp"

namespace pb::sort {

// Keys in the order of the reference (sorted, each array the input's multiset
// up to the sign of zero), every value a distinct index of its own array and
// carrying its key's exact bits, zero signs preserved per array; with
// `stable`, values equal to the reference's.
Check verify(const Problem& p, const Inputs& in, const std::vector<std::uint32_t>& ref, const Output& out,
             bool stable);

}  // namespace pb::sort
