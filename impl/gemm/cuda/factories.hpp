#pragma once
// Host-clean constructors of the CUDA GEMM variants (defined in the .cu files).
#include <memory>

#include "gemm/gemm.hpp"

namespace pb::gemm {
template <class T>
std::unique_ptr<Variant<T>> make_cuda_naive(int block);
template <class T>
std::unique_ptr<Variant<T>> make_cuda_tiled(int block);
template <class T>
std::unique_ptr<Variant<T>> make_cublas();
template <class T>
std::unique_ptr<Variant<T>> make_cuda_regblock();
}  // namespace pb::gemm
