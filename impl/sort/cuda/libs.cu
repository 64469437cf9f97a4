// Thrust and CUB: the library radix sorts.
//
// Thrust: thrust::sort / thrust::sort_by_key in place (thrust::greater for
// descending) on the variant's stream. Its temporary storage comes from a
// caching allocator filled on the untimed warm-up run, so a timed run does
// not pay cudaMalloc / cudaFree, which the library would otherwise call on
// every sort. reset() restores the unsorted keys (untimed).
// CUB: cub::DeviceRadixSort::SortKeys / SortPairs (and the Descending
// forms) from the input buffers into output buffers, temporary storage
// allocated in prepare(): the ceiling the other GPU sorts are read against.
// CUB.Offset64: the same call with a 64-bit item count. CUB chooses its
// offset type from the count's type and tunes its passes per offset type;
// Thrust passes a 64-bit count, so this is the CUB call Thrust makes. CUB's
// tuning for 64-bit offsets differs from its 32-bit one (faster for keys
// only, slower for pairs), so Thrust is read against this call, not CUB's.
// Thrust's other difference, the in-place cub::DoubleBuffer form, runs as
// fast as the form here.
// Measurements behind these choices: docs/perf/sort-libs.md.
// All sort one array (length = total) and are stable for pairs. For f32
// that rests on CUB treating -0.0 and +0.0 as one key (CCCL of CUDA 13, as on
// the GPU machine); a CUB that orders -0.0 first would fail the stability
// check on inputs holding both zeros, as an error entry, never silently.
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/sort.h>

#include <cub/device/device_radix_sort.cuh>
#include <memory>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/caching_allocator.cuh"
#include "sort/cuda/copy_out.cuh"
#include "sort/sort.hpp"

namespace pb::sort {
namespace {

class LibSort : public Variant {
 public:
  Support supports(const Problem& p) const override {
    if (p.batch() != 1)
      return Support::no("sorts one array (length = total); batches are the networks' axis");
    return Support::yes();
  }
  bool stable() const override { return true; }
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p;
    keys_in_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    keys_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    PB_CUDA(cudaMemcpy(keys_in_.get(), in.keys.data(), keys_in_.bytes(), cudaMemcpyHostToDevice));
    if (p.pairs()) {
      vals_in_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
      vals_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
      PB_CUDA(cudaMemcpy(vals_in_.get(), in.values.data(), vals_in_.bytes(), cudaMemcpyHostToDevice));
    }
    // A copy from pageable memory may return before the data has landed, and
    // the variant's non-blocking stream is not ordered after it: wait here.
    PB_CUDA(cudaDeviceSynchronize());
  }
  void result(Output& out) override { copy_out(p_, stream_.get(), keys_.get(), vals_.get(), out); }
  void* stream() override { return stream_.get(); }

 protected:
  Problem p_;
  Stream stream_;
  DeviceBuffer<std::uint32_t> keys_in_, vals_in_, keys_, vals_;
};

class ThrustSort final : public LibSort {
 public:
  void reset() override {
    const auto st = stream_.get();
    PB_CUDA(cudaMemcpyAsync(keys_.get(), keys_in_.get(), keys_.bytes(), cudaMemcpyDeviceToDevice, st));
    if (p_.pairs())
      PB_CUDA(cudaMemcpyAsync(vals_.get(), vals_in_.get(), vals_.bytes(), cudaMemcpyDeviceToDevice, st));
  }
  void run() override {
    if (p_.key == Key::F32)
      go(reinterpret_cast<float*>(keys_.get()));
    else
      go(keys_.get());
  }

 private:
  template <class K>
  void go(K* k) {
    auto policy = thrust::cuda::par_nosync(alloc_).on(stream_.get());
    const std::int64_t n = p_.n;
    const bool desc = p_.order == Order::Desc;
    if (p_.pairs()) {
      auto* v = vals_.get();
      if (desc)
        thrust::sort_by_key(policy, k, k + n, v, thrust::greater<K>());
      else
        thrust::sort_by_key(policy, k, k + n, v);
    } else {
      if (desc)
        thrust::sort(policy, k, k + n, thrust::greater<K>());
      else
        thrust::sort(policy, k, k + n);
    }
    PB_CUDA_LAUNCHED();
  }
  CachingAllocator alloc_;
};

// OffsetT is the type of num_items, from which CUB picks its offset type and,
// with it, its tuning: int (32-bit offsets, as most callers write it) for
// "CUB"; std::int64_t (64-bit offsets, as Thrust passes a ptrdiff_t count)
// for "CUB.Offset64".
template <class OffsetT>
class CubSort final : public LibSort {
 public:
  void prepare(const Problem& p, const Inputs& in) override {
    LibSort::prepare(p, in);
    std::size_t bytes = 0;
    call(nullptr, bytes);  // size query
    temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes, 1));
    temp_bytes_ = bytes;
  }
  void reset() override {}
  void run() override {
    std::size_t bytes = temp_bytes_;
    call(temp_.get(), bytes);
  }

 private:
  void call(void* temp, std::size_t& bytes) {
    if (p_.key == Key::F32)
      go(temp, bytes, reinterpret_cast<const float*>(keys_in_.get()), reinterpret_cast<float*>(keys_.get()));
    else
      go(temp, bytes, keys_in_.get(), keys_.get());
  }
  template <class K>
  void go(void* temp, std::size_t& bytes, const K* kin, K* kout) {
    using R = cub::DeviceRadixSort;
    const OffsetT n = OffsetT(p_.n);
    const auto st = stream_.get();
    const int end_bit = int(sizeof(K) * 8);
    const bool desc = p_.order == Order::Desc;
    if (p_.pairs()) {
      const auto* vin = vals_in_.get();
      auto* vout = vals_.get();
      if (desc)
        PB_CUDA(R::SortPairsDescending(temp, bytes, kin, kout, vin, vout, n, 0, end_bit, st));
      else
        PB_CUDA(R::SortPairs(temp, bytes, kin, kout, vin, vout, n, 0, end_bit, st));
    } else {
      if (desc)
        PB_CUDA(R::SortKeysDescending(temp, bytes, kin, kout, n, 0, end_bit, st));
      else
        PB_CUDA(R::SortKeys(temp, bytes, kin, kout, n, 0, end_bit, st));
    }
    if (temp) PB_CUDA_LAUNCHED();
  }
  DeviceBuffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Variant> make_thrust() { return std::make_unique<ThrustSort>(); }
std::unique_ptr<Variant> make_cub() { return std::make_unique<CubSort<int>>(); }
std::unique_ptr<Variant> make_cub_offset64() { return std::make_unique<CubSort<std::int64_t>>(); }

}  // namespace pb::sort
