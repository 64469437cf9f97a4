// Device-to-device copy bandwidth: cudaMemcpyAsync, the copy engine's and
// driver's best, as in the GPU machine's own ceiling measurement.
#include <cstdio>
#include <vector>

#include "ceiling/ceiling.hpp"
#include "core/cuda/buffer.cuh"
#include "fixtures/fixtures.hpp"

namespace pb::ceiling {
namespace {

class DeviceCopy final : public Job {
 public:
  DeviceCopy(std::int64_t bytes, std::uint64_t seed) : n_(bytes / 8), seed_(seed) {}
  Backend backend() const override { return Backend::Cuda; }
  void prepare() override {
    stream_ = std::make_unique<Stream>();
    host_.resize(n_);
    fixtures::fill_uniform(host_.data(), host_.size(), fixtures::seed_for(seed_, "ceiling.copy", {n_}));
    src_ = DeviceBuffer<double>(n_);
    dst_ = DeviceBuffer<double>(n_);
    PB_CUDA(cudaMemcpyAsync(src_.get(), host_.data(), src_.bytes(), cudaMemcpyHostToDevice, stream_->get()));
    PB_CUDA(cudaMemsetAsync(dst_.get(), 0xFF, dst_.bytes(), stream_->get()));
    PB_CUDA(cudaStreamSynchronize(stream_->get()));
  }
  void run() override {
    PB_CUDA(cudaMemcpyAsync(dst_.get(), src_.get(), src_.bytes(), cudaMemcpyDeviceToDevice, stream_->get()));
  }
  void* cuda_stream() override { return stream_->get(); }
  Check check() override {
    std::vector<double> back(n_);
    PB_CUDA(cudaMemcpyAsync(back.data(), dst_.get(), dst_.bytes(), cudaMemcpyDeviceToHost, stream_->get()));
    PB_CUDA(cudaStreamSynchronize(stream_->get()));
    for (std::int64_t i = 0; i < n_; ++i)
      if (!(back[i] == host_[i])) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "element %lld: %.17g, expected %.17g", (long long)i, back[i],
                      host_[i]);
        return {false, buf, "full"};
      }
    return {true, "", "full"};
  }
  Work work() const override {
    Work w;
    w.bytes = 2.0 * 8.0 * double(n_);
    return w;
  }

 private:
  std::int64_t n_;
  std::uint64_t seed_;
  std::unique_ptr<Stream> stream_;
  std::vector<double> host_;
  DeviceBuffer<double> src_, dst_;
};

}  // namespace

std::unique_ptr<Job> make_device_copy(std::int64_t bytes, std::uint64_t seed) {
  return std::make_unique<DeviceCopy>(bytes, seed);
}

}  // namespace pb::ceiling
