#pragma once
// Host-clean constructors of the CUDA sorting variants (defined in the .cu files).
#include <memory>

#include "sort/sort.hpp"

namespace pb::sort {
std::unique_ptr<Variant> make_cuda_bitonic(int block);
std::unique_ptr<Variant> make_cuda_odd_even(int block);
std::unique_ptr<Variant> make_thrust();
std::unique_ptr<Variant> make_cub();
std::unique_ptr<Variant> make_cub_offset64();
}  // namespace pb::sort
