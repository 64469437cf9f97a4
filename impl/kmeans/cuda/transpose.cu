// CUDA.Transpose: Naive with the points and centroids stored coordinate-major
// (SoA). Thread i reads xs[t*N + i], so a warp's loads of one coordinate are
// one coalesced 256-byte transaction instead of 32 scattered ones; centroid
// reads are the same address for the whole warp (a broadcast).
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

__global__ void assign_transpose(const double* __restrict__ xs, const double* __restrict__ Ct, int* assign,
                                 double* best, unsigned long long* changed, std::int64_t n, std::int64_t d,
                                 std::int64_t k) {
  unsigned local = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    int b = 0;
    double bd = 0;
    for (std::int64_t c = 0; c < k; ++c) {
      double s = 0;
      for (std::int64_t t = 0; t < d; ++t) {
        const double diff = xs[t * n + i] - Ct[t * k + c];
        s += diff * diff;
      }
      if (c == 0 || s < bd) bd = s, b = int(c);
    }
    best[i] = bd;
    if (assign[i] != b) assign[i] = b, ++local;
  }
  add_changed(local, changed);
}

class Transpose final : public DeviceKMeans {
 public:
  explicit Transpose(int block) { block_ = block; }
  Support supports(const Problem&) const override { return check_block(block_); }

 protected:
  Layouts layouts() const override { return {false, true}; }
  bool device_update() const override { return false; }
  bool launch_assign() override {
    assign_transpose<<<grid_for(p_.n, block_), block_, 0, s()>>>(
        xs_.get(), Ct_.get(), assign_.get(), best_.get(), changed_.get(), p_.n, p_.d, p_.k);
    PB_CUDA_LAUNCHED();
    return false;
  }
};
}  // namespace

std::unique_ptr<Variant> make_cuda_transpose(int block) { return std::make_unique<Transpose>(block); }

}  // namespace pb::kmeans
