// CUDA.Global and CUDA.Constant: seed 002's first two GPU versions. One
// thread per point of a 2-D block of the grid (block shape XxY: X threads
// along a row, Y rows); a half-sweep is one launch in which the threads of
// the other colour return at once. Global reads the constants from a kernel
// argument (which the compiler already puts in the constant bank); Constant
// keeps them in a __constant__ symbol, copied once per problem, as the seed
// did to spare the per-point arithmetic of 2/D and h/D.
#include <memory>

#include "core/cuda/buffer.cuh"
#include "sor/cuda/device_field.cuh"

namespace pb::sor {
namespace {

__constant__ Consts kConsts;

template <bool kFromSymbol>
__global__ void half_sweep(double* __restrict__ u, Consts arg, int colour) {
  const Consts& c = kFromSymbol ? kConsts : arg;
  const std::int64_t j = 1 + std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t i = 1 + std::int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= c.m - 1 || j >= c.n - 1 || ((i + j) & 1) != colour) return;
  const std::int64_t k = i * c.n + j;
  u[k] = relax(c, i, j, u[k], u[k + c.n], u[k - c.n], u[k + 1], u[k - 1]);
}

template <bool kFromSymbol>
class Global final : public DeviceField {
 public:
  Global(int bx, int by) : bx_(bx), by_(by) {}
  Support supports(const Problem& p) const override {
    // gridDim.y is at most 65535.
    if ((p.m - 2 + by_ - 1) / by_ > 65535)
      return Support::no("block shape " + std::to_string(bx_) + "x" + std::to_string(by_) +
                         " needs more than 65535 blocks along the rows");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs& in) override {
    DeviceField::prepare(p, in);
    if (kFromSymbol) PB_CUDA(cudaMemcpyToSymbol(kConsts, &c_, sizeof(Consts)));
  }
  void run() override {
    const dim3 block(bx_, by_);
    const dim3 grid(unsigned((c_.n - 2 + bx_ - 1) / bx_), unsigned((c_.m - 2 + by_ - 1) / by_));
    for (int s = 0; s < sweeps_; ++s)
      for (int colour = 0; colour < 2; ++colour) {
        half_sweep<kFromSymbol><<<grid, block, 0, stream_.get()>>>(u_.get(), c_, colour);
        PB_CUDA_LAUNCHED();
      }
  }

 private:
  int bx_, by_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_global(int bx, int by) { return std::make_unique<Global<false>>(bx, by); }
std::unique_ptr<Variant> make_cuda_constant(int bx, int by) { return std::make_unique<Global<true>>(bx, by); }

}  // namespace pb::sor
