#include <limits>

#include "fixtures/fixtures.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {

const char* to_string(Op op) {
  switch (op) {
    case Op::AB: return "AB";
    case Op::AtB: return "AtB";
    case Op::ABtC: return "ABtC";
  }
  return "?";
}

Op parse_op(const std::string& s) {
  if (s == "AB") return Op::AB;
  if (s == "AtB") return Op::AtB;
  if (s == "ABtC") return Op::ABtC;
  throw UsageError("unknown GEMM operation '" + s + "' (allowed: AB, AtB, ABtC)");
}

std::string Problem::str() const {
  return std::string(to_string(op)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
         std::to_string(k);
}

template <class T>
Inputs<T> make_inputs(const Problem& p, std::uint64_t base_seed) {
  const char* type = sizeof(T) == 4 ? "f32" : "f64";
  auto seed = [&](const char* operand) {
    return fixtures::seed_for(base_seed, std::string("gemm.") + to_string(p.op) + "." + type + "." + operand,
                              {p.m, p.n, p.k});
  };
  Inputs<T> in;
  in.a.resize(p.a_elems());
  in.b.resize(p.b_elems());
  fixtures::fill_uniform(in.a.data(), in.a.size(), seed("A"));
  fixtures::fill_uniform(in.b.data(), in.b.size(), seed("B"));
  if (p.has_c_input()) {
    in.c.resize(p.c_elems());
    fixtures::fill_uniform(in.c.data(), in.c.size(), seed("C"));
  }
  return in;
}

template Inputs<float> make_inputs(const Problem&, std::uint64_t);
template Inputs<double> make_inputs(const Problem&, std::uint64_t);

}  // namespace pb::gemm
