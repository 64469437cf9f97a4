#pragma once
// THE list of k-means variants; benchmarks and tests iterate over it. Adding
// one touches its file, one line (and its factory's declaration) in
// registry.cpp and one source name in CMakeLists.txt.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/family.hpp"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

struct Traits {
  // Runs type f32 problems (and reports Result::last_start); the others are
  // unsupported there, and a profile lists their f32 instances only when
  // --kmeans-type asks for f32.
  bool single = false;
};

using Entry = pb::Entry<Variant, Traits>;

const std::vector<Entry>& registry();

#ifdef PARBENCH_WITH_NCCL
// The NCCL library's version ("2.27.7"), for the JSON context.
std::string nccl_version();
#endif

// One problem's inputs and reference result, shared by every variant that
// runs it (pb::shared_case in core/family.hpp keeps the last one).

class Case : public CaseBase<Problem, Inputs, Result> {
 public:
  // Problems with the same inputs and reference share a Case.
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.n == b.n && a.d == b.d && a.k == b.k && a.dist == b.dist && a.type == b.type &&
           a.crit.fixed == b.crit.fixed && a.crit.loops == b.crit.loops &&
           a.crit.max_iter == b.crit.max_iter && a.crit.min_changes == b.crit.min_changes &&
           a.crit.precision == b.crit.precision;
  }
  Case(const Problem& p, std::uint64_t base_seed) : CaseBase(p, base_seed, make_inputs(p, base_seed)) {}
  // The reference result with every core (bitwise the sequential result, see
  // kmeans.hpp). Single-precision problems have none: their runs are checked
  // on their last step (check_last_step).
  const Result& reference() {
    return reference_once([&](Result& r) { lloyd(problem, inputs, 0, r); });
  }
};

// The k-means Job: a registry entry's variant on one problem, checked against
// the reference (same assignment and iteration count), reporting time per
// Lloyd iteration, GB/s by one read of the points (work()), and the host/device split.

class Job final : public VariantJob<Entry, Variant, Problem, Case> {
 public:
  using VariantJob::VariantJob;
  Support supports() override {
    Support s = VariantJob::supports();
    if (s.ok() && problem_.type == Type::F32 && !entry_.traits.single)
      return Support::no("type f32: a single-precision variant only");
    return s;
  }
  void reset() override { variant_->reset(); }
  Check check() override {
    Result r;
    variant_->result(r);
    iterations_ = r.iterations;
    inertia_ = r.inertia;
    Check c = verdict([&] {
      return problem_.type == Type::F32 ? check_last_step(problem_, case_->inputs, r, &ties_)
                                        : compare(problem_, case_->reference(), r);
    });
    if (c.passed) comm_ = variant_->communication();
    return c;
  }
  // Per Lloyd iteration (the unit of the family's Throughput), times the run's iterations.
  Work work() const override {
    Work w;
    // The least any variant moves: every point read once an iteration.
    const double word = problem_.type == Type::F32 ? sizeof(float) : sizeof(double);
    w.bytes = double(problem_.n) * double(problem_.d) * word;
    // The work of the direct form: a difference, a product and a sum per
    // point, centre and dimension, and each point added into its centre's sum.
    const double n = double(problem_.n), d = double(problem_.d), k = double(problem_.k);
    w.flops = 3.0 * n * k * d + n * d;
    w.units = iterations_;
    return w;
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    const auto b = variant_->breakdown();               // of the last timed run
    out.emplace_back("lloyd_iterations", iterations_);  // "iterations" is Google Benchmark's own field
    out.emplace_back("seconds_per_iteration", runs && iterations_ ? seconds / runs / iterations_ : 0.0);
    out.emplace_back("inertia", inertia_);
    if (problem_.type == Type::F32) {
      out.emplace_back("near_ties", double(ties_.points));
      out.emplace_back("tie_gap_of_bound", ties_.worst);
    }
    // The device phases only where there is a device: a CPU variant's whole
    // run is host compute, and a "0 s" copy time would read as a measurement.
    if (on_gpu(entry_.backend)) {
      out.emplace_back("h2d_s", b.h2d);
      out.emplace_back("kernel_s", b.kernel);
      out.emplace_back("d2h_s", b.d2h);
    }
    out.emplace_back("host_s", !on_gpu(entry_.backend) && runs ? seconds / runs : b.host);
    add_comm_counters(out, comm_, runs ? seconds / double(runs) : 0.0);
  }

 private:
  int iterations_ = 0;
  double inertia_ = 0;
  Ties ties_;  // single precision: the last step's near ties
  CommProfile comm_;
};

}  // namespace pb::kmeans
