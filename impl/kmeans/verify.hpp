#pragma once
// The k-means verifier.
#include "core/status.hpp"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

// Same assignment and iteration count as the reference, and centroids /
// inertia within a relative 1e-9 (different summation orders).
Check compare(const Problem& p, const Result& ref, const Result& got);

}  // namespace pb::kmeans
