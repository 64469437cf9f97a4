#include "sort/registry.hpp"

namespace pb::sort {

// The variants' factories, each defined in its own file.
std::unique_ptr<Variant> make_std();                       // std::sort / std::stable_sort, one thread
std::unique_ptr<Variant> make_parallel_mode(int threads);  // libstdc++ parallel mode
std::unique_ptr<Variant> make_omp_radix(int threads);
std::unique_ptr<Variant> make_omp_bitonic(int threads);
std::unique_ptr<Variant> make_omp_odd_even(int threads);
#ifdef PARBENCH_WITH_CUDA
std::unique_ptr<Variant> make_cuda_bitonic(int block);
std::unique_ptr<Variant> make_cuda_odd_even(int block);
std::unique_ptr<Variant> make_cuda_bitonic_merge();
std::unique_ptr<Variant> make_thrust();
std::unique_ptr<Variant> make_cub();
std::unique_ptr<Variant> make_cub_offset64();
std::unique_ptr<Variant> make_cuda_radix();
#endif

// The largest total n per profile. Networks do n log^2 n work: on the CPU they
// stop two sizes below the rest.
constexpr WorkCap kCpu{16, 26, 28};
constexpr WorkCap kCpuNetwork{14, 22, 24};
constexpr WorkCap kGpu{16, 28, 30};
constexpr Traits kBatched{true};
constexpr Traits kOneArray{false};

const std::vector<Entry>& registry() {
  // One line per variant: the list reads as a table.
  // clang-format off
  // name, backend, knob, blocks (empty: the family's), cap, baseline, code (the factory's file), factory, library,
  // traits
  static const std::vector<Entry> list = {
      {"Std", Backend::Cpu, Knob::None, {}, kCpu, true, "impl/sort/cpu/std.cpp",
       [](const Knobs&) { return make_std(); }, "", kBatched},
      {"ParallelMode", Backend::Cpu, Knob::Threads, {}, kCpu, false, "impl/sort/cpu/std.cpp",
       [](const Knobs& k) { return make_parallel_mode(k.threads); }, "", kBatched},
      {"OMP.Radix", Backend::Cpu, Knob::Threads, {}, kCpu, false, "impl/sort/cpu/radix.cpp",
       [](const Knobs& k) { return make_omp_radix(k.threads); }, "", kOneArray},
      {"OMP.Bitonic", Backend::Cpu, Knob::Threads, {}, kCpuNetwork, false, "impl/sort/cpu/networks.cpp",
       [](const Knobs& k) { return make_omp_bitonic(k.threads); }, "", kBatched},
      {"OMP.OddEvenMerge", Backend::Cpu, Knob::Threads, {}, kCpuNetwork, false, "impl/sort/cpu/networks.cpp",
       [](const Knobs& k) { return make_omp_odd_even(k.threads); }, "", kBatched},
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.Bitonic", Backend::Cuda, Knob::Block, {}, kGpu, false, "impl/sort/cuda/networks.cu",
       [](const Knobs& k) { return make_cuda_bitonic(k.block); }, "", kBatched},
      {"CUDA.BitonicMerge", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/sort/cuda/networks.cu",
       [](const Knobs&) { return make_cuda_bitonic_merge(); }, "", kBatched},
      {"CUDA.OddEvenMerge", Backend::Cuda, Knob::Block, {}, kGpu, false, "impl/sort/cuda/networks.cu",
       [](const Knobs& k) { return make_cuda_odd_even(k.block); }, "", kBatched},
      {"CUDA.Radix", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/sort/cuda/radix.cu",
       [](const Knobs&) { return make_cuda_radix(); }, "", kOneArray},
      {"Thrust", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/sort/cuda/libs.cu",
       [](const Knobs&) { return make_thrust(); }, "thrust", kOneArray},
      {"CUB", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/sort/cuda/libs.cu",
       [](const Knobs&) { return make_cub(); }, "cub", kOneArray},
      {"CUB.Offset64", Backend::Cuda, Knob::None, {}, kGpu, false, "impl/sort/cuda/libs.cu",
       [](const Knobs&) { return make_cub_offset64(); }, "cub", kOneArray},
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::sort
