// CUDA.Split: red and black points stored in separate arrays (seed 002's
// idea for surface memory), so a half-sweep reads and writes contiguous
// memory: no thread of the other colour is launched, and no sector carries
// half a row of points this half-sweep neither reads nor writes.
//
// Layout: row i of colour c holds the points j = 2 jj + o, o = (i + c) & 1,
// at c_arr[i * w + jj], w = ceil(n / 2). A point's neighbours of the other
// colour are then at the same jj in rows i - 1 and i + 1, and at jj + o - 1
// and jj + o in its own row.
//
// CUDA.Split: one thread per point of a row, blocks of `block` threads along
// a row; rows in grid.y (grid-stride past 65535). A point's five loads go
// through L1/L2; each black value is loaded by up to six threads.
//
// CUDA.SplitColumns, the bandwidth variant: each thread owns a short column
// segment of kColumnRows rows (columns.cuh) and issues every load of the
// segment before its first store, keeping the other colour's kColumnRows + 2
// values in registers; per point of a half-sweep memory moves what the model
// counts (read its own colour, write it, read the other colour), the repeats
// at segment edges coming from the caches.
#include <memory>

#include "core/cuda/buffer.cuh"
#include "sor/cuda/columns.cuh"
#include "sor/sor.hpp"

namespace pb::sor {
namespace {

__global__ void half_sweep_split(double* __restrict__ mine, const double* __restrict__ other, Consts c,
                                 int colour, std::int64_t w) {
  const std::int64_t jj = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (jj >= w) return;
  for (std::int64_t i = 1 + blockIdx.y; i < c.m - 1; i += gridDim.y) {
    const std::int64_t o = (i + colour) & 1;
    const std::int64_t j = 2 * jj + o;
    if (j < 1 || j >= c.n - 1) continue;
    const std::int64_t k = i * w + jj;
    mine[k] = relax(c, i, j, mine[k], other[k + w], other[k - w], other[k + o], other[k + o - 1]);
  }
}

enum class Walk { PointPerThread, Columns };

class Split final : public Variant {
 public:
  Split(int block, Walk walk) : block_(block), walk_(walk) {}
  void prepare(const Problem& p, const Inputs& in) override {
    c_ = consts(p), sweeps_ = p.sweeps;
    w_ = (p.n + 1) / 2;
    const std::size_t half = std::size_t(p.m * w_);
    std::vector<double> host[2];
    to_split(in.u0, p.m, p.n, w_, host);
    for (int c = 0; c < 2; ++c) {
      arr_[c] = DeviceBuffer<double>(half);
      start_[c] = DeviceBuffer<double>(half);
      PB_CUDA(cudaMemcpy(start_[c].get(), host[c].data(), half * sizeof(double), cudaMemcpyHostToDevice));
    }
    // A copy from pageable memory may return before the data has landed, and
    // the variant's non-blocking stream is not ordered after it: wait here.
    PB_CUDA(cudaDeviceSynchronize());
  }
  void reset() override {
    for (int c = 0; c < 2; ++c)
      PB_CUDA(cudaMemcpyAsync(arr_[c].get(), start_[c].get(), start_[c].bytes(), cudaMemcpyDeviceToDevice,
                              stream_.get()));
    PB_CUDA(cudaStreamSynchronize(stream_.get()));
  }
  void run() override {
    const dim3 grid = walk_ == Walk::Columns ? columns_grid(w_, block_, c_.m - 2)
                                             : dim3(unsigned((w_ + block_ - 1) / block_),
                                                    unsigned(std::min<std::int64_t>(c_.m - 2, 65535)));
    for (int s = 0; s < sweeps_; ++s)
      for (int colour = 0; colour < 2; ++colour) {
        if (walk_ == Walk::Columns)
          half_sweep_columns<<<grid, block_, 0, stream_.get()>>>(arr_[colour].get(), arr_[1 - colour].get(),
                                                                 c_, colour, w_, 1, c_.m - 1, 0);
        else
          half_sweep_split<<<grid, block_, 0, stream_.get()>>>(arr_[colour].get(), arr_[1 - colour].get(), c_,
                                                               colour, w_);
        PB_CUDA_LAUNCHED();
      }
  }
  void result(std::vector<double>& u) override {
    PB_CUDA(cudaStreamSynchronize(stream_.get()));
    const std::size_t half = arr_[0].size();
    std::vector<double> host[2] = {std::vector<double>(half), std::vector<double>(half)};
    for (int c = 0; c < 2; ++c)
      PB_CUDA(cudaMemcpy(host[c].data(), arr_[c].get(), half * sizeof(double), cudaMemcpyDeviceToHost));
    from_split(host, c_.m, c_.n, w_, u);
  }
  void* stream() override { return stream_.get(); }

 private:
  int block_;
  Walk walk_;
  Consts c_{};
  int sweeps_ = 0;
  std::int64_t w_ = 0;
  DeviceBuffer<double> arr_[2], start_[2];
  Stream stream_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_split(int block) {
  return std::make_unique<Split>(block, Walk::PointPerThread);
}
std::unique_ptr<Variant> make_cuda_split_columns(int block) {
  return std::make_unique<Split>(block, Walk::Columns);
}

}  // namespace pb::sor
