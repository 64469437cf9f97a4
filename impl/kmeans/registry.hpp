#pragma once
// THE list of k-means variants; benchmarks and tests iterate over it.
#include <functional>
#include <memory>
#include <vector>

#include "core/job.hpp"
#include "core/knobs.hpp"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

// The variant speedup is measured from (the JSON marks it "baseline").
inline constexpr const char* kBaseline = "Seq";

struct Entry {
  const char* name;
  Backend backend;
  Knob knob;
  int cost;  // 2: one CPU thread (Seq); 1: CPU parallel; 0: GPU. Profiles cap slow ones.
  std::function<std::unique_ptr<Variant>(const Knobs&)> make;
  // The external library the variant's timed run calls (RegisterOptions::library); "": none.
  const char* library = "";
};

const std::vector<Entry>& registry();

}  // namespace pb::kmeans
