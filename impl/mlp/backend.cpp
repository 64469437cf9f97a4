#include "mlp/backend.hpp"

#include <stdexcept>

#include "gemm/registry.hpp"

namespace pb::mlp {

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
