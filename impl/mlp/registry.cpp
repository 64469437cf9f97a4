#include "mlp/registry.hpp"

#include <string>

#include "gemm/registry.hpp"

namespace pb::mlp {

std::unique_ptr<Variant> make_host(const std::string& gemm, const Knobs& k);  // cpu/host.cpp

// The textbook loops run a step of at most 2^28 GEMM flops in the default
// profile (784-128-10 at batch 64 is 2^25; 784-1024-1024-10 at batch 1024 is
// 2^33, about a minute a step there).
constexpr WorkCap kLoops{26, 28, 34};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> list = [] {
    std::vector<Entry> out;
    for (const auto& g : gemm::registry<double>()) {
      if (g.backend != Backend::Cpu || !g.make(Knobs{})->backend()) continue;
      const std::string name = g.name;
      const bool loops = name == "Naive";
      out.push_back({g.name, Backend::Cpu, g.knob, g.blocks, loops ? kLoops : kNoCap, g.baseline,
                     [name](const Knobs& k) { return make_host(name, k); }, g.library});
    }
    return out;
  }();
  return list;
}

}  // namespace pb::mlp
