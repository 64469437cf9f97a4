// The order in which GEMM blocks walk output tiles (CUDA.DMMA, CUDA.Pipelined).
#pragma once
#include <cstdint>

#include "core/host_device.hpp"

namespace pb::gemm {

// Block t of a 1-D grid of tiles_m x tiles_n output tiles -> its tile (tm,
// tn), grouped: `group` tile rows at a time, down each column of the group.
// Blocks that run together then share a few A row panels and B column
// panels, which stay in L2, where a row-by-row walk streams every B panel
// once per tile row (at 8192^3 f32 B is 256 MB, several times L2).
struct TileCoord {
  int64_t tm, tn;
};
PB_HOST_DEVICE inline TileCoord grouped_tile(int64_t t, int64_t tiles_m, int64_t tiles_n, int64_t group) {
  const int64_t per_group = group * tiles_n, first_m = (t / per_group) * group;
  const int64_t rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  return {first_m + (t % per_group) % rows, (t % per_group) / rows};
}

}  // namespace pb::gemm
