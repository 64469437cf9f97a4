#pragma once
// The training step on the host in T (float or double), its three GEMM forms
// computed by a GEMM family variant used as a backend (gemm::Variant::compute):
// every CPU GEMM variant (Naive, OMP, OpenBLAS) trains the network this way.
// The element-wise work (bias, activation, softmax, loss, bias gradients,
// update) runs in OpenMP loops beside it.
#include <memory>
#include <vector>

#include "gemm/gemm.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {

template <class T>
class HostStep {
 public:
  // `gemm` must have computes_for_caller() true; its bind() is called here.
  HostStep(const Problem& p, std::unique_ptr<gemm::Variant<T>> gemm, int threads);
  void set_params(const Params<double>& params);  // rounded to T
  Params<double> params() const;                  // widened to double
  // The batch the steps train on: rows first .. first + batch - 1 of d, in T
  // (untimed; a timed step starts from it).
  void set_batch(const Data& d, std::int64_t first);
  // One SGD step on the batch; returns its loss before the update.
  double step();
  double step(const Data& d, std::int64_t first);  // set_batch, then step
  // Time the GEMM calls of the following steps apart (wall clock).
  void profile(bool on) { profile_ = on, gemm_seconds_ = 0; }
  double gemm_seconds() const { return gemm_seconds_; }

 private:
  Problem p_;
  std::unique_ptr<gemm::Variant<T>> gemm_;
  int threads_;
  bool profile_ = false;
  double gemm_seconds_ = 0;
  void product(const gemm::Problem& p, const T* a, const T* b, const T* c, T* out);
  std::vector<std::vector<T>> w_, b_;   // per layer
  std::vector<std::vector<T>> a_, z_;   // activations a[0..L] and pre-activations z[1..L]
  std::vector<std::vector<T>> dw_;      // weight gradients
  std::vector<int> labels_;             // the batch's labels
  std::vector<T> delta_, next_, zero_;  // G_l, G_{l-1}, the +C of A*B^T (zeros)
};

}  // namespace pb::mlp
