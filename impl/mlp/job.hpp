#pragma once
// The MLP Job: a registry entry's variant on one problem, one SGD step per
// run, verified against the reference step. Counters: samples per second
// (batch / step time), GFLOPS of the step's GEMMs, gemm_share (the fraction of
// a step spent in GEMM calls, from an untimed profiling pass), and the
// batch's loss.
#include "core/family.hpp"
#include "mlp/case.hpp"
#include "mlp/registry.hpp"
#include "mlp/verify.hpp"

namespace pb::mlp {

class Job final : public VariantJob<Entry, Variant, Problem, Case> {
 public:
  using VariantJob::VariantJob;
  void reset() override { variant_->reset(); }
  Check check() override {
    Check c = verdict(
        [&] { return verify(problem_, case_->inputs.start, case_->reference(), variant_->result()); });
    if (c.passed) {
      loss_ = variant_->loss();
      share_ = variant_->gemm_share();
      variant_->reset();
    }
    return c;
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    const double per_run = runs ? seconds / double(runs) : 0.0;
    out.emplace_back("samples_per_second", per_run > 0 ? double(problem_.batch) / per_run : 0.0);
    out.emplace_back("GFLOPS", per_run > 0 ? problem_.gemm_flops() / per_run * 1e-9 : 0.0);
    out.emplace_back("flops_per_call", problem_.gemm_flops());
    out.emplace_back("bytes_per_call", problem_.gemm_bytes());
    out.emplace_back("gemm_share", share_);
    out.emplace_back("loss", loss_);
  }

 private:
  double loss_ = 0, share_ = 0;
};

}  // namespace pb::mlp
