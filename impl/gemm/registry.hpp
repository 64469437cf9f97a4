#pragma once
// THE list of GEMM variants. Benchmarks and tests both iterate over it, so a
// variant listed here is benchmarked and tested. Adding one touches its file,
// one line (naming that file, and its factory's declaration) in registry.cpp
// and one source name in CMakeLists.txt.
#include <vector>

#include "core/family.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {

using pb::Knob;
using pb::Knobs;

template <class T>
using Entry = pb::Entry<Variant<T>>;

template <class T>
const std::vector<Entry<T>>& registry();

// The variants of the TF32 and BF16 types (Precision): tensor-core kernels and
// their library peer. Float problems with prec TF32 or BF16; empty without CUDA.
const std::vector<Entry<float>>& tensor_registry();

}  // namespace pb::gemm
