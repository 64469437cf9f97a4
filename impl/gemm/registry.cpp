#include "gemm/registry.hpp"

#include "gemm/cpu/simd.hpp"

namespace pb::gemm {

// The variants' factories, each defined in its own file.
template <class T>
std::unique_ptr<Variant<T>> make_cpu_naive();
template <class T>
std::unique_ptr<Variant<T>> make_cpu_omp(int threads);
template <class T>
std::unique_ptr<Variant<T>> make_openblas(int threads);
#ifdef PARBENCH_WITH_CUDA
template <class T>
std::unique_ptr<Variant<T>> make_cuda_naive(int block);
template <class T>
std::unique_ptr<Variant<T>> make_cuda_tiled(int block);
template <class T>
std::unique_ptr<Variant<T>> make_cuda_regblock();
template <class T>
std::unique_ptr<Variant<T>> make_cuda_pipelined(int tile);
template <class T>
std::unique_ptr<Variant<T>> make_cuda_dmma(int tile);
template <class T>
std::unique_ptr<Variant<T>> make_cublas();
// -1: the kernel's own; staged: D through shared memory and TMA (CUDA.WGMMA.TmaStore)
std::unique_ptr<Variant<float>> make_cuda_wgmma(int streamk_rounds = -1, bool staged = false);
std::unique_ptr<Variant<float>> make_cublas_tensor();
#endif

// The largest M*N*K a slow CPU variant runs per profile, about a second a call
// at the cap: a textbook loop does ~1 GFLOP/s, a vectorised one ~5-10 a core.
constexpr WorkCap kTextbookLoop{21, 27, 30};
constexpr WorkCap kVectorisedLoop{24, 30, 33};

template <class T>
const std::vector<Entry<T>>& registry() {
  // One line per variant: the list reads as a table.
  // clang-format off
  using Line = typename Entry<T>::Line;
  static const std::vector<Entry<T>> list = {
      Line{"Naive"}.role(Role::Baseline).cap(kTextbookLoop).code("impl/gemm/cpu/naive.cpp")
          .factory([](const Knobs&) { return make_cpu_naive<T>(); }),
      Line{"OMP"}.threads().cap(kVectorisedLoop).code("impl/gemm/cpu/omp.cpp")
          .factory([](const Knobs& k) { return make_cpu_omp<T>(k.threads); }),
      Line{"OMP.Blocked"}.threads().code("impl/gemm/cpu/blocked.cpp")
          .factory([](const Knobs& k) { return make_cpu_blocked<T>(k.threads, blocked_simd()); }),
      Line{"OpenBLAS"}.threads().code("impl/gemm/cpu/openblas.cpp").library("openblas")
          .factory([](const Knobs& k) { return make_openblas<T>(k.threads); }),
#ifdef PARBENCH_WITH_CUDA
      Line{"CUDA.Naive"}.cuda().blocks({16, 32}).code("impl/gemm/cuda/naive.cu")
          .factory([](const Knobs& k) { return make_cuda_naive<T>(k.block); }),
      Line{"CUDA.Tiled"}.cuda().blocks({16, 32}).code("impl/gemm/cuda/tiled.cu")
          .factory([](const Knobs& k) { return make_cuda_tiled<T>(k.block); }),
      Line{"CUDA.RegBlock"}.cuda().code("impl/gemm/cuda/regblock.cu")
          .factory([](const Knobs&) { return make_cuda_regblock<T>(); }),
      Line{"CUDA.Pipelined"}.cuda().code("impl/gemm/cuda/pipelined.cu")
          .traits(tuned_in<T, float>(&pipelined_tiles))
          .factory([](const Knobs& k) { return make_cuda_pipelined<T>(k.tile); }),
      Line{"CUDA.DMMA"}.cuda().code("impl/gemm/cuda/dmma.cu")
          .traits(tuned_in<T, double>(&dmma_tiles))
          .factory([](const Knobs& k) { return make_cuda_dmma<T>(k.tile); }),
      Line{"cuBLAS"}.cuda().code("impl/gemm/cuda/cublas.cu").library("cublas")
          .factory([](const Knobs&) { return make_cublas<T>(); }),
#endif
  };
  // clang-format on
  return list;
}

const std::vector<Entry<float>>& tensor_registry() {
  // clang-format off
  using TensorLine = Entry<float>::Line;
  static const std::vector<Entry<float>> list = {
#ifdef PARBENCH_WITH_CUDA
      TensorLine{"CUDA.WGMMA"}.cuda().code("impl/gemm/cuda/wgmma.cu")
          .factory([](const Knobs&) { return make_cuda_wgmma(); }),
      TensorLine{"CUDA.WGMMA.TmaStore"}.cuda().code("impl/gemm/cuda/wgmma.cu")
          .factory([](const Knobs&) { return make_cuda_wgmma(-1, true); }),
      TensorLine{"cuBLAS"}.cuda().code("impl/gemm/cuda/cublas.cu").library("cublas")
          .factory([](const Knobs&) { return make_cublas_tensor(); }),
#endif
  };
  // clang-format on
  return list;
}

template const std::vector<Entry<float>>& registry();
template const std::vector<Entry<double>>& registry();

}  // namespace pb::gemm
