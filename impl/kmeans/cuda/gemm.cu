// CUDA.GEMM: the library-style iteration. The point-centroid products come
// from one cuBLAS DGEMM (G = X C^T, N x K, on the FP64 tensor cores), then a
// warp per point forms |x|^2 - 2 g + |c|^2 across its row of G and takes the
// argmin (ties to the lowest index, as everywhere); the update is the shared
// device update. |x|^2 is computed once in prepare(), |c|^2 each iteration.
// The GEMM form rounds differently from the direct one (cancellation when
// |x|^2 dominates the distance), which matters only for near-ties.
#include "core/cuda/cublas.cuh"
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

// A warp per point: argmin over its row of G. Lanes take clusters lane,
// lane+32, ...; the warp reduction keeps the smaller distance and, on a tie,
// the lower cluster index.
__global__ void argmin_rows(const double* __restrict__ G, const double* __restrict__ xx,
                            const double* __restrict__ cc, int* assign, double* best,
                            unsigned long long* changed, std::int64_t n, std::int64_t k) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  unsigned local = 0;
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    double bd = 0;
    int b = -1;
    for (std::int64_t c = lane; c < k; c += 32) {
      const double v = xx[i] - 2.0 * G[i * k + c] + cc[c];
      if (b < 0 || v < bd) bd = v, b = int(c);
    }
    for (int off = 16; off; off >>= 1) {
      const double ov = __shfl_down_sync(0xffffffffu, bd, off);
      const int ob = __shfl_down_sync(0xffffffffu, b, off);
      if (ob >= 0 && (b < 0 || ov < bd || (ov == bd && ob < b))) bd = ov, b = ob;
    }
    if (lane == 0) {
      best[i] = bd;
      if (assign[i] != b) assign[i] = b, ++local;
    }
  }
  add_changed(local, changed);
}

class Gemm final : public DeviceKMeans {
 public:
  Support supports(const Problem& p) const override {
    if (p.n > 2147483647 || p.k > 2147483647 || p.d > 2147483647)
      return Support::no("dimension exceeds cuBLAS int");
    return Support::yes();
  }

 protected:
  Layouts layouts() const override { return {true, false}; }
  bool device_update() const override { return true; }
  void after_prepare() override {
    g_ = DeviceBuffer<double>(p_.n * p_.k);
    xx_ = DeviceBuffer<double>(p_.n);
    cc_ = DeviceBuffer<double>(p_.k);
    h_.on(s());  // one handle across prepares
    launch_row_norms(xa_.get(), xx_.get(), p_.n, p_.d, s());
  }
  bool launch_assign() override {
    const int N = int(p_.n), K = int(p_.k), D = int(p_.d);
    const double one = 1, zero = 0;
    launch_row_norms(C_.get(), cc_.get(), p_.k, p_.d, s());
    // Row-major G (N x K) = X C^T is column-major G^T = C X^T: C is column-major
    // D x K (ld D) -> op T; X is column-major D x N (ld D) -> op N.
    PB_CUBLAS(cublasDgemm(h_, CUBLAS_OP_T, CUBLAS_OP_N, K, N, D, &one, C_.get(), D, xa_.get(), D, &zero,
                          g_.get(), K));
    argmin_rows<<<grid_for(p_.n * 32, 256), 256, 0, s()>>>(g_.get(), xx_.get(), cc_.get(), assign_.get(),
                                                           best_.get(), changed_.get(), p_.n, p_.k);
    PB_CUDA_LAUNCHED();
    return false;
  }

 private:
  CublasHandle h_;
  DeviceBuffer<double> g_, xx_, cc_;
};
}  // namespace

std::unique_ptr<Variant> make_cuda_gemm() { return std::make_unique<Gemm>(); }

}  // namespace pb::kmeans
