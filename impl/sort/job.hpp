#pragma once
// The sorting Job: a registry entry's variant on one problem, verified against
// the reference permutation (and its stability where the variant claims it).
// Counters: elements_per_second, and GBps counting each key (and value) read
// once and written once, the least any sort moves (for fraction-of-ceiling).
#include <cstdint>

#include "core/family.hpp"
#include "sort/case.hpp"
#include "sort/registry.hpp"
#include "sort/verify.hpp"

namespace pb::sort {

class Job final : public VariantJob<Entry, Variant, Problem, Case> {
 public:
  using VariantJob::VariantJob;
  void reset() override { variant_->reset(); }
  Check check() override {
    Output out;
    variant_->result(out);
    return verdict([&] { return verify(problem_, case_->inputs, case_->ref(), out, variant_->stable()); });
  }
  void report(Counters& out, double seconds, std::int64_t runs) override {
    const double per_run = runs ? seconds / double(runs) : 0.0;
    const double n = double(problem_.n);
    out.emplace_back("elements_per_second", per_run > 0 ? n / per_run : 0.0);
    const double bytes = 2.0 * n * (problem_.pairs() ? 8.0 : 4.0);
    out.emplace_back("GBps", per_run > 0 ? bytes / per_run * 1e-9 : 0.0);
  }
};

}  // namespace pb::sort
