#pragma once
// THE list of k-means variants; benchmarks and tests iterate over it. Adding
// one touches its file, one line (and its factory's declaration) in
// registry.cpp and one source name in CMakeLists.txt.
#include <string>
#include <vector>

#include "core/family.hpp"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

using Entry = pb::Entry<Variant>;

const std::vector<Entry>& registry();

#ifdef PARBENCH_WITH_NCCL
// The NCCL library's version ("2.27.7"), for the JSON context.
std::string nccl_version();
#endif

}  // namespace pb::kmeans
