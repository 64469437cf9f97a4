#pragma once
// Registry-driven test parameters shared by the family tests: one case per
// variant and knob value (threads 1 and 3; two block sizes or 2-D shapes), labelled for
// gtest (dots become underscores). Each family instantiates its cases twice,
// `Cpu/...` and `Gpu/...` (PB_INSTANTIATE_CPU_AND_GPU), so that ctest runs every
// GPU test in one process that a machine without a GPU skips whole.
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/job.hpp"
#include "core/knobs.hpp"
#include "core/registrar.hpp"

namespace pb::testing {

struct VariantCase {
  std::string name;
  Knobs knobs;
  std::string label;
  bool gpu = false;  // the variant runs on a GPU (a Backend::Cuda or MpiCuda entry)
};
inline void PrintTo(const VariantCase& c, std::ostream* os) { *os << c.label; }

template <class Registry>
std::vector<VariantCase> variant_cases(const Registry& registry, int block_a, int block_b) {
  std::vector<VariantCase> out;
  for (const auto& e : registry) {
    // Block shapes: a warp-wide one and a small square one that leaves partial blocks on every grid.
    // GPU counts: one GPU, its work split into 1, 2, 3 and 4 parts (the
    // halo exchange of a multi-GPU variant, checked on any one GPU); a
    // variant over MPI ranks holds one part a GPU.
    std::vector<Knobs> values = knob_values(e.knob, {1, 3}, {block_a, block_b}, {{32, 4}, {8, 2}});
    if (e.knob == Knob::Gpus) {
      values.clear();
      for (int parts = 1; parts <= (collective(e.backend) ? 1 : 4); ++parts) {
        Knobs k;
        k.gpus = 1, k.parts = parts;
        values.push_back(k);
      }
    }
    for (auto k : values) {
      std::string label = e.name;
      if (e.knob == Knob::Threads) label += "_threads" + std::to_string(k.threads);
      if (e.knob == Knob::Block) label += "_block" + std::to_string(k.block);
      if (e.knob == Knob::BlockShape)
        label += "_block" + std::to_string(k.block) + "x" + std::to_string(k.block_y);
      if (e.knob == Knob::Gpus)
        label += "_gpus" + std::to_string(k.gpus) + "_parts" + std::to_string(k.parts);
      for (auto& ch : label)
        if (ch == '.') ch = '_';
      out.push_back({e.name, k, label, on_gpu(e.backend)});
    }
  }
  return out;
}

// The cases that run on a GPU (gpu = true) or the rest.
template <class Case>
std::vector<Case> select(std::vector<Case> cases, bool gpu) {
  std::vector<Case> out;
  for (auto& c : cases)
    if (c.gpu == gpu) out.push_back(std::move(c));
  return out;
}

template <class Registry>
const auto& find_variant(const Registry& registry, const std::string& name) {
  for (const auto& e : registry)
    if (name == e.name) return e;
  throw std::logic_error("no variant " + name);
}

}  // namespace pb::testing

// Instantiates a registry-driven suite as Cpu/<Suite> and Gpu/<Suite>; the
// GPU half may be empty (a CPU-only build) while the CPU half never is.
#define PB_INSTANTIATE_CPU_AND_GPU(Suite, cases)                                                 \
  INSTANTIATE_TEST_SUITE_P(Cpu, Suite, ::testing::ValuesIn(::pb::testing::select(cases, false)), \
                           [](const auto& info) { return info.param.label; });                   \
  INSTANTIATE_TEST_SUITE_P(Gpu, Suite, ::testing::ValuesIn(::pb::testing::select(cases, true)),  \
                           [](const auto& info) { return info.param.label; })
