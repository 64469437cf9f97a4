#pragma once
// THE list of GEMM variants. Benchmarks and tests both iterate over it, so a
// variant listed here is benchmarked and tested. Adding one touches its file,
// one line (naming that file, and its factory's declaration) in registry.cpp
// and one source name in CMakeLists.txt.
#include <string>
#include <type_traits>
#include <vector>

#include "core/family.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {

using pb::Knob;
using pb::Knobs;

// A tunable kernel's tile configurations (gemm/tuning.hpp) in the one type
// it is tuned for; nullptr: not tunable there. --gemm-tile sweeps them.
using TileList = const std::vector<std::string>& (*)();
struct Traits {
  TileList tiles = nullptr;
};
// The traits of a kernel tuned for type Tuned, in the registry of type T.
template <class T, class Tuned>
constexpr Traits tuned_in(TileList tiles) {
  return {std::is_same<T, Tuned>::value ? tiles : nullptr};
}

template <class T>
using Entry = pb::Entry<Variant<T>, Traits>;

template <class T>
const std::vector<Entry<T>>& registry();

// The variants of the TF32 and BF16 types (Precision): tensor-core kernels and
// their library peer. Float problems with prec TF32 or BF16; empty without CUDA.
const std::vector<Entry<float>>& tensor_registry();

#ifdef PARBENCH_WITH_CUDA
const std::vector<std::string>& pipelined_tiles();
const std::vector<std::string>& dmma_tiles();
#endif

}  // namespace pb::gemm
