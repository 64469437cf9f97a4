// The MLP variants on the host: HostStep in the problem's precision on one of
// the GEMM family's CPU variants (by name, with the instance's knob), the
// element-wise work on the knob's thread count.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "mlp/backend.hpp"
#include "mlp/host_step.hpp"

namespace pb::mlp {
namespace {

class Host final : public Variant {
 public:
  Host(std::string gemm, Knobs k) : gemm_(std::move(gemm)), knobs_(k) {}
  Support supports(const Problem& p) const override {
    if (knobs_.threads < 1) return Support::no("threads must be >= 1");
    return gemm_supports(p, gemm_, knobs_);  // the GEMM variant must take every shape of the step
  }
  void prepare(const Problem& p, const Inputs& in) override {
    in_ = &in;
    if (p.f64)
      d_ = std::make_unique<HostStep<double>>(p, make_gemm<double>(gemm_, knobs_), knobs_.threads);
    else
      f_ = std::make_unique<HostStep<float>>(p, make_gemm<float>(gemm_, knobs_), knobs_.threads);
    d_ ? d_->set_batch(in.data, 0) : f_->set_batch(in.data, 0);  // the input in T, once, untimed
  }
  void reset() override { d_ ? d_->set_params(in_->start) : f_->set_params(in_->start); }
  void run() override { loss_ = d_ ? d_->step() : f_->step(); }
  Params<double> result() override { return d_ ? d_->params() : f_->params(); }
  double loss() const override { return loss_; }
  double gemm_share() override {
    reset();
    d_ ? d_->profile(true) : f_->profile(true);
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double all = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double g = d_ ? d_->gemm_seconds() : f_->gemm_seconds();
    d_ ? d_->profile(false) : f_->profile(false);
    return all > 0 ? g / all : 0.0;
  }

 private:
  std::string gemm_;
  Knobs knobs_;
  const Inputs* in_ = nullptr;
  std::unique_ptr<HostStep<float>> f_;
  std::unique_ptr<HostStep<double>> d_;
  double loss_ = 0;
};

}  // namespace

std::unique_ptr<Variant> make_host(const std::string& gemm, const Knobs& k) {
  return std::make_unique<Host>(gemm, k);
}

}  // namespace pb::mlp
