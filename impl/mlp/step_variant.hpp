#pragma once
// What the MLP variants share around their training step (HostStep<T> on the
// CPU, DeviceStep<T> on the GPU): prepare() builds the step in the problem's
// precision and hands it the batch once (untimed); reset() puts back the first
// weights; result() reads the weights after the step. A Step<T> has
// set_batch(data, first), set_params(params) and params().
#include <memory>

#include "mlp/mlp.hpp"

namespace pb::mlp {

template <template <class> class Step>
class StepVariant : public Variant {
 public:
  void reset() override {
    with([&](auto& s) { s.set_params(in_->start); });
  }
  Params<double> result() override {
    return with([](auto& s) { return s.params(); });
  }
  double loss() const override { return loss_; }

 protected:
  // make(T{}) builds the Step<T> for p's precision T.
  template <class Make>
  void build(const Problem& p, const Inputs& in, Make&& make) {
    in_ = &in;
    f_.reset(), d_.reset();
    if (p.f64)
      d_ = make(double{});
    else
      f_ = make(float{});
    with([&](auto& s) { s.set_batch(in.data, 0); });  // the input in T, once, untimed
  }
  bool built() const { return f_ || d_; }
  // fn(the step), whichever precision it was built in.
  template <class F>
  decltype(auto) with(F&& fn) {
    return d_ ? fn(*d_) : fn(*f_);
  }

  const Inputs* in_ = nullptr;
  double loss_ = 0;

 private:
  std::unique_ptr<Step<float>> f_;
  std::unique_ptr<Step<double>> d_;
};

}  // namespace pb::mlp
