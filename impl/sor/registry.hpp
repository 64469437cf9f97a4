#pragma once
// THE list of SOR variants; benchmarks and tests iterate over it. Adding one
// touches its file, one line (and its factory's declaration) in registry.cpp
// and one source name in CMakeLists.txt.
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/family.hpp"
#include "sor/sor.hpp"

namespace pb::sor {

using Entry = pb::Entry<Variant>;

const std::vector<Entry>& registry();

// One problem's inputs and reference field, shared by every variant that runs
// it (pb::shared_case in core/family.hpp keeps the last one).

class Case : public CaseBase<Problem, Inputs, std::vector<double>> {
 public:
  // Problems with the same inputs and reference share a Case.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.m == b.m && a.n == b.n && a.sweeps == b.sweeps && a.omega == b.omega && a.field == b.field &&
           a.h1 == b.h1 && a.h2 == b.h2;
  }
  Case(const Problem& p, std::uint64_t base_seed) : CaseBase(p, base_seed, make_inputs(p, base_seed)) {}
  // The field after p.sweeps sweeps with every core (bitwise the one-thread
  // result, sor.hpp).
  const std::vector<double>& reference() {
    return reference_once([&](std::vector<double>& r) {
      r = inputs.u0;
      solve(problem, r, 0);
    });
  }
};

// The SOR Job: a registry entry's variant on one problem, verified against the
// reference field. Counters: point updates per second; GBps by the least
// traffic of a half-sweep in the natural layout's model: it reads the points
// it updates and their other-colour neighbours and writes the points it
// updates, 8 B x (interior + interior / 2), so 24 B per interior point per
// sweep (a variant that keeps data on chip across half-sweeps can beat it);
// and the residual of the final field.

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
  Work work() const override {
    const double sweeps = double(problem_.sweeps);
    Work w;
    w.items = sweeps * double(problem_.interior());
    w.bytes = sweeps * bytes_per_sweep(problem_);
    w.flops = sweeps * kFlopsPerUpdate * double(problem_.interior());
    return w;
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    out.emplace_back("residual", residual_);
    add_comm_counters(out, comm_, runs ? seconds / double(runs) : 0.0);
  }

 private:
  double residual_ = 0;
  CommProfile comm_;
};

}  // namespace pb::sor
