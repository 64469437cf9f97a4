// CUDA.Tiled: seed 001's tiling for when K x D centroids do not fit in
// shared memory (any K and D, e.g. K=2000, D=300). The centroids are walked
// in tiles of KT clusters x DT coordinates staged in shared memory; each
// thread keeps KT running distances in registers, so a point's coordinates
// are read once per cluster tile (K/KT times per iteration, mostly from L2)
// instead of once per cluster. The update runs on the GPU (the shared
// accumulation, then update_step) as in AllGPU.
#include "core/gpu.hpp"
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

constexpr int KT = 32, DT = 32;

__global__ void assign_tiled(const double* __restrict__ xs, const double* __restrict__ C, int* assign,
                             double* best, unsigned long long* changed, std::int64_t n, std::int64_t d,
                             std::int64_t k) {
  __shared__ double cs[KT][DT + 1];
  unsigned local = 0;
  // The loop bound is uniform across the block (barriers inside); threads
  // past N compute on zeros and store nothing.
  for (std::int64_t base = std::int64_t(blockIdx.x) * blockDim.x; base < n;
       base += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = base + threadIdx.x;
    const bool valid = i < n;
    int b = 0;
    double bd = 0;
    for (std::int64_t c0 = 0; c0 < k; c0 += KT) {
      double dist[KT];
#pragma unroll
      for (int cc = 0; cc < KT; ++cc) dist[cc] = 0;
      for (std::int64_t t0 = 0; t0 < d; t0 += DT) {
        __syncthreads();
        for (int j = threadIdx.x; j < KT * DT; j += blockDim.x) {
          const int cc = j / DT, tt = j % DT;
          cs[cc][tt] = (c0 + cc < k && t0 + tt < d) ? C[(c0 + cc) * d + t0 + tt] : 0.0;
        }
        __syncthreads();
        const int tn = int(min(std::int64_t(DT), d - t0));
        for (int tt = 0; tt < tn; ++tt) {
          const double xv = valid ? xs[(t0 + tt) * n + i] : 0.0;
#pragma unroll
          for (int cc = 0; cc < KT; ++cc) {
            const double diff = xv - cs[cc][tt];
            dist[cc] += diff * diff;
          }
        }
      }
      const int cn = int(min(std::int64_t(KT), k - c0));
#pragma unroll
      for (int cc = 0; cc < KT; ++cc)
        if (cc < cn && ((c0 == 0 && cc == 0) || dist[cc] < bd)) bd = dist[cc], b = int(c0 + cc);
    }
    if (valid) {
      best[i] = bd;
      if (assign[i] != b) assign[i] = b, ++local;
    }
  }
  add_changed(local, changed);
}

class Tiled final : public DeviceKMeans {
 public:
  explicit Tiled(int block) { block_ = block; }
  // KT running distances per thread cost registers: check_block declines the
  // largest blocks.
  Support supports(const Problem&) const override { return check_block(block_, assign_tiled); }

 protected:
  Layouts layouts() const override { return {false, true}; }
  bool device_update() const override { return true; }
  bool launch_assign() override {
    assign_tiled<<<grid_for(p_.n, block_), block_, 0, s()>>>(xs_.get(), C_.get(), assign_.get(), best_.get(),
                                                             changed_.get(), p_.n, p_.d, p_.k);
    PB_CUDA_LAUNCHED();
    return false;
  }
};
}  // namespace

std::unique_ptr<Variant> make_cuda_tiled(int block) { return std::make_unique<Tiled>(block); }

}  // namespace pb::kmeans
