#pragma once
// Host-clean constructors of the CUDA k-means variants (defined in the .cu files).
#include <memory>

#include "kmeans/kmeans.hpp"

namespace pb::kmeans {
std::unique_ptr<Variant> make_cuda_naive(int block);
std::unique_ptr<Variant> make_cuda_transpose(int block);
std::unique_ptr<Variant> make_cuda_shared(int block);
std::unique_ptr<Variant> make_cuda_allgpu(int block);
std::unique_ptr<Variant> make_cuda_tiled(int block);
std::unique_ptr<Variant> make_cuda_gemm();
}  // namespace pb::kmeans
