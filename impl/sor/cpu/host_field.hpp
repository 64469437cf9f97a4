#pragma once
// What the CPU SOR variants share: the constants, the field in host memory,
// the untimed reset to the start and the result (the CUDA ones share
// cuda/device_field.cuh).
#include <vector>

#include "sor/sor.hpp"

namespace pb::sor {

class HostField : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override { c_ = consts(p), sweeps_ = p.sweeps, in_ = &in; }
  void reset() override { u_ = in_->u0; }
  void result(std::vector<double>& u) override { u = u_; }

 protected:
  Consts c_{};
  int sweeps_ = 0;
  const Inputs* in_ = nullptr;
  std::vector<double> u_;
};

}  // namespace pb::sor
