#pragma once
// The sorting family's reference permutation.
#include <vector>

#include "sort/sort.hpp"

namespace pb::sort {

// Reference permutation: ref[j] is the input index of the key that belongs at
// position j, i.e. what std::stable_sort by key (ascending or descending, in
// the order of sort.hpp) leaves there, array by array. Computed as a sort of
// (ordered key, index) pairs, which is that unique stable result (a test pins
// it against std::stable_sort), in parallel over arrays or with the
// libstdc++ parallel sort for one large array.
std::vector<std::uint32_t> reference(const Problem& p, const Inputs& in);

}  // namespace pb::sort
