// CUB and Thrust, the scans ours are read against. CUB:
// cub::DeviceScan::InclusiveSum (InclusiveSumByKey for segments) from the
// input into the output, temporary storage allocated in prepare(). Thrust:
// thrust::inclusive_scan (inclusive_scan_by_key) on the variant's stream,
// its temporary storage from a caching allocator filled on the untimed
// warm-up run.
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <memory>
#include <vector>

#include "core/cuda/caching_allocator.cuh"
#include "scan/cuda/device_scan.cuh"

namespace pb::scan {
namespace {

class CubScan final : public DeviceScan {
 public:
  void setup() override {
    std::size_t bytes = 0;
    call(nullptr, bytes);
    temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes, 1));
    temp_bytes_ = bytes;
  }
  void run() override {
    std::size_t bytes = temp_bytes_;
    call(temp_.get(), bytes);
  }

 private:
  void call(void* temp, std::size_t& bytes) {
    if (p_.type == Type::F32)
      go(temp, bytes, reinterpret_cast<const float*>(in_.get()), reinterpret_cast<float*>(out_.get()));
    else
      go(temp, bytes, in_.get(), out_.get());
  }
  template <class T>
  void go(void* temp, std::size_t& bytes, const T* in, T* out) {
    const int n = int(p_.n);
    if (p_.segmented())
      PB_CUDA(cub::DeviceScan::InclusiveSumByKey(temp, bytes, keys_.get(), in, out, n,
                                                 ::cuda::std::equal_to<>(), stream_.get()));
    else
      PB_CUDA(cub::DeviceScan::InclusiveSum(temp, bytes, in, out, n, stream_.get()));
    if (temp) PB_CUDA_LAUNCHED();
  }
  DeviceBuffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

class ThrustScan final : public DeviceScan {
 public:
  void run() override {
    if (p_.type == Type::F32)
      go(reinterpret_cast<const float*>(in_.get()), reinterpret_cast<float*>(out_.get()));
    else
      go(in_.get(), out_.get());
  }

 private:
  template <class T>
  void go(const T* in, T* out) {
    auto policy = thrust::cuda::par_nosync(alloc_).on(stream_.get());
    if (p_.segmented())
      thrust::inclusive_scan_by_key(policy, keys_.get(), keys_.get() + p_.n, in, out);
    else
      thrust::inclusive_scan(policy, in, in + p_.n, out);
    PB_CUDA_LAUNCHED();
  }
  CachingAllocator alloc_;
};

}  // namespace

std::unique_ptr<Variant> make_cub() { return std::make_unique<CubScan>(); }
std::unique_ptr<Variant> make_thrust() { return std::make_unique<ThrustScan>(); }

}  // namespace pb::scan
