#pragma once
// Shared part of the TF32 and BF16 variants (Precision): A and B uploaded in
// the format the tensor cores read (float for TF32, bfloat16 for BF16; the
// problem's inputs are exact in it), C in float, the float output poisoned
// with 0xFF bytes (NaN) so an unwritten element fails verification, and the
// variant's own non-blocking stream. Not a backend of the MLP step.
#include <cuda_bf16.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "gemm/gemm.hpp"

namespace pb::gemm {

class TensorVariant : public Variant<float> {
 public:
  Support supports(const Problem& p) const override {
    if (p.prec == Precision::Native) return Support::no("a TF32 / BF16 variant");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs<float>& in) override {
    p_ = p;
    stream_ = std::make_unique<Stream>();
    if (p.prec == Precision::BF16) {
      a16_ = upload_bf16(in.a), b16_ = upload_bf16(in.b);
    } else {
      a32_ = upload(in.a), b32_ = upload(in.b);
    }
    c_ = upload(in.c);
    d_ = DeviceBuffer<float>(p.c_elems());
    PB_CUDA(cudaMemsetAsync(d_.get(), 0xFF, d_.bytes(), s()));
    prepare_device();
    PB_CUDA(cudaStreamSynchronize(s()));
  }
  void result(std::vector<float>& out) override {
    out.resize(d_.size());
    PB_CUDA(cudaMemcpyAsync(out.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaStreamSynchronize(s()));
  }
  void* stream() override { return stream_ ? stream_->get() : nullptr; }

 protected:
  // What prepare() sets up once the operands are on the device (untimed).
  virtual void prepare_device() {}
  cudaStream_t s() const { return stream_->get(); }
  bool bf16() const { return p_.prec == Precision::BF16; }
  // A and B in their tensor-core format: __nv_bfloat16 or float.
  const void* a() const { return bf16() ? static_cast<const void*>(a16_.get()) : a32_.get(); }
  const void* b() const { return bf16() ? static_cast<const void*>(b16_.get()) : b32_.get(); }

  Problem p_;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer<float> a32_, b32_, c_, d_;  // d_: the output (C of AB / AtB, D of ABtC)
  DeviceBuffer<__nv_bfloat16> a16_, b16_;

 private:
  DeviceBuffer<float> upload(const std::vector<float>& v) {
    DeviceBuffer<float> d(v.size());
    if (v.size()) PB_CUDA(cudaMemcpyAsync(d.get(), v.data(), d.bytes(), cudaMemcpyHostToDevice, s()));
    PB_CUDA(cudaStreamSynchronize(s()));  // v's pages are the caller's
    return d;
  }
  DeviceBuffer<__nv_bfloat16> upload_bf16(const std::vector<float>& v) {
    std::vector<__nv_bfloat16> h(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) h[i] = __float2bfloat16_rn(v[i]);  // exact: representable
    DeviceBuffer<__nv_bfloat16> d(h.size());
    if (h.size()) PB_CUDA(cudaMemcpyAsync(d.get(), h.data(), d.bytes(), cudaMemcpyHostToDevice, s()));
    PB_CUDA(cudaStreamSynchronize(s()));  // h dies here
    return d;
  }
};

}  // namespace pb::gemm
