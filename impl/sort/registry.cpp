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
std::unique_ptr<Variant> make_cuda_odd_even_windows();
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
  using Line = Entry::Line;
  static const std::vector<Entry> list = {
      Line{"Std"}.role(Role::Baseline).cap(kCpu).code("impl/sort/cpu/std.cpp").traits(kBatched)
          .factory([](const Knobs&) { return make_std(); }),
      Line{"ParallelMode"}.threads().cap(kCpu).code("impl/sort/cpu/std.cpp").traits(kBatched)
          .factory([](const Knobs& k) { return make_parallel_mode(k.threads); }),
      Line{"OMP.Radix"}.threads().cap(kCpu).code("impl/sort/cpu/radix.cpp").traits(kOneArray)
          .factory([](const Knobs& k) { return make_omp_radix(k.threads); }),
      Line{"OMP.Bitonic"}.threads().cap(kCpuNetwork).code("impl/sort/cpu/networks.cpp").traits(kBatched)
          .factory([](const Knobs& k) { return make_omp_bitonic(k.threads); }),
      Line{"OMP.OddEvenMerge"}.threads().cap(kCpuNetwork).code("impl/sort/cpu/networks.cpp")
          .traits(kBatched).factory([](const Knobs& k) { return make_omp_odd_even(k.threads); }),
#ifdef PARBENCH_WITH_CUDA
      Line{"CUDA.Bitonic"}.cuda().blocks().cap(kGpu).code("impl/sort/cuda/networks.cu").traits(kBatched)
          .factory([](const Knobs& k) { return make_cuda_bitonic(k.block); }),
      Line{"CUDA.BitonicMerge"}.cuda().cap(kGpu).code("impl/sort/cuda/networks.cu").traits(kBatched)
          .factory([](const Knobs&) { return make_cuda_bitonic_merge(); }),
      Line{"CUDA.OddEvenMerge"}.cuda().blocks().cap(kGpu).code("impl/sort/cuda/networks.cu")
          .traits(kBatched).factory([](const Knobs& k) { return make_cuda_odd_even(k.block); }),
      Line{"CUDA.OddEvenMerge.Windows"}.cuda().cap(kGpu).code("impl/sort/cuda/networks.cu").traits(kBatched)
          .factory([](const Knobs&) { return make_cuda_odd_even_windows(); }),
      Line{"CUDA.Radix"}.cuda().cap(kGpu).code("impl/sort/cuda/radix.cu").traits(kOneArray)
          .factory([](const Knobs&) { return make_cuda_radix(); }),
      Line{"Thrust"}.cuda().cap(kGpu).code("impl/sort/cuda/libs.cu").library("thrust").traits(kOneArray)
          .factory([](const Knobs&) { return make_thrust(); }),
      Line{"CUB"}.cuda().cap(kGpu).code("impl/sort/cuda/libs.cu").library("cub").traits(kOneArray)
          .factory([](const Knobs&) { return make_cub(); }),
      Line{"CUB.Offset64"}.cuda().cap(kGpu).code("impl/sort/cuda/libs.cu").library("cub").traits(kOneArray)
          .factory([](const Knobs&) { return make_cub_offset64(); }),
#endif
  };
  // clang-format on
  return list;
}

}  // namespace pb::sort
