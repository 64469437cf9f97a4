#pragma once
// The SOR Job: a registry entry's variant on one problem, verified against the
// reference field. Counters: point updates per second; GBps by the least
// traffic of a half-sweep in the natural layout's model: it reads the points
// it updates and their other-colour neighbours and writes the points it
// updates, 8 B x (interior + interior / 2), so 24 B per interior point per
// sweep (a variant that keeps data on chip across half-sweeps can beat it);
// and the residual of the final field.
#include <cstdint>

#include "core/family.hpp"
#include "sor/case.hpp"
#include "sor/registry.hpp"
#include "sor/verify.hpp"

namespace pb::sor {

inline double bytes_per_sweep(const Problem& p) { return 24.0 * double(p.interior()); }

class Job final : public VariantJob<Entry, Variant, Problem, Case> {
 public:
  using VariantJob::VariantJob;
  void reset() override { variant_->reset(); }
  Check check() override {
    std::vector<double> u;
    variant_->result(u);
    Check c = verdict([&] { return verify(problem_, case_->inputs.u0, case_->reference(), u); });
    if (c.passed) {
      residual_ = residual(problem_, u);
      comm_ = variant_->communication();
      variant_->reset();
    }
    return c;
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    const double per_run = runs ? seconds / double(runs) : 0.0;
    const double sweeps = double(problem_.sweeps);
    out.emplace_back("updates_per_second",
                     per_run > 0 ? sweeps * double(problem_.interior()) / per_run : 0.0);
    out.emplace_back("GBps", per_run > 0 ? sweeps * bytes_per_sweep(problem_) / per_run * 1e-9 : 0.0);
    out.emplace_back("flops_per_call", sweeps * kFlopsPerUpdate * double(problem_.interior()));
    out.emplace_back("bytes_per_call", sweeps * bytes_per_sweep(problem_));
    out.emplace_back("residual", residual_);
    add_comm_counters(out, comm_, per_run);
  }

 private:
  double residual_ = 0;
  CommProfile comm_;
};

}  // namespace pb::sor
