#pragma once
// The GEMM Job: a registry entry's variant on one problem, checked against the
// oracle, reporting GFLOP/s.
#include <cstdint>
#include <vector>

#include "core/family.hpp"
#include "gemm/case.hpp"
#include "gemm/registry.hpp"

namespace pb::gemm {

template <class T>
class Job final : public VariantJob<Entry<T>, Variant<T>, Problem, Case<T>> {
 public:
  using VariantJob<Entry<T>, Variant<T>, Problem, Case<T>>::VariantJob;
  Check check() override {
    std::vector<T> out;
    this->variant_->result(out);
    return this->verdict([&] { return this->case_->oracle().check(out); });
  }
  void report(Counters& out, double seconds, std::int64_t iterations) override {
    const double flops = this->problem_.flops();
    out.emplace_back("GFLOPS", seconds > 0 ? flops * iterations / seconds * 1e-9 : 0.0);
    out.emplace_back("flops_per_call", flops);
    const double ab = this->problem_.prec == Precision::BF16 ? 2.0 : double(sizeof(T));
    out.emplace_back("bytes_per_call", this->problem_.min_bytes(ab, double(sizeof(T))));
  }
};

}  // namespace pb::gemm
