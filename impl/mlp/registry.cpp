#include "mlp/registry.hpp"

#include <stdexcept>
#include <string>

#include "gemm/registry.hpp"
#include "mlp/mlp.hpp"

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
      if (!g.make(Knobs{})->computes_for_caller()) continue;
      const std::string name = g.name;
      if (g.backend == Backend::Cpu)
        out.push_back(Entry::Line(g.name)
                          .knob(g.knob, g.blocks)
                          .cap(name == "Naive" ? kLoops : kNoCap)
                          .role(g.role)
                          .code(Code("impl/mlp/cpu/host.cpp").plus(g.code))
                          .library(g.library)
                          .factory([name](const Knobs& k) { return make_host(name, k); }));
#ifdef PARBENCH_WITH_CUDA
      if (g.backend == Backend::Cuda)
        out.push_back(Entry::Line(g.name)
                          .cuda()
                          .knob(g.knob, g.blocks)
                          .code(Code("impl/mlp/cuda/device_step.cu").plus(g.code))
                          .library(g.library)
                          .factory([name](const Knobs& k) { return make_device(name, k); }));
#endif
    }
#ifdef PARBENCH_WITH_CUDA
    out.push_back(Entry::Line("cuBLAS.Graph")
                      .cuda()
                      .code("impl/mlp/cuda/device_step.cu")
                      .library("cublas")
                      .factory([](const Knobs& k) { return make_device("", k); }));
#endif
    return out;
  }();
  return list;
}

template <class T>
std::unique_ptr<gemm::Variant<T>> make_gemm(const std::string& name, const Knobs& k) {
  for (const auto& e : gemm::registry<T>())
    if (name == e.name) return e.make(k);
  throw std::logic_error("no GEMM variant " + name);
}
template std::unique_ptr<gemm::Variant<float>> make_gemm(const std::string&, const Knobs&);
template std::unique_ptr<gemm::Variant<double>> make_gemm(const std::string&, const Knobs&);

Support gemm_supports(const Problem& p, const std::string& name, const Knobs& k) {
  for (std::int64_t l = 1; l <= p.layers(); ++l) {
    const std::int64_t in = p.widths[std::size_t(l - 1)], out = p.widths[std::size_t(l)];
    for (const gemm::Problem& g :
         {gemm::Problem{gemm::Op::AB, p.batch, out, in}, gemm::Problem{gemm::Op::AtB, in, out, p.batch},
          gemm::Problem{gemm::Op::ABtC, p.batch, in, out}}) {
      const Support s =
          p.f64 ? make_gemm<double>(name, k)->supports(g) : make_gemm<float>(name, k)->supports(g);
      if (!s.ok()) return s;
    }
  }
  return Support::yes();
}

}  // namespace pb::mlp
