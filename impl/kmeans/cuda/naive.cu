// CUDA.Naive (seed 000's first GPU version): one thread per point computes
// its distances to every centroid, both read point-major from global memory;
// the memberships are copied back every iteration and the host does the
// update. Consecutive threads read points D doubles apart: uncoalesced.
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

__global__ void assign_naive(const double* __restrict__ x, const double* __restrict__ C, int* assign,
                             double* best, unsigned long long* changed, std::int64_t n, std::int64_t d,
                             std::int64_t k) {
  unsigned local = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const double* xi = x + i * d;
    int b = 0;
    double bd = 0;
    for (std::int64_t c = 0; c < k; ++c) {
      double s = 0;
      for (std::int64_t t = 0; t < d; ++t) {
        const double diff = xi[t] - C[c * d + t];
        s += diff * diff;
      }
      if (c == 0 || s < bd) bd = s, b = int(c);
    }
    best[i] = bd;
    if (assign[i] != b) assign[i] = b, ++local;
  }
  add_changed(local, changed);
}

class Naive final : public DeviceKMeans {
 public:
  explicit Naive(int block) { block_ = block; }
  Support supports(const Problem&) const override { return check_block(block_, assign_naive); }

 protected:
  Layouts layouts() const override { return {true, false}; }
  bool device_update() const override { return false; }
  bool launch_assign() override {
    assign_naive<<<grid_for(p_.n, block_), block_, 0, s()>>>(xa_.get(), C_.get(), assign_.get(), best_.get(),
                                                             changed_.get(), p_.n, p_.d, p_.k);
    PB_CUDA_LAUNCHED();
    return false;
  }
};
}  // namespace

std::unique_ptr<Variant> make_cuda_naive(int block) { return std::make_unique<Naive>(block); }

}  // namespace pb::kmeans
