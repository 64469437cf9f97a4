// CUDA.Shared: Transpose with the centroids staged once per block in shared
// memory, so the K x D centroid reads of every point hit on-chip memory
// instead of L1/L2. Needs K*D doubles of shared memory per block: above the
// opt-in limit (227 KB on Hopper) the variant is unsupported; Tiled covers it.
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

__global__ void assign_shared(const double* __restrict__ xs, const double* __restrict__ Ct, int* assign,
                              double* best, unsigned long long* changed, std::int64_t n, std::int64_t d,
                              std::int64_t k) {
  extern __shared__ double cs[];  // D x K, as Ct
  for (std::int64_t j = threadIdx.x; j < k * d; j += blockDim.x) cs[j] = Ct[j];
  __syncthreads();
  assign_soa(xs, cs, assign, best, changed, n, d, k);
}

class Shared final : public DeviceKMeans {
 public:
  explicit Shared(int block) { block_ = block; }
  Support supports(const Problem& p) const override {
    if (Support b = check_block(block_, assign_shared); !b.ok()) return b;
    const std::size_t need = std::size_t(p.k * p.d) * sizeof(double);
    if (need > gpu_status().shared_optin_bytes)
      return Support::no("K*D = " + std::to_string(p.k * p.d) + " centroid doubles need " +
                         std::to_string(need) + " bytes of shared memory, more than the " +
                         std::to_string(gpu_status().shared_optin_bytes) +
                         " a block can have (CUDA.Tiled runs it)");
    return Support::yes();
  }

 protected:
  Layouts layouts() const override { return {false, true}; }
  bool device_update() const override { return false; }
  void after_prepare() override {
    bytes_ = std::size_t(p_.k * p_.d) * sizeof(double);
    PB_CUDA(cudaFuncSetAttribute(assign_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
  }
  bool launch_assign() override {
    assign_shared<<<grid_for(p_.n, block_), block_, bytes_, s()>>>(
        xs_.get(), Ct_.get(), assign_.get(), best_.get(), changed_.get(), p_.n, p_.d, p_.k);
    PB_CUDA_LAUNCHED();
    return false;
  }

 private:
  std::size_t bytes_ = 0;
};
}  // namespace

std::unique_ptr<Variant> make_cuda_shared(int block) { return std::make_unique<Shared>(block); }

}  // namespace pb::kmeans
