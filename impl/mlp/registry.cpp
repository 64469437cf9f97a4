#include "mlp/registry.hpp"

#include <string>

#include "gemm/registry.hpp"

namespace pb::mlp {

std::unique_ptr<Variant> make_host(const std::string& gemm, const Knobs& k);  // cpu/host.cpp
#ifdef PARBENCH_WITH_CUDA
// cuda/device_step.cu: the step on a CUDA GEMM variant, or ("") the fused cuBLAS step in a CUDA Graph.
std::unique_ptr<Variant> make_device(const std::string& gemm, const Knobs& k);
#endif

// The textbook loops run a step of at most 2^28 GEMM flops in the default
// profile (784-128-10 at batch 64 is 2^25; 784-1024-1024-10 at batch 1024 is
// 2^33, about a minute a step there).
constexpr WorkCap kLoops{26, 28, 34};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> list = [] {
    std::vector<Entry> out;
    for (const auto& g : gemm::registry<double>()) {
      if (!g.make(Knobs{})->backend()) continue;
      const std::string name = g.name;
      if (g.backend == Backend::Cpu) {
        const bool loops = name == "Naive";
        out.push_back({g.name, Backend::Cpu, g.knob, g.blocks, loops ? kLoops : kNoCap, g.baseline,
                       Code("impl/mlp/cpu/host.cpp").plus(g.code),
                       [name](const Knobs& k) { return make_host(name, k); }, g.library});
      }
#ifdef PARBENCH_WITH_CUDA
      if (g.backend == Backend::Cuda)
        out.push_back({g.name, Backend::Cuda, g.knob, g.blocks, kNoCap, false,
                       Code("impl/mlp/cuda/device_step.cu").plus(g.code),
                       [name](const Knobs& k) { return make_device(name, k); }, g.library});
#endif
    }
#ifdef PARBENCH_WITH_CUDA
    out.push_back({"cuBLAS.Graph",
                   Backend::Cuda,
                   Knob::None,
                   {},
                   kNoCap,
                   false,
                   "impl/mlp/cuda/device_step.cu",
                   [](const Knobs& k) { return make_device("", k); },
                   "cublas"});
#endif
    return out;
  }();
  return list;
}

}  // namespace pb::mlp
