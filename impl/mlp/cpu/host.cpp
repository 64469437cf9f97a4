// The MLP variants on the host: HostStep in the problem's precision on one of
// the GEMM family's CPU variants (by name, with the instance's knob), the
// element-wise work on the knob's thread count.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "mlp/cpu/host_step.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {
namespace {

class Host final : public StepVariant<HostStep> {
 public:
  Host(std::string gemm, Knobs k) : gemm_(std::move(gemm)), knobs_(k) {}
  Support supports(const Problem& p) const override {
    if (knobs_.threads < 1) return Support::no("threads must be >= 1");
    return gemm_supports(p, gemm_, knobs_);  // the GEMM variant must take every shape of the step
  }
  void prepare(const Problem& p, const Inputs& in) override {
    build(p, in, [&](auto t) {
      using T = decltype(t);
      return std::make_unique<HostStep<T>>(p, make_gemm<T>(gemm_, knobs_), knobs_.threads);
    });
  }
  void run() override {
    loss_ = with([](auto& s) { return s.step(); });
  }
  double gemm_share() override {
    reset();
    with([](auto& s) { s.profile(true); });
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double all = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double g = with([](auto& s) { return s.gemm_seconds(); });
    with([](auto& s) { s.profile(false); });
    return all > 0 ? g / all : 0.0;
  }

 private:
  std::string gemm_;
  Knobs knobs_;
};

}  // namespace

std::unique_ptr<Variant> make_host(const std::string& gemm, const Knobs& k) {
  return std::make_unique<Host>(gemm, k);
}

}  // namespace pb::mlp
