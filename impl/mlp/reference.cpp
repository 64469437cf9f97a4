#include "mlp/reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pb::mlp {
namespace {

double act(Activation a, double z) {
  return a == Activation::Sigmoid ? 1.0 / (1.0 + std::exp(-z)) : std::max(z, 0.0);
}
// The derivative from the pre-activation z.
double act_grad(Activation a, double z) {
  if (a == Activation::Relu) return z > 0 ? 1.0 : 0.0;
  const double s = 1.0 / (1.0 + std::exp(-z));
  return s * (1.0 - s);
}

void check_rows(const Problem& p, const Data& d, std::int64_t first, std::int64_t rows) {
  validate(p);
  if (d.features != p.widths.front() || d.classes != p.widths.back())
    throw std::invalid_argument("mlp: data of " + std::to_string(d.features) + " features and " +
                                std::to_string(d.classes) + " classes for " + p.str());
  if (first < 0 || rows < 1 || first + rows > d.n)
    throw std::invalid_argument("mlp: rows " + std::to_string(first) + " + " + std::to_string(rows) +
                                " outside a data set of " + std::to_string(d.n));
}

// Forward pass over `rows` rows from `first`: z[l] and a[l] for l = 1..L
// (a[0] is the input), a[L] the softmax.
void forward(const Problem& p, const Params<double>& w, const Data& d, std::int64_t first, std::int64_t rows,
             std::vector<std::vector<double>>& z, std::vector<std::vector<double>>& a) {
  const std::int64_t L = p.layers();
  z.assign(std::size_t(L + 1), {});
  a.assign(std::size_t(L + 1), {});
  a[0].assign(d.x.begin() + first * d.features, d.x.begin() + (first + rows) * d.features);
  for (std::int64_t l = 1; l <= L; ++l) {
    const std::int64_t in = p.widths[std::size_t(l - 1)], out = p.widths[std::size_t(l)];
    auto& zl = z[std::size_t(l)];
    zl.assign(std::size_t(rows * out), 0.0);
    const auto& al = a[std::size_t(l - 1)];
    const auto& W = w.w[std::size_t(l - 1)];
    const auto& b = w.b[std::size_t(l - 1)];
    for (std::int64_t r = 0; r < rows; ++r) {
      double* zr = &zl[std::size_t(r * out)];
      for (std::int64_t k = 0; k < in; ++k) {
        const double x = al[std::size_t(r * in + k)];
        const double* wk = &W[std::size_t(k * out)];
        for (std::int64_t c = 0; c < out; ++c) zr[c] += x * wk[c];
      }
      for (std::int64_t c = 0; c < out; ++c) zr[c] += b[std::size_t(c)];
    }
    auto& outa = a[std::size_t(l)];
    outa.resize(zl.size());
    if (l < L) {
      for (std::size_t i = 0; i < zl.size(); ++i) outa[i] = act(p.act, zl[i]);
    } else {
      for (std::int64_t r = 0; r < rows; ++r) {  // softmax, shifted by the row's largest value
        const double* zr = &zl[std::size_t(r * out)];
        double* ar = &outa[std::size_t(r * out)];
        const double top = *std::max_element(zr, zr + out);
        double sum = 0;
        for (std::int64_t c = 0; c < out; ++c) sum += (ar[c] = std::exp(zr[c] - top));
        for (std::int64_t c = 0; c < out; ++c) ar[c] /= sum;
      }
    }
  }
}

double cross_entropy(const Problem& p, const std::vector<double>& prob, const Data& d, std::int64_t first,
                     std::int64_t rows) {
  const std::int64_t out = p.widths.back();
  double sum = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    sum -= std::log(std::max(prob[std::size_t(r * out + d.label[std::size_t(first + r)])], 1e-300));
  return sum / double(rows);
}

}  // namespace

double loss(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first) {
  check_rows(p, d, first, p.batch);
  std::vector<std::vector<double>> z, a;
  forward(p, params, d, first, p.batch, z, a);
  return cross_entropy(p, a.back(), d, first, p.batch);
}

double gradients(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                 Gradients& g) {
  check_rows(p, d, first, p.batch);
  const std::int64_t L = p.layers(), B = p.batch;
  std::vector<std::vector<double>> z, a;
  forward(p, params, d, first, B, z, a);
  const double value = cross_entropy(p, a.back(), d, first, B);
  g.w.assign(std::size_t(L), {});
  g.b.assign(std::size_t(L), {});
  // G_L = (softmax - onehot) / B
  std::vector<double> delta = a.back();
  const std::int64_t classes = p.widths.back();
  for (std::int64_t r = 0; r < B; ++r)
    delta[std::size_t(r * classes + d.label[std::size_t(first + r)])] -= 1.0;
  for (auto& v : delta) v /= double(B);
  for (std::int64_t l = L; l >= 1; --l) {
    const std::int64_t in = p.widths[std::size_t(l - 1)], out = p.widths[std::size_t(l)];
    const auto& prev = a[std::size_t(l - 1)];
    auto& dW = g.w[std::size_t(l - 1)];
    auto& db = g.b[std::size_t(l - 1)];
    dW.assign(std::size_t(in * out), 0.0);
    db.assign(std::size_t(out), 0.0);
    for (std::int64_t r = 0; r < B; ++r) {  // dW = A_{l-1}^T G_l, db = column sums of G_l
      const double* gr = &delta[std::size_t(r * out)];
      for (std::int64_t k = 0; k < in; ++k) {
        const double x = prev[std::size_t(r * in + k)];
        double* row = &dW[std::size_t(k * out)];
        for (std::int64_t c = 0; c < out; ++c) row[c] += x * gr[c];
      }
      for (std::int64_t c = 0; c < out; ++c) db[std::size_t(c)] += gr[c];
    }
    if (l == 1) break;
    // G_{l-1} = (G_l W_l^T) .* act'(Z_{l-1})
    const auto& W = params.w[std::size_t(l - 1)];
    const auto& zp = z[std::size_t(l - 1)];
    std::vector<double> next(std::size_t(B * in), 0.0);
    for (std::int64_t r = 0; r < B; ++r)
      for (std::int64_t k = 0; k < in; ++k) {
        double s = 0;
        const double* wk = &W[std::size_t(k * out)];
        const double* gr = &delta[std::size_t(r * out)];
        for (std::int64_t c = 0; c < out; ++c) s += gr[c] * wk[c];
        next[std::size_t(r * in + k)] = s * act_grad(p.act, zp[std::size_t(r * in + k)]);
      }
    delta.swap(next);
  }
  return value;
}

double step(const Problem& p, Params<double>& params, const Data& d, std::int64_t first) {
  Gradients g;
  const double value = gradients(p, params, d, first, g);
  for (std::size_t l = 0; l < g.w.size(); ++l) {
    for (std::size_t i = 0; i < g.w[l].size(); ++i) params.w[l][i] -= p.lr * g.w[l][i];
    for (std::size_t i = 0; i < g.b[l].size(); ++i) params.b[l][i] -= p.lr * g.b[l][i];
  }
  return value;
}

double accuracy(const Problem& p, const Params<double>& params, const Data& d, std::int64_t first,
                std::int64_t n) {
  check_rows(p, d, first, n);
  std::vector<std::vector<double>> z, a;
  forward(p, params, d, first, n, z, a);
  const std::int64_t out = p.widths.back();
  std::int64_t right = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    const double* ar = &a.back()[std::size_t(r * out)];
    right += std::max_element(ar, ar + out) - ar == d.label[std::size_t(first + r)];
  }
  return double(right) / double(n);
}

}  // namespace pb::mlp
