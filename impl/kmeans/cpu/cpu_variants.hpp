#pragma once
#include <memory>

#include "kmeans/kmeans.hpp"

namespace pb::kmeans {
std::unique_ptr<Variant> make_omp_atomic(int threads);
std::unique_ptr<Variant> make_omp_reduce(int threads);
std::unique_ptr<Variant> make_blas(int threads);

// Call from inside a parallel region of nt threads after every thread filled
// its slice t of S (nt x K x D) and Cnt (nt x K): adds the slices into slice 0
// in thread order, work split over the team. Ends with the team's barrier.
void merge_partials(double* S, std::int64_t* Cnt, std::int64_t k, std::int64_t d, int nt);
}  // namespace pb::kmeans
