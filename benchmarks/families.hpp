#pragma once
// The families the bench driver runs, in registration order, and their flag
// sections for parse_options() and usage(). A family is defined in its own
// folder (impl/<family>/family.cpp); the list is generated from the
// families impl/CMakeLists.txt adds (benchmarks/families.cpp.in).
#include <vector>

#include "core/family.hpp"

namespace pb {

const std::vector<Family>& families();
std::vector<FlagSection> family_flags();

}  // namespace pb
