#pragma once
// THE list of sorting variants; benchmarks and tests iterate over it.
#include <functional>
#include <memory>
#include <vector>

#include "core/job.hpp"
#include "core/knobs.hpp"
#include "sort/sort.hpp"

namespace pb::sort {

// The variant speedup is measured from (the JSON marks it "baseline").
inline constexpr const char* kBaseline = "Std";

struct Entry {
  const char* name;
  Backend backend;
  Knob knob;
  // Largest total (log2) each profile runs: [smoke, default, full].
  int max_log2[3];
  bool batched;  // sorts many arrays (length < total); the others sort one
  std::function<std::unique_ptr<Variant>(const Knobs&)> make;
  // The external library the variant's timed run calls (RegisterOptions::library); "": none.
  const char* library = "";
};

const std::vector<Entry>& registry();

}  // namespace pb::sort
