#pragma once
// The sequential k-means of seed 001 (point-major, update on the host). With
// threads > 1 only the assignment loop is split over points, which changes no
// arithmetic: each point's distances are computed the same way and the sums
// are still added in point order, so the result is bitwise that of 1 thread.
// The Seq variant runs it with 1 thread; the verifier with all cores.
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

// threads = 0: all cores.
void lloyd(const Problem& p, const Inputs& in, int threads, Result& out);

}  // namespace pb::kmeans
