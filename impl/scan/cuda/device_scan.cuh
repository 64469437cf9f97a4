#pragma once
// What every GPU scan shares: the input values (and keys, segmented) on the
// device, an output buffer, its stream, and the copy of the result back.
// prepare() uploads, calls setup() for the variant's own buffers, and waits.
#include <cstdint>

#include "core/cuda/buffer.cuh"
#include "scan/scan.hpp"

namespace pb::scan {

class DeviceScan : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p;
    in_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    out_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    PB_CUDA(cudaMemcpy(in_.get(), in.values.data(), in_.bytes(), cudaMemcpyHostToDevice));
    if (p.segmented()) {
      keys_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
      PB_CUDA(cudaMemcpy(keys_.get(), in.keys.data(), keys_.bytes(), cudaMemcpyHostToDevice));
    }
    setup();
    // A copy from pageable memory may return before the data has landed, and
    // the variant's non-blocking stream is not ordered after it: wait here.
    PB_CUDA(cudaDeviceSynchronize());
  }
  void result(Output& out) override {
    out.values.resize(std::size_t(p_.n));
    PB_CUDA(cudaStreamSynchronize(stream_.get()));
    PB_CUDA(cudaMemcpy(out.values.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
  }
  void* stream() override { return stream_.get(); }

 protected:
  // The variant's own buffers for p_ (temporary storage, tile states).
  virtual void setup() {}

  Problem p_;
  Stream stream_;
  DeviceBuffer<std::uint32_t> in_, out_, keys_;
};

}  // namespace pb::scan
