#include "mlp/cpu/host_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace pb::mlp {

template <class T>
HostStep<T>::HostStep(const Problem& p, std::unique_ptr<gemm::Variant<T>> gemm, int threads)
    : p_(p), gemm_(std::move(gemm)), threads_(threads) {
  validate(p_);
  if (!gemm_ || !gemm_->computes_for_caller())
    throw std::logic_error("HostStep needs a GEMM variant that is a backend");
  if (threads_ < 1) throw std::invalid_argument("HostStep: threads must be >= 1");
  gemm_->bind();
  const std::int64_t L = p_.layers(), B = p_.batch;
  a_.resize(std::size_t(L + 1));
  z_.resize(std::size_t(L + 1));
  dw_.resize(std::size_t(L));
  std::int64_t widest = 0;
  for (std::int64_t l = 0; l <= L; ++l) {
    const std::int64_t w = p_.widths[std::size_t(l)];
    widest = std::max(widest, w);
    a_[std::size_t(l)].resize(std::size_t(B * w));
    if (l > 0) {
      z_[std::size_t(l)].resize(std::size_t(B * w));
      dw_[std::size_t(l - 1)].resize(std::size_t(p_.widths[std::size_t(l - 1)] * w));
    }
  }
  delta_.resize(std::size_t(B * widest));
  next_.resize(std::size_t(B * widest));
  zero_.assign(std::size_t(B * widest), T(0));
}

template <class T>
void HostStep<T>::set_params(const Params<double>& params) {
  w_.clear(), b_.clear();
  for (std::size_t l = 0; l < params.w.size(); ++l) {
    w_.emplace_back(params.w[l].begin(), params.w[l].end());
    b_.emplace_back(params.b[l].begin(), params.b[l].end());
  }
}

template <class T>
Params<double> HostStep<T>::params() const {
  Params<double> out;
  for (std::size_t l = 0; l < w_.size(); ++l) {
    out.w.emplace_back(w_[l].begin(), w_[l].end());
    out.b.emplace_back(b_[l].begin(), b_[l].end());
  }
  return out;
}

template <class T>
void HostStep<T>::product(const gemm::Problem& p, const T* a, const T* b, const T* c, T* out) {
  if (!profile_) return gemm_->compute(p, a, b, c, out);
  const auto t0 = std::chrono::steady_clock::now();
  gemm_->compute(p, a, b, c, out);
  gemm_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
void HostStep<T>::set_batch(const Data& d, std::int64_t first) {
  const std::int64_t B = p_.batch;
  if (d.features != p_.widths.front() || d.classes != p_.widths.back() || first < 0 || first + B > d.n)
    throw std::invalid_argument("HostStep: the batch is not in the data, or the data is of another shape");
  labels_.assign(d.label.begin() + first, d.label.begin() + first + B);
  for (int y : labels_)
    if (y < 0 || y >= d.classes)
      throw std::invalid_argument("HostStep: label " + std::to_string(y) + " out of range");
  auto& x = a_[0];
  for (std::int64_t i = 0; i < B * d.features; ++i)
    x[std::size_t(i)] = T(d.x[std::size_t(first * d.features + i)]);
}

template <class T>
double HostStep<T>::step(const Data& d, std::int64_t first) {
  set_batch(d, first);
  return step();
}

template <class T>
double HostStep<T>::step() {
  const std::int64_t L = p_.layers(), B = p_.batch;
  if (std::int64_t(w_.size()) != L) throw std::logic_error("HostStep: set_params first");
  if (std::int64_t(labels_.size()) != B) throw std::logic_error("HostStep: set_batch first");
  const int nt = threads_;
  const bool sigmoid = p_.act == Activation::Sigmoid;
  // Forward: Z_l = A_{l-1} W_l (GEMM AB), + b_l, activation (softmax at the top).
  for (std::int64_t l = 1; l <= L; ++l) {
    const std::int64_t in = p_.widths[std::size_t(l - 1)], out = p_.widths[std::size_t(l)];
    auto& z = z_[std::size_t(l)];
    auto& a = a_[std::size_t(l)];
    const auto& b = b_[std::size_t(l - 1)];
    product({gemm::Op::AB, B, out, in}, a_[std::size_t(l - 1)].data(), w_[std::size_t(l - 1)].data(), nullptr,
            z.data());
    const bool top = l == L;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t r = 0; r < B; ++r) {
      T* zr = &z[std::size_t(r * out)];
      T* ar = &a[std::size_t(r * out)];
      for (std::int64_t c = 0; c < out; ++c) zr[c] += b[std::size_t(c)];
      if (!top) {
        for (std::int64_t c = 0; c < out; ++c)
          ar[c] = sigmoid ? T(1) / (T(1) + std::exp(-zr[c])) : std::max(zr[c], T(0));
      } else {
        const T mx = *std::max_element(zr, zr + out);
        T sum = 0;
        for (std::int64_t c = 0; c < out; ++c) sum += (ar[c] = std::exp(zr[c] - mx));
        for (std::int64_t c = 0; c < out; ++c) ar[c] /= sum;
      }
    }
  }
  // Loss, and G_L = (softmax - onehot) / B.
  const std::int64_t classes = p_.widths.back();
  double value = 0;
  const auto& prob = a_[std::size_t(L)];
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+ : value)
  for (std::int64_t r = 0; r < B; ++r) {
    const int y = labels_[std::size_t(r)];
    value -= std::log(std::max(double(prob[std::size_t(r * classes + y)]), 1e-300));
    for (std::int64_t c = 0; c < classes; ++c)
      delta_[std::size_t(r * classes + c)] = (prob[std::size_t(r * classes + c)] - T(c == y ? 1 : 0)) / T(B);
  }
  value /= double(B);
  for (std::int64_t l = L; l >= 1; --l) {
    const std::int64_t in = p_.widths[std::size_t(l - 1)], out = p_.widths[std::size_t(l)];
    auto& W = w_[std::size_t(l - 1)];
    auto& b = b_[std::size_t(l - 1)];
    auto& dW = dw_[std::size_t(l - 1)];
    // dW_l = A_{l-1}^T G_l (GEMM AtB: A is K x M = B x in).
    product({gemm::Op::AtB, in, out, B}, a_[std::size_t(l - 1)].data(), delta_.data(), nullptr, dW.data());
    if (l > 1) {
      // G_{l-1} = (G_l W_l^T) .* act'(Z_{l-1}) (GEMM ABtC with C = 0), before W_l changes.
      product({gemm::Op::ABtC, B, in, out}, delta_.data(), W.data(), zero_.data(), next_.data());
      const auto& zp = z_[std::size_t(l - 1)];
      const auto& ap = a_[std::size_t(l - 1)];
#pragma omp parallel for num_threads(nt) schedule(static)
      for (std::int64_t i = 0; i < B * in; ++i) {
        const T g = sigmoid ? ap[std::size_t(i)] * (T(1) - ap[std::size_t(i)])
                            : (zp[std::size_t(i)] > 0 ? T(1) : T(0));
        next_[std::size_t(i)] *= g;
      }
    }
    // Bias gradient (column sums of G_l) and the update.
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t c = 0; c < out; ++c) {
      T s = 0;
      for (std::int64_t r = 0; r < B; ++r) s += delta_[std::size_t(r * out + c)];
      b[std::size_t(c)] -= T(p_.lr) * s;
    }
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t i = 0; i < in * out; ++i) W[std::size_t(i)] -= T(p_.lr) * dW[std::size_t(i)];
    if (l > 1) delta_.swap(next_);
  }
  return value;
}

template class HostStep<float>;
template class HostStep<double>;

}  // namespace pb::mlp
