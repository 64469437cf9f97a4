// The MLP variants on the host: HostStep in the problem's precision on one of
// the GEMM family's CPU variants (by name, with the instance's knob), the
// element-wise work on the knob's thread count.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "gemm/registry.hpp"
#include "mlp/host_step.hpp"

namespace pb::mlp {
namespace {

template <class T>
std::unique_ptr<gemm::Variant<T>> make_gemm(const std::string& name, const Knobs& k) {
  for (const auto& e : gemm::registry<T>())
    if (name == e.name) return e.make(k);
  throw std::logic_error("no GEMM variant " + name);
}

class Host final : public Variant {
 public:
  Host(std::string gemm, Knobs k) : gemm_(std::move(gemm)), knobs_(k) {}
  Support supports(const Problem& p) const override {
    if (knobs_.threads < 1) return Support::no("threads must be >= 1");
    for (std::int64_t l = 1; l <= p.layers(); ++l) {  // the GEMM variant must take every shape of the step
      const std::int64_t in = p.widths[std::size_t(l - 1)], out = p.widths[std::size_t(l)];
      for (const gemm::Problem& g :
           {gemm::Problem{gemm::Op::AB, p.batch, out, in}, gemm::Problem{gemm::Op::AtB, in, out, p.batch},
            gemm::Problem{gemm::Op::ABtC, p.batch, in, out}}) {
        const Support s = p.f64 ? make_gemm<double>(gemm_, knobs_)->supports(g)
                                : make_gemm<float>(gemm_, knobs_)->supports(g);
        if (!s.ok()) return s;
      }
    }
    return Support::yes();
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
