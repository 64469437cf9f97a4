#pragma once
// THE list of SOR variants; benchmarks and tests iterate over it. Adding one
// touches its file, one line (and its factory's declaration) in registry.cpp
// and one source name in CMakeLists.txt.
#include <vector>

#include "core/family.hpp"
#include "sor/sor.hpp"

namespace pb::sor {

using Entry = pb::Entry<Variant>;

const std::vector<Entry>& registry();

}  // namespace pb::sor
