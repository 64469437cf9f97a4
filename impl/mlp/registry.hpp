#pragma once
// THE list of MLP variants: one per GEMM family variant that can be a backend
// (gemm::Variant::computes_for_caller()), named after it, with its knob and its place as
// the baseline; adding a backend to the GEMM family adds it here.
#include <mutex>
#include <vector>

#include "core/family.hpp"
#include "mlp/mlp.hpp"

namespace pb::mlp {

using Entry = pb::Entry<Variant>;
const std::vector<Entry>& registry();

// One problem's inputs and reference step, shared by every variant that runs
// it (pb::shared_case in core/family.hpp keeps the last one).

// The weights after one reference step from the start, and its loss.
struct StepResult {
  Params<double> weights;
  double loss = 0;
};

class Case : public CaseBase<Problem, Inputs, StepResult> {
 public:
  // The reference is double whatever the backend's precision.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.widths == b.widths && a.batch == b.batch && a.act == b.act && a.lr == b.lr && a.mnist == b.mnist;
  }
  Case(const Problem& p, std::uint64_t base_seed) : CaseBase(p, base_seed, make_inputs(p, base_seed)) {}
  const Params<double>& reference() { return step_result().weights; }
  double reference_loss() { return step_result().loss; }

 private:
  const StepResult& step_result() {
    return reference_once([&](StepResult& r) {
      r.weights = inputs.start;
      r.loss = step(problem, r.weights, inputs.data, 0);
    });
  }
};

// The MLP Job: a registry entry's variant on one problem, one SGD step per
// run, verified against the reference step. Counters: samples per second
// (batch / step time), GFLOPS of the step's GEMMs, gemm_share (the fraction of
// a step spent in GEMM calls, from an untimed profiling pass), and the
// batch's loss.

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
  Work work() const override {
    Work w;
    w.items = double(problem_.batch);
    w.bytes = problem_.gemm_bytes();
    w.flops = problem_.gemm_flops();
    return w;
  }
  void report(Counters& out, double, std::int64_t) override {
    out.emplace_back("gemm_share", share_);
    out.emplace_back("loss", loss_);
  }

 private:
  double loss_ = 0, share_ = 0;
};

}  // namespace pb::mlp
