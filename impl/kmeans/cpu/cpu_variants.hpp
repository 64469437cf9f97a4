#pragma once
#include <memory>
#include <vector>

#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

// State every CPU variant keeps: the problem, the inputs (owned by the Case),
// the result being built, and each point's distance from the last assignment.
class CpuKMeans : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p, in_ = &in;
    best_d_.assign(p.n, 0.0);
  }
  void reset() override {
    out_.assign.assign(p_.n, -1);
    out_.centroids = in_->init;
    out_.iterations = 0;
  }
  void result(Result& out) override {
    out = out_;
    out.inertia = 0;
    for (double v : best_d_) out.inertia += v;
  }

 protected:
  Problem p_;
  const Inputs* in_ = nullptr;
  Result out_;
  std::vector<double> best_d_;
};

// Call from inside a parallel region of nt threads after every thread filled
// its slice t of S (nt x K x D) and Cnt (nt x K): adds the slices into slice 0
// in thread order, work split over the team. Ends with the team's barrier.
void merge_partials(double* S, std::int64_t* Cnt, std::int64_t k, std::int64_t d, int nt);
}  // namespace pb::kmeans
