// CUDA.AllGPU: the update moves to the GPU too (seed 001's CUDA version), so
// an iteration costs no host round trip beyond the 32-byte flag. Relative to
// Shared, each block also stages its tile of blockDim points (and their new
// clusters) in shared memory and folds them into per-block K x D sums and K
// counts kept in shared memory. Every sum element is owned by one thread,
// which scans the tile for points of its cluster: no shared atomics, and the
// cost per point is K*D predicated adds, the same order as its distances.
// After the grid-stride loop each block adds its sums to the global ones
// (one atomic per element per block), and the shared update (update_step:
// new centroids and the exit test in one launch) runs. Needs (2*K*D + K + D*(blockDim+1)) doubles + blockDim
// ints of shared memory.
#include <algorithm>

#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

// Centroids and block sums (K x D each), counts (K), the D x (P+1) point
// tile, and P ints of clusters: the layout assign_allgpu carves out.
std::size_t allgpu_bytes(std::int64_t k, std::int64_t d, int block) {
  return std::size_t(2 * k * d + k + d * (std::int64_t(block) + 1)) * sizeof(double) +
         std::size_t(block) * sizeof(int);
}

__global__ void assign_allgpu(const double* __restrict__ xs, const double* __restrict__ C, int* assign,
                              double* best, unsigned long long* changed, double* sums,
                              unsigned long long* counts, std::int64_t n, std::int64_t d, std::int64_t k) {
  extern __shared__ double sm[];
  const int P = blockDim.x, tid = threadIdx.x;
  double* cs = sm;                                     // K x D centroids
  double* ss = cs + k * d;                             // K x D block sums
  double* ns = ss + k * d;                             // K block counts (exact in double up to 2^53)
  double* xt = ns + k;                                 // D x (P+1) point tile; +1 spreads rows over banks
  int* at = reinterpret_cast<int*>(xt + d * (P + 1));  // P clusters of the tile
  for (std::int64_t j = tid; j < k * d; j += P) cs[j] = C[j], ss[j] = 0;
  for (std::int64_t c = tid; c < k; c += P) ns[c] = 0;
  __syncthreads();
  unsigned local = 0;
  for (std::int64_t base = std::int64_t(blockIdx.x) * P; base < n; base += std::int64_t(gridDim.x) * P) {
    const std::int64_t i = base + tid;
    const bool valid = i < n;
    for (std::int64_t t = 0; t < d; ++t) xt[t * (P + 1) + tid] = valid ? xs[t * n + i] : 0.0;
    int b = -1;
    if (valid) {
      double bd = 0;
      for (std::int64_t c = 0; c < k; ++c) {
        double s = 0;
        for (std::int64_t t = 0; t < d; ++t) {
          const double diff = xt[t * (P + 1) + tid] - cs[c * d + t];
          s += diff * diff;
        }
        if (c == 0 || s < bd) bd = s, b = int(c);
      }
      best[i] = bd;
      if (assign[i] != b) assign[i] = b, ++local;
    }
    at[tid] = b;
    __syncthreads();
    for (std::int64_t j = tid; j < k * d; j += P) {
      const int c = int(j / d);
      const double* row = xt + (j % d) * (P + 1);
      double acc = 0;
      for (int q = 0; q < P; ++q) acc += at[q] == c ? row[q] : 0.0;
      ss[j] += acc;
    }
    for (std::int64_t c = tid; c < k; c += P) {
      int cnt = 0;
      for (int q = 0; q < P; ++q) cnt += at[q] == int(c);
      ns[c] += cnt;
    }
    __syncthreads();
  }
  for (std::int64_t j = tid; j < k * d; j += P)
    if (ss[j] != 0.0) atomicAdd(&sums[j], ss[j]);
  for (std::int64_t c = tid; c < k; c += P)
    if (ns[c] != 0.0) atomicAdd(&counts[c], (unsigned long long)ns[c]);
  add_changed(local, changed);
}

class AllGpu final : public DeviceKMeans {
 public:
  explicit AllGpu(int block) { block_ = block; }
  Support supports(const Problem& p) const override { return fused_supports(p, block_); }

 protected:
  Layouts layouts() const override { return {false, true}; }
  bool device_update() const override { return true; }
  void after_prepare() override { launch_ = fused_configure(p_, p_.n, block_); }
  bool launch_assign() override {
    launch_fused(launch_, xs_.get(), C_.get(), assign_.get(), best_.get(), changed_.get(), sums_.get(),
                 counts_.get(), p_.n, p_.d, p_.k, s());
    return true;
  }

 private:
  FusedLaunch launch_;
};
}  // namespace

Support fused_supports(const Problem& p, int block) {
  if (Support b = check_block(block, assign_allgpu); !b.ok()) return b;
  const std::size_t need = allgpu_bytes(p.k, p.d, block);
  if (need > gpu_status().shared_optin_bytes)
    return Support::no("centroids, block sums and a " + std::to_string(block) + "-point tile need " +
                       std::to_string(need) + " bytes of shared memory, more than the " +
                       std::to_string(gpu_status().shared_optin_bytes) +
                       " a block can have (CUDA.Tiled and CUDA.GEMM run it)");
  return Support::yes();
}

FusedLaunch fused_configure(const Problem& p, std::int64_t n, int block) {
  FusedLaunch f;
  f.block = block;
  f.bytes = allgpu_bytes(p.k, p.d, block);
  PB_CUDA(cudaFuncSetAttribute(assign_allgpu, cudaFuncAttributeMaxDynamicSharedMemorySize, int(f.bytes)));
  int per_sm = 0, dev = 0, sms = 0;
  PB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, assign_allgpu, block, f.bytes));
  PB_CUDA(cudaGetDevice(&dev));
  PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  // Persistent grid: every block folds many tiles before its one global combine.
  const std::int64_t grid = std::int64_t(std::max(1, per_sm)) * std::max(1, sms);
  f.grid = unsigned(std::max<std::int64_t>(1, std::min<std::int64_t>(grid, (n + block - 1) / block)));
  return f;
}

void launch_fused(const FusedLaunch& f, const double* xs, const double* C, int* assign, double* best,
                  unsigned long long* changed, double* sums, unsigned long long* counts, std::int64_t n,
                  std::int64_t d, std::int64_t k, cudaStream_t s) {
  assign_allgpu<<<f.grid, f.block, f.bytes, s>>>(xs, C, assign, best, changed, sums, counts, n, d, k);
  PB_CUDA_LAUNCHED();
}

std::unique_ptr<Variant> make_cuda_allgpu(int block) { return std::make_unique<AllGpu>(block); }

}  // namespace pb::kmeans
