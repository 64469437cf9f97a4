// The CUDA SOR variants on the natural layout, one thread per point of a 2-D
// block of the grid (block shape XxY: X threads along a row, Y rows), a launch
// per half-sweep in which the threads of the other colour only help load:
//
// - CUDA.Global: seed 002's first version, every value read from global memory;
//   the constants come in a kernel argument (which the compiler already puts in
//   the constant bank).
// - CUDA.Constant: the constants in a __constant__ symbol, copied once per
//   problem, as the seed did to spare the per-point arithmetic of 2/D and h/D.
// - CUDA.SharedHalo: the block first copies its tile and a one-point halo
//   (both colours) into shared memory; every neighbour is then read from it.
// - CUDA.SharedInterior: seed 002's last version: the block copies only its own
//   points; threads whose neighbours all lie in the tile ("interior") read them
//   from shared memory, the threads on the tile's edge ("exterior") from global.
//
// Within a half-sweep a thread writes only its own point, of the colour being
// updated, and reads only its own point and neighbours of the other colour, so
// the tile loaded at the start stays valid for the whole launch.
#include <memory>

#include "core/cuda/buffer.cuh"
#include "sor/cuda/device_field.cuh"

namespace pb::sor {
namespace {

enum class Mode { Global, Constant, SharedHalo, SharedInterior };

__constant__ Consts kConsts;

template <Mode kMode>
__global__ void half_sweep(double* __restrict__ u, Consts arg, int colour) {
  const Consts& c = kMode == Mode::Constant ? kConsts : arg;
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const std::int64_t j0 = 1 + std::int64_t(blockIdx.x) * bx, i0 = 1 + std::int64_t(blockIdx.y) * by;
  const std::int64_t j = j0 + tx, i = i0 + ty, n = c.n;
  const bool mine = i < c.m - 1 && j < n - 1 && ((i + j) & 1) == colour;
  if constexpr (kMode == Mode::Global || kMode == Mode::Constant) {
    if (!mine) return;
    const std::int64_t k = i * n + j;
    u[k] = relax(c, i, j, u[k], u[k + n], u[k - n], u[k + 1], u[k - 1]);
  } else if constexpr (kMode == Mode::SharedHalo) {
    extern __shared__ double tile[];
    const int w = bx + 2, h = by + 2;
    for (int t = ty * bx + tx; t < w * h; t += bx * by) {
      const std::int64_t gi = i0 - 1 + t / w, gj = j0 - 1 + t % w;
      if (gi < c.m && gj < n) tile[t] = u[gi * n + gj];
    }
    __syncthreads();
    if (!mine) return;
    const int s = (ty + 1) * w + tx + 1;
    u[i * n + j] = relax(c, i, j, tile[s], tile[s + w], tile[s - w], tile[s + 1], tile[s - 1]);
  } else {
    extern __shared__ double tile[];
    const int s = ty * bx + tx;
    if (i < c.m && j < n) tile[s] = u[i * n + j];
    __syncthreads();
    if (!mine) return;
    const std::int64_t k = i * n + j;
    const bool interior = tx > 0 && tx < bx - 1 && ty > 0 && ty < by - 1;
    if (interior)
      u[k] = relax(c, i, j, tile[s], tile[s + bx], tile[s - bx], tile[s + 1], tile[s - 1]);
    else
      u[k] = relax(c, i, j, tile[s], u[k + n], u[k - n], u[k + 1], u[k - 1]);
  }
}

template <Mode kMode>
class Natural final : public DeviceField {
 public:
  Natural(int bx, int by) : bx_(bx), by_(by) {}
  Support supports(const Problem& p) const override {
    // gridDim.y is at most 65535.
    if ((p.m - 2 + by_ - 1) / by_ > 65535)
      return Support::no("block shape " + std::to_string(bx_) + "x" + std::to_string(by_) +
                         " needs more than 65535 blocks along the rows");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs& in) override {
    DeviceField::prepare(p, in);
    if (kMode == Mode::Constant) PB_CUDA(cudaMemcpyToSymbol(kConsts, &c_, sizeof(Consts)));
  }
  void run() override {
    const dim3 block(bx_, by_);
    const dim3 grid(unsigned((c_.n - 2 + bx_ - 1) / bx_), unsigned((c_.m - 2 + by_ - 1) / by_));
    const std::size_t shared = kMode == Mode::SharedHalo ? std::size_t(bx_ + 2) * (by_ + 2) * sizeof(double)
                               : kMode == Mode::SharedInterior ? std::size_t(bx_) * by_ * sizeof(double)
                                                               : 0;
    for (int s = 0; s < sweeps_; ++s)
      for (int colour = 0; colour < 2; ++colour) {
        half_sweep<kMode><<<grid, block, shared, stream_.get()>>>(u_.get(), c_, colour);
        PB_CUDA_LAUNCHED();
      }
  }

 private:
  int bx_, by_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_global(int bx, int by) {
  return std::make_unique<Natural<Mode::Global>>(bx, by);
}
std::unique_ptr<Variant> make_cuda_constant(int bx, int by) {
  return std::make_unique<Natural<Mode::Constant>>(bx, by);
}
std::unique_ptr<Variant> make_cuda_shared_halo(int bx, int by) {
  return std::make_unique<Natural<Mode::SharedHalo>>(bx, by);
}
std::unique_ptr<Variant> make_cuda_shared_interior(int bx, int by) {
  return std::make_unique<Natural<Mode::SharedInterior>>(bx, by);
}

}  // namespace pb::sor
