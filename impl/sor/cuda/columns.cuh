#pragma once
// The column-walking half-sweep of the red/black split layout, shared by
// CUDA.SplitColumns (split.cu) and the row-split multi-GPU variant (rows.cu).
// Layout: row i of colour c holds the points j = 2 jj + o, o = (i + c) & 1, at
// index jj of a row of w = ceil(n / 2) values.
#include <cstdint>
#include <vector>

#include "sor/sor.hpp"

namespace pb::sor {

constexpr int kColumnRows = 32;
constexpr unsigned kFullWarp = 0xffffffffu;

// Rows first <= i < last of a half-sweep; the arrays hold rows row0, row0 + 1,
// ... (row i at (i - row0) * w), which must include first - 1 and last.
static __global__ void half_sweep_columns(double* __restrict__ mine, const double* __restrict__ other,
                                          Consts c, int colour, std::int64_t w, std::int64_t first,
                                          std::int64_t last, std::int64_t row0) {
  const std::int64_t jj = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in = jj < w;
  const int lane = int(threadIdx.x) & 31;
  // Every lane runs every row (the shuffles need the whole warp); lanes past
  // the row's end carry 0 and are never used as a neighbour.
  mine -= row0 * w;
  other -= row0 * w;
  for (std::int64_t i0 = first + std::int64_t(blockIdx.y) * kColumnRows; i0 < last;
       i0 += std::int64_t(gridDim.y) * kColumnRows) {
    const std::int64_t i1 = i0 + kColumnRows < last ? i0 + kColumnRows : last;
    double up = in ? other[(i0 - 1) * w + jj] : 0.0;
    double mid = in ? other[i0 * w + jj] : 0.0;
#pragma unroll 4
    for (std::int64_t i = i0; i < i1; ++i) {
      const double down = in ? other[(i + 1) * w + jj] : 0.0;
      const double from_next = __shfl_down_sync(kFullWarp, mid, 1);
      const double from_prev = __shfl_up_sync(kFullWarp, mid, 1);
      const std::int64_t o = (i + colour) & 1;
      const std::int64_t j = 2 * jj + o;
      if (in && j >= 1 && j < c.n - 1) {
        // o = 1: neighbours j - 1 at jj (mid) and j + 1 at jj + 1; o = 0:
        // j + 1 at jj (mid) and j - 1 at jj - 1.
        const double right = o ? (lane == 31 ? other[i * w + jj + 1] : from_next) : mid;
        const double left = o ? mid : (lane == 0 ? other[i * w + jj - 1] : from_prev);
        const std::int64_t k = i * w + jj;
        mine[k] = relax(c, i, j, mine[k], down, up, right, left);
      }
      up = mid;
      mid = down;
    }
  }
}

// Grid for rows first <= i < last: blocks of `block` threads along a row,
// kColumnRows rows per block in grid.y (grid-stride past 65535).
inline dim3 columns_grid(std::int64_t w, int block, std::int64_t rows) {
  const std::int64_t y = (rows + kColumnRows - 1) / kColumnRows;
  return dim3(unsigned((w + block - 1) / block), unsigned(y < 65535 ? (y > 0 ? y : 1) : 65535));
}

// The split layout on the host: the natural M x N field u as the two colour
// arrays (m x w each, zero where a row has one point fewer), and back.
inline void to_split(const std::vector<double>& u, std::int64_t m, std::int64_t n, std::int64_t w,
                     std::vector<double> (&colour)[2]) {
  for (auto& c : colour) c.assign(std::size_t(m * w), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      colour[(i + j) & 1][std::size_t(i * w + j / 2)] = u[std::size_t(i * n + j)];
}
inline void from_split(const std::vector<double> (&colour)[2], std::int64_t m, std::int64_t n, std::int64_t w,
                       std::vector<double>& u) {
  u.resize(std::size_t(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      u[std::size_t(i * n + j)] = colour[(i + j) & 1][std::size_t(i * w + j / 2)];
}

}  // namespace pb::sor
