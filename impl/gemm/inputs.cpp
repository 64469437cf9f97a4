#include <cmath>
#include <cstring>
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

const char* to_string(Precision p) {
  switch (p) {
    case Precision::Native: return "native";
    case Precision::TF32: return "tf32";
    case Precision::BF16: return "bf16";
  }
  return "?";
}

std::string Problem::str() const {
  return std::string(to_string(op)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
         std::to_string(k) + (prec == Precision::Native ? "" : std::string(" ") + to_string(prec));
}

float round_to_fraction_bits(float x, int bits) {
  // Round to nearest, ties to even, on the bit pattern: add half an ulp of the
  // kept part (less one when the kept part is even) and clear the dropped bits.
  // Finite inputs only (make_inputs draws from [-1, 1)).
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const int drop = 23 - bits;
  const std::uint32_t half = (1u << (drop - 1)) - 1u + ((u >> drop) & 1u);
  u = (u + half) & ~((1u << drop) - 1u);
  std::memcpy(&x, &u, sizeof u);
  return x;
}

template <class T>
Inputs<T> make_inputs(const Problem& p, std::uint64_t base_seed) {
  const char* type = p.prec != Precision::Native ? to_string(p.prec) : sizeof(T) == 4 ? "f32" : "f64";
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
  // The multiplied operands in the reduced format; C is added in float.
  if (p.prec != Precision::Native) {
    const int bits = p.prec == Precision::TF32 ? 10 : 7;
    for (auto* v : {&in.a, &in.b})
      for (auto& x : *v) x = static_cast<T>(round_to_fraction_bits(static_cast<float>(x), bits));
  }
  return in;
}

template Inputs<float> make_inputs(const Problem&, std::uint64_t);
template Inputs<double> make_inputs(const Problem&, std::uint64_t);

}  // namespace pb::gemm
