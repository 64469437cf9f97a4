#pragma once
// THE list of scan variants; benchmarks and tests iterate over it.
#include <vector>

#include "core/family.hpp"
#include "scan/scan.hpp"

namespace pb::scan {

using Entry = pb::Entry<Variant>;

const std::vector<Entry>& registry();

}  // namespace pb::scan
