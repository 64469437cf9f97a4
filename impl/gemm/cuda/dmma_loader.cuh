#pragma once
// The k tiles of CUDA.DMMA's operands, copied into shared memory by cp.async:
// the GEMM family's DMMA kernel and k-means' distance kernel share them.
#include <cstdint>

#include "core/cuda/cp_async.cuh"

namespace pb::cuda_f64 {

// k of a tile, and the paddings that keep a warp's 32 fragment reads to two
// shared-memory wavefronts (rows of k: stride BK + PADK; rows of i or j:
// stride R + PADR).
constexpr int BK = 16, PADK = 4, PADR = 8;

// One operand's R x BK tiles into shared memory: kcontig, element (r, k) at
// p[r * ld + k], stored s[r][k] (row stride BK + PADK); else at p[k * ld + r],
// stored s[k][r] (row stride R + PADR). VEC doubles a copy (2 when ld is even
// and the operand 16-byte aligned, else 1); a warp's copies run along the
// contiguous dimension.
template <int R, int THREADS, bool kcontig, int VEC>
struct Loader {
  static constexpr int CHUNKS = R * BK / VEC, COPIES = CHUNKS / THREADS;
  static_assert(CHUNKS % THREADS == 0, "tile copies must split evenly");
  static constexpr int PER_LINE = (kcontig ? BK : R) / VEC;  // chunks along the contiguous dimension
  const double* base;
  const double* p;  // copy 0's element of the next k tile
  std::int64_t ld;
  std::int64_t step;
  int line0, along0;  // copy 0's line (r or k) and position along it
  static constexpr int LINE_STEP = THREADS / PER_LINE;
  std::int64_t r0, rows;

  __device__ __forceinline__ Loader(const double* a, std::int64_t ld_, std::int64_t r0_, std::int64_t rows_,
                                    int tid)
      : base(a), ld(ld_), r0(r0_), rows(rows_) {
    line0 = tid / PER_LINE, along0 = (tid % PER_LINE) * VEC;
    if (kcontig)
      p = a + (r0 + line0) * ld + along0, step = BK;
    else
      p = a + std::int64_t(line0) * ld + r0 + along0, step = BK * ld;
  }
  __device__ __forceinline__ void load(double* s, std::int64_t k0, std::int64_t K) {
#pragma unroll
    for (int l = 0; l < COPIES; ++l) {
      const int line = line0 + l * LINE_STEP;
      // Element positions: VEC = 2 needs both in or both out, which even
      // lengths (K or rows) give.
      const std::int64_t r = kcontig ? r0 + line : r0 + along0;
      const std::int64_t k = kcontig ? k0 + along0 : k0 + line;
      const bool ok = r < rows && k < K;
      const double* src = ok ? p + std::int64_t(l) * LINE_STEP * ld : base;  // lines are rows or k
      double* dst = kcontig ? s + line * (BK + PADK) + along0 : s + line * (R + PADR) + along0;
      pb::cp_async::copy<VEC * 8>(dst, src, ok);
    }
    p += step;
  }
};

}  // namespace pb::cuda_f64
