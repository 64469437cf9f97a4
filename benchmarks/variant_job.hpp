#pragma once
// The Job every family registers: one registry entry's variant, built with
// its knob, bound to a problem and to the shared Case (inputs and reference)
// that FetchCase returns for it. Families add check() and report(), and
// reset() where their variants have one.
#include <cstdint>
#include <memory>

#include "core/job.hpp"
#include "core/knobs.hpp"

namespace pb {

template <class EntryT, class VariantT, class ProblemT, class CaseT,
          std::shared_ptr<CaseT> (*FetchCase)(const ProblemT&, std::uint64_t)>
class VariantJob : public Job {
 public:
  VariantJob(const EntryT& e, Knobs k, ProblemT p, std::uint64_t seed)
      : entry_(e), knobs_(k), problem_(p), seed_(seed) {}
  Backend backend() const override { return entry_.backend; }
  Support supports() override {
    variant_ = entry_.make(knobs_);
    return variant_->supports(problem_);
  }
  void prepare() override {
    case_ = FetchCase(problem_, seed_);
    variant_->prepare(problem_, case_->inputs);
  }
  void run() override { variant_->run(); }
  void* cuda_stream() override { return variant_->stream(); }

 protected:
  const EntryT& entry_;
  Knobs knobs_;
  ProblemT problem_;
  std::uint64_t seed_;
  std::unique_ptr<VariantT> variant_;
  std::shared_ptr<CaseT> case_;
};

}  // namespace pb
