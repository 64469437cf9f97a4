#pragma once
// THE list of GEMM variants. Benchmarks and tests both iterate over it, so a
// variant listed here is benchmarked and tested; adding one touches its file,
// one line in registry.cpp and one source name in CMakeLists.txt.
#include <functional>
#include <memory>
#include <vector>

#include "core/job.hpp"
#include "core/knobs.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {

using pb::Knob;
using pb::Knobs;

// The variant speedup is measured from (the JSON marks it "baseline").
inline constexpr const char* kBaseline = "Naive";

template <class T>
struct Entry {
  const char* name;
  Backend backend;
  Knob knob;
  std::vector<int> blocks;  // Knob::Block: the block sizes the variant is built for
  int cost;  // 0: library or GPU; 1: vectorised CPU loop; 2: textbook loop. Profiles cap slow ones.
  std::function<std::unique_ptr<Variant<T>>(const Knobs&)> make;
  // The external library the variant's timed run calls (RegisterOptions::library); "": none.
  const char* library = "";
};

template <class T>
const std::vector<Entry<T>>& registry();

}  // namespace pb::gemm
