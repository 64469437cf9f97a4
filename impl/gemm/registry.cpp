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
std::unique_ptr<Variant<float>> make_cuda_wgmma(int streamk_rounds = -1);  // -1: the kernel's own
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
  // name, backend, knob, blocks, cap, baseline, code (the factory's file), factory[, library, traits]
  static const std::vector<Entry<T>> list = {
      {"Naive", Backend::Cpu, Knob::None, {}, kTextbookLoop, true, "impl/gemm/cpu/naive.cpp",
       [](const Knobs&) { return make_cpu_naive<T>(); }},
      {"OMP", Backend::Cpu, Knob::Threads, {}, kVectorisedLoop, false, "impl/gemm/cpu/omp.cpp",
       [](const Knobs& k) { return make_cpu_omp<T>(k.threads); }},
      {"OMP.Blocked", Backend::Cpu, Knob::Threads, {}, kNoCap, false, "impl/gemm/cpu/blocked.cpp",
       [](const Knobs& k) { return make_cpu_blocked<T>(k.threads, blocked_simd()); }},
      {"OpenBLAS", Backend::Cpu, Knob::Threads, {}, kNoCap, false, "impl/gemm/cpu/openblas.cpp",
       [](const Knobs& k) { return make_openblas<T>(k.threads); }, "openblas"},
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.Naive", Backend::Cuda, Knob::Block, {16, 32}, kNoCap, false, "impl/gemm/cuda/naive.cu",
       [](const Knobs& k) { return make_cuda_naive<T>(k.block); }},
      {"CUDA.Tiled", Backend::Cuda, Knob::Block, {16, 32}, kNoCap, false, "impl/gemm/cuda/tiled.cu",
       [](const Knobs& k) { return make_cuda_tiled<T>(k.block); }},
      {"CUDA.RegBlock", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/gemm/cuda/regblock.cu",
       [](const Knobs&) { return make_cuda_regblock<T>(); }},
      {"CUDA.Pipelined", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/gemm/cuda/pipelined.cu",
       [](const Knobs& k) { return make_cuda_pipelined<T>(k.tile); }, "", tuned_in<T, float>(&pipelined_tiles)},
      {"CUDA.DMMA", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/gemm/cuda/dmma.cu",
       [](const Knobs& k) { return make_cuda_dmma<T>(k.tile); }, "", tuned_in<T, double>(&dmma_tiles)},
      {"cuBLAS", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/gemm/cuda/cublas.cu",
       [](const Knobs&) { return make_cublas<T>(); }, "cublas"},
#endif
  };
  // clang-format on
  return list;
}

const std::vector<Entry<float>>& tensor_registry() {
  // clang-format off
  static const std::vector<Entry<float>> list = {
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.WGMMA", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/gemm/cuda/wgmma.cu",
       [](const Knobs&) { return make_cuda_wgmma(); }},
      {"cuBLAS", Backend::Cuda, Knob::None, {}, kNoCap, false, "impl/gemm/cuda/cublas.cu",
       [](const Knobs&) { return make_cublas_tensor(); }, "cublas"},
#endif
  };
  // clang-format on
  return list;
}

template const std::vector<Entry<float>>& registry();
template const std::vector<Entry<double>>& registry();

}  // namespace pb::gemm
