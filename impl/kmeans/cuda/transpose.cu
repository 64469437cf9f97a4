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
  assign_soa(xs, Ct, assign, best, changed, n, d, k);
}

class Transpose final : public DeviceKMeans {
 public:
  explicit Transpose(int block) { block_ = block; }
  Support supports(const Problem&) const override { return check_block(block_, assign_transpose); }

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
