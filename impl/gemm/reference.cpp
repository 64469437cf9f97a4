#include "gemm/reference.hpp"

#include <cmath>

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
  for (std::int64_t k = 0; k < p.k; ++k) {
    double a = a_at(p, in, i, k);
    const T* brow = in.b.data() + k * p.n;
    for (std::int64_t j = 0; j < p.n; ++j) {
      double prod = a * static_cast<double>(brow[j]);
      value[j] += prod;
      mag[j] += std::fabs(prod);
    }
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

}  // namespace pb::gemm
