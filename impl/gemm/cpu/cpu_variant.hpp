#pragma once
// Shared part of the CPU variants: the inputs stay in host memory owned by the
// Case; the output is poisoned with NaN in prepare() so an element the
// variant never writes fails verification.
#include <limits>

#include "gemm/gemm.hpp"

namespace pb::gemm {

template <class T>
class CpuVariant : public Variant<T> {
 public:
  void prepare(const Problem& p, const Inputs<T>& in) override {
    p_ = p;
    in_ = &in;
    out_.assign(p.c_elems(), std::numeric_limits<T>::quiet_NaN());
  }
  void result(std::vector<T>& out) override { out = out_; }

 protected:
  Problem p_;
  const Inputs<T>* in_ = nullptr;
  std::vector<T> out_;
};

}  // namespace pb::gemm
