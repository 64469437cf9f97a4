#pragma once
#include <memory>

#include "kmeans/kmeans.hpp"

namespace pb::kmeans {
std::unique_ptr<Variant> make_omp_atomic(int threads);
std::unique_ptr<Variant> make_omp_reduce(int threads);
std::unique_ptr<Variant> make_blas(int threads);
}  // namespace pb::kmeans
