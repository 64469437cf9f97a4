#pragma once
// What the CUDA SOR variants in the natural layout share: the field and a
// copy of its start on the device, the stream, the upload, the untimed reset
// and the download.
#include <vector>

#include "core/cuda/buffer.cuh"
#include "sor/sor.hpp"

namespace pb::sor {

class DeviceField : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override {
    c_ = consts(p), sweeps_ = p.sweeps;
    const std::size_t n = std::size_t(p.points());
    u_ = DeviceBuffer<double>(n);
    start_ = DeviceBuffer<double>(n);
    PB_CUDA(cudaMemcpy(start_.get(), in.u0.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    // A copy from pageable memory may return before the data has landed, and
    // the variant's non-blocking stream is not ordered after it: wait here.
    PB_CUDA(cudaDeviceSynchronize());
  }
  void reset() override {
    PB_CUDA(cudaMemcpyAsync(u_.get(), start_.get(), start_.bytes(), cudaMemcpyDeviceToDevice, stream_.get()));
    PB_CUDA(cudaStreamSynchronize(stream_.get()));
  }
  void result(std::vector<double>& u) override {
    u.resize(u_.size());
    PB_CUDA(cudaStreamSynchronize(stream_.get()));
    PB_CUDA(cudaMemcpy(u.data(), u_.get(), u_.bytes(), cudaMemcpyDeviceToHost));
  }
  void* stream() override { return stream_.get(); }

 protected:
  Consts c_{};
  int sweeps_ = 0;
  DeviceBuffer<double> u_, start_;
  Stream stream_;
};

}  // namespace pb::sor
