#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "fixtures/fixtures.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {
namespace {
// Row-major element access for each operation's operand layout.
template <class T>
double a_at(const Problem& p, const Inputs<T>& in, std::int64_t i, std::int64_t k) {
  return p.op == Op::AtB ? in.a[k * p.m + i] : in.a[i * p.k + k];
}
template <class T>
double b_at(const Problem& p, const Inputs<T>& in, std::int64_t k, std::int64_t j) {
  return p.op == Op::ABtC ? in.b[j * p.k + k] : in.b[k * p.n + j];
}
// One k of n sums at once, along a contiguous operand row:
// value[x] += s * row[x] and mag[x] += |s * row[x]|.
template <class T>
void add_products(double s, const T* row, std::int64_t n, double* value, double* mag) {
  for (std::int64_t x = 0; x < n; ++x) {
    double prod = s * static_cast<double>(row[x]);
    value[x] += prod;
    mag[x] += std::fabs(prod);
  }
}
}  // namespace

template <class T>
void reference_element(const Problem& p, const Inputs<T>& in, std::int64_t i, std::int64_t j, double& value,
                       double& mag) {
  double v = 0.0, m = 0.0;
  for (std::int64_t k = 0; k < p.k; ++k) {
    double prod = a_at(p, in, i, k) * b_at(p, in, k, j);
    v += prod;
    m += std::fabs(prod);
  }
  if (p.has_c_input()) {
    double c = in.c[i * p.n + j];
    v += c;
    m += std::fabs(c);
  }
  value = v;
  mag = m;
}

template <class T>
void reference_row(const Problem& p, const Inputs<T>& in, std::int64_t i, std::vector<double>& value,
                   std::vector<double>& mag) {
  value.assign(p.n, 0.0);
  mag.assign(p.n, 0.0);
  if (p.op == Op::ABtC) {  // B is N x K: each element is a contiguous dot product
    for (std::int64_t j = 0; j < p.n; ++j) reference_element(p, in, i, j, value[j], mag[j]);
    return;
  }
  for (std::int64_t k = 0; k < p.k; ++k)
    add_products(a_at(p, in, i, k), in.b.data() + k * p.n, p.n, value.data(), mag.data());
}

template <class T>
void reference_column(const Problem& p, const Inputs<T>& in, std::int64_t j, double* value, double* mag) {
  std::vector<double> bj(p.k);
  for (std::int64_t k = 0; k < p.k; ++k) bj[k] = b_at(p, in, k, j);
  if (p.op == Op::AtB) {  // A is K x M: accumulate along its rows, k outermost as in every sum
    std::fill(value, value + p.m, 0.0);
    std::fill(mag, mag + p.m, 0.0);
    for (std::int64_t k = 0; k < p.k; ++k) add_products(bj[k], in.a.data() + k * p.m, p.m, value, mag);
  } else {  // A is M x K: a dot product a row
    for (std::int64_t i = 0; i < p.m; ++i) {
      const T* arow = in.a.data() + i * p.k;
      double v = 0.0, m = 0.0;
      for (std::int64_t k = 0; k < p.k; ++k) {
        double prod = static_cast<double>(arow[k]) * bj[k];
        v += prod;
        m += std::fabs(prod);
      }
      value[i] = v, mag[i] = m;
    }
  }
  if (p.has_c_input())
    for (std::int64_t i = 0; i < p.m; ++i) {
      double c = in.c[i * p.n + j];
      value[i] += c;
      mag[i] += std::fabs(c);
    }
}

template void reference_element(const Problem&, const Inputs<float>&, std::int64_t, std::int64_t, double&,
                                double&);
template void reference_element(const Problem&, const Inputs<double>&, std::int64_t, std::int64_t, double&,
                                double&);
template void reference_row(const Problem&, const Inputs<float>&, std::int64_t, std::vector<double>&,
                            std::vector<double>&);
template void reference_row(const Problem&, const Inputs<double>&, std::int64_t, std::vector<double>&,
                            std::vector<double>&);
template void reference_column(const Problem&, const Inputs<float>&, std::int64_t, double*, double*);
template void reference_column(const Problem&, const Inputs<double>&, std::int64_t, double*, double*);

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

namespace {

double gamma(double u, std::int64_t n) {
  double nu = static_cast<double>(n) * u;
  return nu < 1.0 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}

struct Worst {
  std::int64_t bad = 0, checked = 0;
  double ratio = -1.0;  // err / tol of the worst element
  std::int64_t i = 0, j = 0;
  double got = 0, want = 0, err = 0, tol = 0;

