// The scan problem's inputs, its reference and the check of a result.
#include <cmath>
#include <cstring>

#include "fixtures/fixtures.hpp"
#include "scan/scan.hpp"

namespace pb::scan {

std::string Problem::str() const {
  return std::string(type == Type::U32 ? "u32" : "f32") + " n=" + std::to_string(n) +
         (segmented() ? " segment=" + std::to_string(segment) : "");
}

Inputs make_inputs(const Problem& p, std::uint64_t base_seed) {
  Inputs in;
  const std::size_t n = std::size_t(p.n);
  in.values.resize(n);
  const auto seed = fixtures::seed_for(base_seed, p.type == Type::U32 ? "scan.u32" : "scan.f32", {p.n});
  if (p.type == Type::U32) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < p.n; ++i)
      in.values[std::size_t(i)] = std::uint32_t(fixtures::hash(seed, i) >> 32);
  } else {
    fixtures::fill_uniform(reinterpret_cast<float*>(in.values.data()), n, seed);
  }
  if (p.segmented()) {
    // Heads drawn independently, then counted: a sequential pass, seconds
    // at 2^30, once per problem.
    const auto kseed = fixtures::seed_for(base_seed, "scan.heads", {p.n, p.segment});
    in.keys.resize(n);
    const std::uint64_t below = ~std::uint64_t(0) / std::uint64_t(p.segment);
    std::uint32_t key = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0 && fixtures::hash(kseed, i) < below) ++key;
      in.keys[i] = key;
    }
  }
  return in;
}

Reference reference(const Problem& p, const Inputs& in) {
  Reference r;
  const std::size_t n = std::size_t(p.n);
  if (p.type == Type::U32) {
    r.exact.resize(n);
    std::uint32_t s = 0;
    for (std::size_t i = 0; i < n; ++i) {
      s = (p.segmented() && head(in, std::int64_t(i)) ? 0u : s) + in.values[i];
      r.exact[i] = s;
    }
  } else {
    r.sum.resize(n);
    r.magnitude.resize(n);
    double s = 0, m = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float x;
      std::memcpy(&x, &in.values[i], 4);
      if (p.segmented() && head(in, std::int64_t(i))) s = m = 0;
      s += x;
      m += std::fabs(double(x));
      r.sum[i] = s;
      r.magnitude[i] = m;
    }
  }
  return r;
}

Check verify(const Problem& p, const Inputs&, const Reference& ref, const Output& out) {
  Check c;
  c.method = p.type == Type::U32 ? "full, exact" : "full, bounded";
  const std::size_t n = std::size_t(p.n);
  if (out.values.size() != n) {
    c.passed = false;
    c.message =
        "the result holds " + std::to_string(out.values.size()) + " elements, not " + std::to_string(n);
    return c;
  }
  std::size_t bad = 0, first = 0;
  double worst = 0;
  std::string at;
  for (std::size_t i = 0; i < n; ++i) {
    bool wrong;
    if (p.type == Type::U32) {
      wrong = out.values[i] != ref.exact[i];
    } else {
      float x;
      std::memcpy(&x, &out.values[i], 4);
      const double err = std::fabs(double(x) - ref.sum[i]);
      const double ratio = err / (kF32Tolerance * ref.magnitude[i]);
      wrong = !(ratio <= 1.0);  // NaN is wrong too
      if (wrong && !(ratio <= worst)) worst = ratio;
    }
    if (wrong && bad++ == 0) first = i;
  }
  if (bad) {
    c.passed = false;
    c.message = std::to_string(bad) + " of " + std::to_string(n) + " sums wrong, the first at " +
                std::to_string(first);
    if (p.type == Type::U32)
      c.message +=
          " (" + std::to_string(out.values[first]) + ", expected " + std::to_string(ref.exact[first]) + ")";
    else
      c.message += " (worst error " + std::to_string(worst) + "x the bound)";
  }
  return c;
}

}  // namespace pb::scan
