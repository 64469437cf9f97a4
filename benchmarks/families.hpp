#pragma once
// One registration function per family. Each throws UsageError on an axis
// value it cannot accept, before anything runs.
#include "core/options.hpp"

namespace pb {
void register_gemm(const Options& opt);
void register_kmeans(const Options& opt);
}  // namespace pb