  void see(std::int64_t i_, std::int64_t j_, double got_, double want_, double tol_) {
    ++checked;
    double err_ = std::fabs(got_ - want_);
    bool ok = err_ <= tol_;  // false for NaN
    if (!ok) ++bad;
    double r = std::isnan(err_) ? std::numeric_limits<double>::infinity()
                                : err_ / std::max(tol_, std::numeric_limits<double>::min());
    if (r > ratio) {
      ratio = r, i = i_, j = j_, got = got_, want = want_, err = err_, tol = tol_;
    }
  }
  void merge(const Worst& o) {
    bool take = o.ratio > ratio;
    bad += o.bad;
    checked += o.checked;
    if (take) ratio = o.ratio, i = o.i, j = o.j, got = o.got, want = o.want, err = o.err, tol = o.tol;
  }
};

std::string describe(const Worst& w, const char* what) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%lld of %lld %s outside tolerance; worst at (%lld,%lld): got %.9g, expected %.9g, "
                "|err| %.3g > tol %.3g",
                static_cast<long long>(w.bad), static_cast<long long>(w.checked), what,
                static_cast<long long>(w.i), static_cast<long long>(w.j), w.got, w.want, w.err, w.tol);
  return buf;
}

}  // namespace

template <class T>
double tolerance(std::int64_t terms) {
  return gamma(std::numeric_limits<T>::epsilon() / 2, terms) +
         gamma(std::numeric_limits<double>::epsilon() / 2, terms);
}

double tensor_tolerance(std::int64_t terms) {
  return gamma(std::numeric_limits<float>::epsilon(), terms) +
         gamma(std::numeric_limits<double>::epsilon() / 2, terms);
}

template <class T>
double tolerance_for(const Problem& p, std::int64_t terms) {
  return p.prec == Precision::Native ? tolerance<T>(terms) : tensor_tolerance(terms);
}

template <class T>
Oracle<T>::Oracle(const Problem& p, const Inputs<T>& in, std::uint64_t seed)
    : p_(p), full_(double(p.m) * p.n * p.k <= kFullCheckWork && double(p.m) * p.n <= kFullCheckElems) {
  if (full_) {
    value_.resize(p.m * p.n);
    mag_.resize(p.m * p.n);
#pragma omp parallel
    {
      std::vector<double> v, m;
#pragma omp for schedule(dynamic, 4)
      for (std::int64_t i = 0; i < p.m; ++i) {
        reference_row(p, in, i, v, m);
        std::copy(v.begin(), v.end(), value_.begin() + i * p.n);
        std::copy(m.begin(), m.end(), mag_.begin() + i * p.n);
      }
    }
    return;
  }
  // Sampled lines: first, last, and one per band at a staggered offset.
  auto pick = [&](std::int64_t extent, std::uint64_t salt) {
    const std::int64_t band =
        std::max<std::int64_t>(kSampleBand, (extent + kMaxSampleLines - 1) / kMaxSampleLines);
    std::vector<std::int64_t> out{0, extent - 1};
    for (std::int64_t b0 = 0; b0 < extent; b0 += band) {
      auto v = b0 + static_cast<std::int64_t>(fixtures::hash(seed ^ salt, b0) % std::uint64_t(band));
      if (v < extent && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
  };
  rows_ = pick(p.m, 0x726f7773);
  cols_ = pick(p.n, 0x636f6c73);
  for (int t = 0; t < kSamplePoints; ++t)
    points_.push_back(
        static_cast<std::int64_t>(fixtures::hash(seed ^ 0x707473, t) % std::uint64_t(p.m * p.n)));
  const std::int64_t R = rows_.size(), C = cols_.size(), P = points_.size();
  value_.resize(R * p.n + C * p.m + P);
  mag_.resize(value_.size());
#pragma omp parallel
  {
    std::vector<double> v, m;
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t r = 0; r < R; ++r) {
      reference_row(p, in, rows_[r], v, m);
      std::copy(v.begin(), v.end(), value_.begin() + r * p.n);
      std::copy(m.begin(), m.end(), mag_.begin() + r * p.n);
    }
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t c = 0; c < C; ++c)
      reference_column(p, in, cols_[c], value_.data() + R * p.n + c * p.m, mag_.data() + R * p.n + c * p.m);
#pragma omp for schedule(static)
    for (std::int64_t t = 0; t < P; ++t) {
      auto at = R * p.n + C * p.m + t;
      reference_element(p, in, points_[t] / p.n, points_[t] % p.n, value_[at], mag_[at]);
    }
  }
  // Freivalds: x in {-1, +1}^N; ax = A (B x) + C x;  abs_bound = |A| (|B| 1) + |C| 1.
  x_.resize(p.n);
  for (std::int64_t j = 0; j < p.n; ++j) x_[j] = (fixtures::hash(seed, j) & 1) ? 1.0 : -1.0;
  std::vector<double> bx(p.k, 0.0), b1(p.k, 0.0);
  auto b_at = [&](std::int64_t k, std::int64_t j) -> double {
    return p.op == Op::ABtC ? in.b[j * p.k + k] : in.b[k * p.n + j];
  };
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < p.k; ++k)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double b = b_at(k, j);
      bx[k] += b * x_[j];
      b1[k] += std::fabs(b);
    }
  ax_.assign(p.m, 0.0);
  abs_bound_.assign(p.m, 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < p.m; ++i) {
    double s = 0, a1 = 0;
    for (std::int64_t k = 0; k < p.k; ++k) {
      double a = p.op == Op::AtB ? in.a[k * p.m + i] : in.a[i * p.k + k];
      s += a * bx[k];
      a1 += std::fabs(a) * b1[k];
    }
    if (p.has_c_input())
      for (std::int64_t j = 0; j < p.n; ++j) {
        double c = in.c[i * p.n + j];
        s += c * x_[j];
        a1 += std::fabs(c);
      }
    ax_[i] = s;
    abs_bound_[i] = a1;
  }
}

