#pragma once
// THE list of sorting variants; benchmarks and tests iterate over it. Adding
// one touches its file, one line (and its factory's declaration) in
// registry.cpp and one source name in CMakeLists.txt.
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/family.hpp"
#include "sort/sort.hpp"

namespace pb::sort {

struct Traits {
  bool batched = false;  // sorts many arrays at once (length < total); the others sort one
};

using Entry = pb::Entry<Variant, Traits>;

const std::vector<Entry>& registry();

// One problem's inputs and reference permutation, shared by every variant
// that runs it (pb::shared_case in core/family.hpp keeps the last one).

class Case : public CaseBase<Problem, Inputs, std::vector<std::uint32_t>> {
 public:
  // Problems with the same inputs and reference share a Case: everything but
  // the payload (the reference permutation serves keys-only and pairs alike).
  static bool same_inputs(const Problem& a, const Problem& b) {
    return a.n == b.n && a.length == b.length && a.key == b.key && a.order == b.order && a.dist == b.dist;
  }
  Case(const Problem& p, std::uint64_t base_seed) : CaseBase(p, base_seed, make_inputs(p, base_seed)) {}
  const std::vector<std::uint32_t>& ref() {
    return reference_once([&](std::vector<std::uint32_t>& r) { r = reference(problem, inputs); });
  }
};

// The sorting Job: a registry entry's variant on one problem, verified against
// the reference permutation (and its stability where the variant claims it).
// Counters: elements_per_second, and GBps counting each key (and value) read
// once and written once, the least any sort moves (for fraction-of-ceiling).

class Job final : public VariantJob<Entry, Variant, Problem, Case> {
 public:
  using VariantJob::VariantJob;
  void reset() override { variant_->reset(); }
  Check check() override {
    Output out;
    variant_->result(out);
    return verdict([&] { return verify(problem_, case_->inputs, case_->ref(), out, variant_->stable()); });
  }
  Work work() const override {
    Work w;
    w.items = double(problem_.n);
    w.bytes = 2.0 * w.items * (problem_.pairs() ? 8.0 : 4.0);
    return w;
  }
};

}  // namespace pb::sort
