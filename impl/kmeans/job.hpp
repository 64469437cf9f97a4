#pragma once
// The k-means Job: a registry entry's variant on one problem, checked against
// the reference (same assignment and iteration count), reporting time per
// Lloyd iteration, GB/s by one read of the points, and the host/device split.
#include <cstdint>

#include "core/family.hpp"
#include "kmeans/case.hpp"
#include "kmeans/registry.hpp"
#include "kmeans/verify.hpp"

namespace pb::kmeans {

class Job final : public VariantJob<Entry, Variant, Problem, Case> {
 public:
  using VariantJob::VariantJob;
  void reset() override { variant_->reset(); }
  Check check() override {
    Result r;
    variant_->result(r);
    iterations_ = r.iterations;
    inertia_ = r.inertia;
    Check c = verdict([&] { return compare(problem_, case_->reference(), r); });
    if (c.passed) comm_ = variant_->communication();
    return c;
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    const auto b = variant_->breakdown();               // of the last timed run
    out.emplace_back("lloyd_iterations", iterations_);  // "iterations" is Google Benchmark's own field
    out.emplace_back("seconds_per_iteration", runs && iterations_ ? seconds / runs / iterations_ : 0.0);
    out.emplace_back("inertia", inertia_);
    // The least any variant moves: every point read once an iteration.
    const double bytes = double(problem_.n) * double(problem_.d) * sizeof(double);
    const double per_iteration = runs && iterations_ ? seconds / runs / iterations_ : 0.0;
    out.emplace_back("bytes_per_iteration", bytes);
    // The work of the direct form: a difference, a product and a sum per
    // point, centre and dimension, and each point added into its centre's sum.
    const double n = double(problem_.n), d = double(problem_.d), k = double(problem_.k);
    out.emplace_back("flops_per_iteration", 3.0 * n * k * d + n * d);
    out.emplace_back("GBps", per_iteration > 0 ? bytes / per_iteration * 1e-9 : 0.0);
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
  CommProfile comm_;
};

}  // namespace pb::kmeans
