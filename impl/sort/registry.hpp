#pragma once
// THE list of sorting variants; benchmarks and tests iterate over it. Adding
// one touches its file, one line (and its factory's declaration) in
// registry.cpp and one source name in CMakeLists.txt.
#include <vector>

#include "core/family.hpp"
#include "sort/sort.hpp"

namespace pb::sort {

struct Traits {
  bool batched = false;  // sorts many arrays at once (length < total); the others sort one
};

using Entry = pb::Entry<Variant, Traits>;

const std::vector<Entry>& registry();

}  // namespace pb::sort