template <class T>
Check Oracle<T>::check(const std::vector<T>& out) const {
  const auto& p = p_;
  if (static_cast<std::int64_t>(out.size()) != p.m * p.n)
    return {false,
            "output has " + std::to_string(out.size()) + " elements, expected " + std::to_string(p.m * p.n),
            ""};
  const double tol = tolerance_for<T>(p, p.k + 1);
  Worst worst;
  if (full_) {
#pragma omp parallel
    {
      Worst local;
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < p.m; ++i)
        for (std::int64_t j = 0; j < p.n; ++j) {
          auto at = i * p.n + j;
          local.see(i, j, out[at], value_[at], tol * mag_[at]);
        }
#pragma omp critical
      worst.merge(local);
    }
    if (worst.bad) return {false, describe(worst, "elements") + " [full check]", "full"};
    return {true, "", "full"};
  }
  const std::int64_t R = rows_.size(), C = cols_.size();
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t j = 0; j < p.n; ++j)
      worst.see(rows_[r], j, out[rows_[r] * p.n + j], value_[r * p.n + j], tol * mag_[r * p.n + j]);
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t i = 0; i < p.m; ++i) {
      auto at = R * p.n + c * p.m + i;
      worst.see(i, cols_[c], out[i * p.n + cols_[c]], value_[at], tol * mag_[at]);
    }
  for (std::size_t t = 0; t < points_.size(); ++t) {
    auto at = R * p.n + C * p.m + t;
    auto i = points_[t] / p.n, j = points_[t] % p.n;
    worst.see(i, j, out[points_[t]], value_[at], tol * mag_[at]);
  }
  if (worst.bad)
    return {false, describe(worst, "sampled elements") + " [sampled rows/columns/points]", "sampled"};
  // Freivalds row sums: |sum_j x_j (out_ij - ref_ij)| <= sum_j |err_ij|.
  Worst rows;
  const double tol_sum = tolerance_for<T>(p, p.k + 1) + 2 * tolerance<double>(p.k + p.n + 2);
#pragma omp parallel
  {
    Worst local;
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < p.m; ++i) {
      double y = 0, y1 = 0;
      for (std::int64_t j = 0; j < p.n; ++j) {
        y += static_cast<double>(out[i * p.n + j]) * x_[j];
        y1 += std::fabs(static_cast<double>(out[i * p.n + j]));
      }
      local.see(i, -1, y, ax_[i], tol_sum * (abs_bound_[i] + y1));
    }
#pragma omp critical
    rows.merge(local);
  }
  if (rows.bad) return {false, describe(rows, "row sums (Freivalds, column -1)") + " [Freivalds]", "sampled"};
  return {true, "", "sampled+freivalds"};
}

template double tolerance<float>(std::int64_t);
template double tolerance<double>(std::int64_t);
template double tolerance_for<float>(const Problem&, std::int64_t);
template double tolerance_for<double>(const Problem&, std::int64_t);
template class Oracle<float>;
template class Oracle<double>;

}  // namespace pb::gemm
