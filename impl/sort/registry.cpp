#include "sort/registry.hpp"

#include "sort/cpu/cpu_variants.hpp"
#ifdef PARBENCH_WITH_CUDA
#include "sort/cuda/factories.hpp"
#endif

namespace pb::sort {

const std::vector<Entry>& registry() {
  // Networks do n log^2 n work: on the CPU they stop two sizes below the rest.
  static const std::vector<Entry> list = {
      {"Std", Backend::Cpu, Knob::None, {16, 26, 28}, true, [](const Knobs&) { return make_std(); }},
      {"ParallelMode", Backend::Cpu, Knob::Threads, {16, 26, 28}, true,
       [](const Knobs& k) { return make_parallel_mode(k.threads); }},
      {"OMP.Radix", Backend::Cpu, Knob::Threads, {16, 26, 28}, false,
       [](const Knobs& k) { return make_omp_radix(k.threads); }},
      {"OMP.Bitonic", Backend::Cpu, Knob::Threads, {14, 22, 24}, true,
       [](const Knobs& k) { return make_omp_bitonic(k.threads); }},
      {"OMP.OddEvenMerge", Backend::Cpu, Knob::Threads, {14, 22, 24}, true,
       [](const Knobs& k) { return make_omp_odd_even(k.threads); }},
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.Bitonic", Backend::Cuda, Knob::Block, {16, 28, 30}, true,
       [](const Knobs& k) { return make_cuda_bitonic(k.block); }},
      {"CUDA.OddEvenMerge", Backend::Cuda, Knob::Block, {16, 28, 30}, true,
       [](const Knobs& k) { return make_cuda_odd_even(k.block); }},
      {"Thrust", Backend::Cuda, Knob::None, {16, 28, 30}, false,
       [](const Knobs&) { return make_thrust(); }, "thrust"},
      {"CUB", Backend::Cuda, Knob::None, {16, 28, 30}, false, [](const Knobs&) { return make_cub(); }, "cub"},
      {"CUB.Offset64", Backend::Cuda, Knob::None, {16, 28, 30}, false,
       [](const Knobs&) { return make_cub_offset64(); }, "cub"},
#endif
  };
  return list;
}

}  // namespace pb::sort
