#pragma once
// CPU sorting variants. Each copies its input into working storage inside the
// timed run (a sort that leaves its input untouched pays that copy; all of
// them do, so they compare fairly) and keeps the result for result().
#include <memory>

#include "sort/sort.hpp"

namespace pb::sort {

class CpuSort : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p, in_ = &in;
    out_.keys.assign(std::size_t(p.n), 0);
    out_.values.assign(p.pairs() ? std::size_t(p.n) : 0, 0);
  }
  void reset() override {}
  void result(Output& out) override { out = out_; }

 protected:
  Problem p_;
  const Inputs* in_ = nullptr;
  Output out_;
};

}  // namespace pb::sort
