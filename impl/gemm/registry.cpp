#include "gemm/registry.hpp"

#include "gemm/cpu/cpu_variant.hpp"
#ifdef PARBENCH_WITH_CUDA
#include "gemm/cuda/factories.hpp"
#endif

namespace pb::gemm {

template <class T>
const std::vector<Entry<T>>& registry() {
  static const std::vector<Entry<T>> list = {
      {"Naive", Backend::Cpu, Knob::None, {}, 2, [](const Knobs&) { return make_cpu_naive<T>(); }},
      {"OMP", Backend::Cpu, Knob::Threads, {}, 1, [](const Knobs& k) { return make_cpu_omp<T>(k.threads); }},
      {"OpenBLAS",
       Backend::Cpu,
       Knob::Threads,
       {},
       0,
       [](const Knobs& k) { return make_openblas<T>(k.threads); },
       "openblas"},
#ifdef PARBENCH_WITH_CUDA
      {"CUDA.Naive",
       Backend::Cuda,
       Knob::Block,
       {16, 32},
       0,
       [](const Knobs& k) { return make_cuda_naive<T>(k.block); }},
      {"CUDA.Tiled",
       Backend::Cuda,
       Knob::Block,
       {16, 32},
       0,
       [](const Knobs& k) { return make_cuda_tiled<T>(k.block); }},
      {"CUDA.RegBlock",
       Backend::Cuda,
       Knob::None,
       {},
       0,
       [](const Knobs&) { return make_cuda_regblock<T>(); }},
      {"cuBLAS", Backend::Cuda, Knob::None, {}, 0, [](const Knobs&) { return make_cublas<T>(); }, "cublas"},
#endif
  };
  return list;
}

template const std::vector<Entry<float>>& registry();
template const std::vector<Entry<double>>& registry();

}  // namespace pb::gemm
