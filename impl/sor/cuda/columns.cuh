#pragma once
// The column-walking half-sweep of the red/black split layout, shared by
// CUDA.SplitColumns (split.cu) and the row-split multi-GPU variant (rows.cu).
// Layout: row i of colour c holds the points j = 2 jj + o, o = (i + c) & 1, at
// index jj of a row of w = ceil(n / 2) values.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sor/sor.hpp"

namespace pb::sor {

// Rows a thread updates: one column segment of kColumnRows rows. Four rows
// keep enough loads in flight to run at the speed of a device-to-device
// copy; fewer leave bandwidth unused, 8 are no faster, and a 32-row column
// needs more registers and leaves too few warps. Measurements behind these
// choices: docs/perf/sor-cuda.md.
constexpr int kColumnRows = 4;

// Rows first <= i < last of a half-sweep; the arrays hold rows row0, row0 + 1,
// ... (row i at (i - row0) * w), which must include first - 1 and last.
//
// Each thread owns the segment of kColumnRows rows at column jj that its
// block's (y, z) index names (no loop over segments: a loop kept ~20 more
// registers live, 75 instead of 54, and cost a quarter of the occupancy). It
// loads the other colour's R + 2 values at jj (rows i0 - 1 ... i0 + R), its
// own colour's R values and the R same-row neighbours at jj - 1 or jj + 1, all
// before its first store (a load after a store to `mine` could not be moved
// ahead of it), so a thread keeps 3 R + 2 loads in flight; then it updates
// the R points from registers. The other colour's rows i0 - 1 and i0 + R are
// the segments above and below too, and the side neighbours the adjacent
// threads' values: those repeats come from L1/L2, not memory.
static __global__ void half_sweep_columns(double* __restrict__ mine, const double* __restrict__ other,
                                          Consts c, int colour, std::int64_t w, std::int64_t first,
                                          std::int64_t last, std::int64_t row0) {
  constexpr int R = kColumnRows;
  const std::int64_t jj = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t i0 = first + (blockIdx.y + std::int64_t(gridDim.y) * blockIdx.z) * R;
  if (jj >= w || i0 >= last) return;
  const int rows = int(last - i0 < R ? last - i0 : R);  // of this segment, 1 ... R
  const double* up = other + (i0 - 1 - row0) * w + jj;  // the other colour, row i0 - 1
  double* my = mine + (i0 - row0) * w + jj;
  const int o0 = int((i0 + colour) & 1);  // row i0's offset: its points are j = 2 jj + o0
  double col[R + 2], own[R], side[R];     // col[g]: the other colour at row i0 - 1 + g
#pragma unroll
  for (int g = 0; g < R + 2; ++g) col[g] = g <= rows + 1 ? up[g * w] : 0.0;
#pragma unroll
  for (int g = 0; g < R; ++g) {
    // The own row's neighbour of the other colour: jj + 1 (j + 1) when o = 1,
    // jj - 1 (j - 1) when o = 0; the other one is col[g + 1].
    const int o = (o0 + g) & 1;
    const bool row = g < rows, has = o ? jj + 1 < w : jj >= 1;
    own[g] = row ? my[g * w] : 0.0;
    side[g] = row && has ? up[(g + 1) * w + (o ? 1 : -1)] : 0.0;
  }
#pragma unroll
  for (int g = 0; g < R; ++g) {
    if (g >= rows) break;
    const int o = (o0 + g) & 1;
    const std::int64_t j = 2 * jj + o;
    if (j < 1 || j >= c.n - 1) continue;
    const double right = o ? side[g] : col[g + 1], left = o ? col[g + 1] : side[g];
    my[g * w] = relax(c, i0 + g, j, own[g], col[g + 2], col[g], right, left);
  }
}

// Grid for rows first <= i < last: blocks of `block` threads along a row, one
// segment of kColumnRows rows per block index in y and z (y at most 65535).
inline dim3 columns_grid(std::int64_t w, int block, std::int64_t rows) {
  const std::int64_t segments = std::max<std::int64_t>(1, (rows + kColumnRows - 1) / kColumnRows);
  const std::int64_t y = std::min<std::int64_t>(segments, 65535);
  return dim3(unsigned((w + block - 1) / block), unsigned(y), unsigned((segments + y - 1) / y));
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
