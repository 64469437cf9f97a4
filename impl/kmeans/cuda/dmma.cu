// CUDA.DMMA: the wide shapes (D in the tens to ~140, K in the hundreds),
// where the distances are a GEMM's work. Relative to CUDA.GEMM (cuBLAS
// DGEMM writes G = X C^T, N x K, to memory, then a kernel reads it back for
// the argmin):
//  - the distance GEMM is this project's own FP64 tensor-core kernel
//    (mma.sync m16n8k8 in f64 as the GEMM family's CUDA.DMMA issues it,
//    gemm/cuda/dmma_ops.cuh, fed by cp.async copies, core/cuda/cp_async.cuh), and the argmin is its
//    epilogue: G never leaves the registers. A block holds 128 points (all D
//    coordinates) in shared memory and walks every cluster in tiles of 32,
//    double-buffered by cp.async; a warp owns 16 points, each thread keeps the
//    best cluster of its 2 rows across its columns, and the 4 lanes of a row
//    settle it by shuffles at the end. Distances in the expanded form
//    |c|^2 - 2 x.c (+ |x|^2 for the inertia), ties to the lowest index.
//  - the sums without atomics contention: counts come from the assignment
//    kernel; an exclusive scan of them (CUB) and a scatter list the points
//    cluster by cluster; then a warp takes 16 consecutive points of that list
//    and adds their rows (800 contiguous bytes each at D = 100) while the
//    cluster stays the same, with one atomic add a coordinate per run of a
//    cluster. Adding each point's row to the sums directly would put N*D
//    atomics on K*D addresses (10^7 on 31,600 at N = 100,000, D = 100,
//    K = 316).
// The update and exit test are the shared device update (device_kmeans.cu).
// Bytes an iteration: the points twice (the distance tiles and the sums),
// the centroids once per 128 points from L2, and O(N) of assignment, list
// and counts. Needs sm_90 (f64 m16n8k8) and (128 + 2 * 32) rows of D
// doubles (padded) of shared memory.
#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <string>

#include "core/cuda/cp_async.cuh"
#include "core/cuda/device_sm.cuh"
#include "gemm/cuda/dmma_loader.cuh"
#include "gemm/cuda/dmma_ops.cuh"
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {
using namespace pb::cuda_f64;
using namespace pb::cp_async;

constexpr int BM = 128, THREADS = 256, KW = 8;  // 8 warps; m16n8k8
constexpr int SEG = 16;                         // sorted points a warp of the sums takes

// k rounded up to the mma's 8, and the row stride of the shared tiles: that
// plus 4, so a warp's 32 fragment reads (rows g, columns t, g < 8, t < 4)
// take two shared-memory wavefronts, the least 256 bytes can (a stride of
// 4 or 12 mod 16 doubles spreads them over all 16 bank pairs twice).
__host__ __device__ inline int kpad(int d) { return (d + KW - 1) / KW * KW; }
__host__ __device__ inline int stride_for(int d) { return kpad(d) + 4; }
// MT m-tiles of 16 points a warp: the block's 8 warps are (8 / MT) x MT
// warps over 128 points and BN = 32 MT centroids a tile, each warp 16 MT
// points by 32 centroids. MT = 2 reads 2 fragments from shared memory an
// MMA, MT = 1 reads 3, but needs two 64-centroid tiles.
// Dynamic shared memory, and with it the static rows of the per-point bests.
std::size_t tile_bytes(std::int64_t d, int mt) {
  return std::size_t(BM + 2 * 32 * mt) * stride_for(int(d)) * sizeof(double);
}
std::size_t block_bytes(std::int64_t d, int mt) {
  return tile_bytes(d, mt) + std::size_t(mt) * BM * (sizeof(double) + sizeof(int));
}

// Rows [r0, r0 + R) of a rows x d row-major matrix into s (row stride S),
// zero past the matrix and in the columns [d, kpad(d)): VEC doubles a copy
// (2 when d is even and the matrix 16-byte aligned).
template <int R, int VEC>
__device__ __forceinline__ void load_rows(double* s, const double* m, std::int64_t r0, std::int64_t rows,
                                          int d, int S) {
  const int per_row = kpad(d) / VEC;
  for (int ch = threadIdx.x; ch < R * per_row; ch += THREADS) {
    const int r = ch / per_row, kc = (ch - r * per_row) * VEC;
    const bool ok = r0 + r < rows && kc < d;
    copy<VEC * 8>(s + r * S + kc, ok ? m + (r0 + r) * d + kc : m, ok);
  }
}

// Assignment of BM points against all K centroids on the FP64 tensor cores,
// the argmin in the epilogue; also counts each cluster's points and, with
// FUSED, adds each point's coordinates to its cluster's sums (an atomic a
// coordinate, from the tile in shared memory: the points are read once).
template <int VEC, int MT, bool FUSED>
__global__ void __launch_bounds__(THREADS, 1)
    dmma_assign(const double* __restrict__ X, const double* __restrict__ C, const double* __restrict__ cn,
                const double* __restrict__ xx, int* __restrict__ assign, double* __restrict__ best,
                unsigned long long* __restrict__ changed, unsigned long long* __restrict__ counts,
                double* __restrict__ sums, std::int64_t n, int d, int k) {
  constexpr int BN = 32 * MT, NT = 4;  // a warp's 32 centroids: 4 n-tiles of 8
  extern __shared__ __align__(16) double sm[];
  __shared__ double rbd[MT][BM];  // the warps' best of each point (MT = 2: the two column halves)
  __shared__ int rbi[MT][BM];
  const int S = stride_for(d), kp = kpad(d);
  double* xs = sm;  // BM x S points, then two BN x S centroid tiles
  auto tile_at = [&](int t) { return sm + (BM + (t & 1) * BN) * S; };
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, fr = lane / 4, fk = lane % 4;
  const int wm = warp / MT, wn = warp % MT;
  const int wr = wm * 16 * MT;  // the warp's first row of the block's points
  const std::int64_t r0 = std::int64_t(blockIdx.x) * BM;
  const int tiles = (k + BN - 1) / BN;

  load_rows<BM, VEC>(xs, X, r0, n, d, S);
  load_rows<BN, VEC>(tile_at(0), C, 0, k, d, S);
  commit();
  if (tiles > 1) load_rows<BN, VEC>(tile_at(1), C, BN, k, d, S);
  commit();

  double bd[MT][2];  // rows fr and fr + 8 of each of the warp's m-tiles
  int bi[MT][2];
#pragma unroll
  for (int m = 0; m < MT; ++m) bd[m][0] = bd[m][1] = 0, bi[m][0] = bi[m][1] = -1;
  for (int t = 0; t < tiles; ++t) {
    wait_groups<1>();  // tile t (and the points) landed: this thread's copies
    __syncthreads();   // ... and everyone's
    const double* cs = tile_at(t) + wn * 32 * S;
    double acc[MT][NT][4];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[m][j][e] = 0.0;
#pragma unroll 2
    for (int kk = 0; kk < kp; kk += KW) {
      double a[MT][4];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const double* xa = xs + (wr + m * 16 + fr) * S + kk + fk;
        a[m][0] = xa[0], a[m][1] = xa[8 * S], a[m][2] = xa[4], a[m][3] = xa[8 * S + 4];
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const double* cc = cs + (j * 8 + fr) * S + kk + fk;
        const double b[2] = {cc[0], cc[4]};
#pragma unroll
        for (int m = 0; m < MT; ++m) dmma<KW>(acc[m][j], a[m], b);
      }
    }
    // acc[m][j][2 h + e] is (row fr + 8 h of m-tile m, column j * 8 + 2 fk + e
    // of the warp's 32): this thread's columns in increasing order, so a
    // strict < keeps the lowest.
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = t * BN + wn * 32 + j * 8 + 2 * fk + e;
        if (col >= k) continue;
        const double c2 = __ldg(cn + col);
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const double v = fma(-2.0, acc[m][j][2 * h + e], c2);
            if (bi[m][h] < 0 || v < bd[m][h]) bd[m][h] = v, bi[m][h] = col;
          }
      }
    __syncthreads();  // every warp is done with tile t's buffer
    if (t + 2 < tiles) load_rows<BN, VEC>(tile_at(t), C, std::int64_t(t + 2) * BN, k, d, S);
    commit();  // an empty group past the end keeps the count the wait expects
  }
  wait_groups<0>();

  // The 4 lanes of a row hold interleaved columns: the smaller distance, on a
  // tie the lower cluster; then the warps of the other column half (MT = 2).
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      for (int off = 1; off < 4; off <<= 1) {
        const double ov = __shfl_xor_sync(0xffffffffu, bd[m][h], off);
        const int oi = __shfl_xor_sync(0xffffffffu, bi[m][h], off);
        if (oi >= 0 && (bi[m][h] < 0 || ov < bd[m][h] || (ov == bd[m][h] && oi < bi[m][h])))
          bd[m][h] = ov, bi[m][h] = oi;
      }
      if (fk == 0) {
        const int r = wr + m * 16 + fr + 8 * h;
        rbd[wn][r] = bd[m][h], rbi[wn][r] = bi[m][h];
      }
    }
  __syncthreads();
  unsigned local = 0;
  if (tid < BM) {  // thread r: point r of the block
    double v = rbd[0][tid];
    int c = rbi[0][tid];
#pragma unroll
    for (int q = 1; q < MT; ++q) {
      const double ov = rbd[q][tid];
      const int oi = rbi[q][tid];
      if (oi >= 0 && (c < 0 || ov < v || (ov == v && oi < c))) v = ov, c = oi;
    }
    const std::int64_t r = r0 + tid;
    const bool mine = r < n;
    if (mine) {
      best[r] = xx[r] + v;
      if (assign[r] != c) assign[r] = c, ++local;
    }
    rbi[0][tid] = mine ? c : -1;
    // One count atomic a cluster a warp, from the lowest of its lanes.
    const int key = mine ? c : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, key);
    if (key >= 0 && lane == __ffs(peers) - 1) atomicAdd(&counts[key], (unsigned long long)__popc(peers));
  }
  if (FUSED) {
    __syncthreads();  // rbi[0] holds every point's cluster
    for (int j = tid; j < BM * d; j += THREADS) {
      const int r = j / d, col = j - r * d, c = rbi[0][r];
      if (c >= 0) atomicAdd(&sums[std::int64_t(c) * d + col], xs[r * S + col]);
    }
  }
  add_changed(local, changed);
}

// The streaming form (the GEMM family's DMMA main loop, gemm/cuda/
// dmma_loader.cuh): a block takes SB_M points by SB_N centroids, both
// operands streamed through shared memory in k tiles of 16 by a 3-deep
// cp.async ring, 4 warps of 64 x 32 (64 accumulators a thread, m16n8k16),
// two blocks an SM. Its epilogue keeps each point's best of the block's
// centroids; the blocks of one row of points (a ticket a row) leave those in
// a small buffer, and the last of them to finish takes the best over the
// row, writes the assignment, counts, and adds the points to their
// clusters' sums (an atomic a coordinate, the points read back while L2
// still holds them): no distance matrix and no second pass over memory.
constexpr int SB_M = 128, SB_N = 64, SWM = 64, SWN = 32, SSTAGES = 3;
constexpr int SWARPS = (SB_M / SWM) * (SB_N / SWN), STHREADS = SWARPS * 32;
constexpr int SMI = SWM / 16, SNI = SWN / 8;
constexpr int STILE_A = SB_M * (BK + PADK), STILE_B = SB_N * (BK + PADK);
constexpr std::size_t kStreamShared = std::size_t(SSTAGES) * (STILE_A + STILE_B) * sizeof(double);

template <int VEC>
__global__ void __launch_bounds__(STHREADS, 2)
    dmma_stream(const double* __restrict__ X, const double* __restrict__ C, const double* __restrict__ cn,
                const double* __restrict__ xx, int* __restrict__ assign, double* __restrict__ best,
                unsigned long long* __restrict__ changed, unsigned long long* __restrict__ counts,
                double* __restrict__ sums, double* __restrict__ pbd, int* __restrict__ pbi,
                unsigned* __restrict__ tickets, std::int64_t n, int d, int k) {
  extern __shared__ __align__(16) double smem[];
  __shared__ double mbd[SB_N / SWN][SB_M];
  __shared__ int mbi[SB_N / SWN][SB_M];
  __shared__ bool last;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, fr = lane / 4, fk = lane % 4;
  const int wmi = warp / (SB_N / SWN), wni = warp % (SB_N / SWN);
  const int wm0 = wmi * SWM, wn0 = wni * SWN;
  const int tiles_n = (k + SB_N - 1) / SB_N;
  // Consecutive blocks share a row of points (in L2); the centroids are small.
  const std::int64_t tm = blockIdx.x / tiles_n;
  const int tn = int(blockIdx.x % tiles_n);
  const std::int64_t m0 = tm * SB_M;
  const int n0 = tn * SB_N;
  const int ktiles = (d + BK - 1) / BK;
  const std::int64_t np = (n + SB_M - 1) / SB_M * SB_M;  // the bests buffer's row length
  static_assert(STHREADS == SB_M, "a thread a point in the epilogue");

  Loader<SB_M, STHREADS, true, VEC> la(X, d, m0, n, tid);
  Loader<SB_N, STHREADS, true, VEC> lb(C, d, n0, k, tid);
  auto issue = [&](int kt) {
    if (kt < ktiles) {
      double* s = smem + (kt % SSTAGES) * (STILE_A + STILE_B);
      la.load(s, std::int64_t(kt) * BK, d);
      lb.load(s + STILE_A, std::int64_t(kt) * BK, d);
    }
    commit();
  };
  double acc[SMI][SNI][4];
#pragma unroll
  for (int i = 0; i < SMI; ++i)
#pragma unroll
    for (int j = 0; j < SNI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;
#pragma unroll
  for (int s = 0; s < SSTAGES - 1; ++s) issue(s);
  for (int kt = 0; kt < ktiles; ++kt) {
    wait_groups<SSTAGES - 2>();
    __syncthreads();
    issue(kt + SSTAGES - 1);
    const double* As = smem + (kt % SSTAGES) * (STILE_A + STILE_B);
    const double* Bs = As + STILE_A;
    // The last tile's second half is all padding when d mod 16 is in (0, 8]: one k8 step.
    const bool half = kt == ktiles - 1 && d - kt * BK <= 8;
    if (!half) {
      double b[SNI][4];
#pragma unroll
      for (int j = 0; j < SNI; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) b[j][q] = Bs[(wn0 + j * 8 + fr) * (BK + PADK) + fk + 4 * q];
#pragma unroll
      for (int i = 0; i < SMI; ++i) {
        const double* ar = As + (wm0 + i * 16 + fr) * (BK + PADK) + fk;
        double a[8];
#pragma unroll
        for (int q = 0; q < 4; ++q) a[2 * q] = ar[4 * q], a[2 * q + 1] = ar[8 * (BK + PADK) + 4 * q];
#pragma unroll
        for (int j = 0; j < SNI; ++j) dmma<16>(acc[i][j], a, b[j]);
      }
    } else {
      double b[SNI][2];
#pragma unroll
      for (int j = 0; j < SNI; ++j)
#pragma unroll
        for (int q = 0; q < 2; ++q) b[j][q] = Bs[(wn0 + j * 8 + fr) * (BK + PADK) + fk + 4 * q];
#pragma unroll
      for (int i = 0; i < SMI; ++i) {
        const double* ar = As + (wm0 + i * 16 + fr) * (BK + PADK) + fk;
        double a[4];
#pragma unroll
        for (int q = 0; q < 2; ++q) a[2 * q] = ar[4 * q], a[2 * q + 1] = ar[8 * (BK + PADK) + 4 * q];
#pragma unroll
        for (int j = 0; j < SNI; ++j) dmma<8>(acc[i][j], a, b[j]);
      }
    }
  }
  wait_groups<0>();

  // acc[i][j][2 h + e]: point wm0 + i * 16 + fr + 8 h, centroid n0 + wn0 + j * 8
  // + 2 fk + e. The best of this thread's columns (in increasing order, a
  // strict < keeps the lowest), then of the row's 4 lanes, then of the
  // block's two column halves.
  double cnv[SNI][2];
#pragma unroll
  for (int j = 0; j < SNI; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int col = n0 + wn0 + j * 8 + 2 * fk + e;
      cnv[j][e] = col < k ? __ldg(cn + col) : 0.0;
    }
#pragma unroll
  for (int i = 0; i < SMI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      double bd = 0;
      int bi = -1;
#pragma unroll
      for (int j = 0; j < SNI; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = n0 + wn0 + j * 8 + 2 * fk + e;
          const double v = fma(-2.0, acc[i][j][2 * h + e], cnv[j][e]);
          if (col < k && (bi < 0 || v < bd)) bd = v, bi = col;
        }
      for (int off = 1; off < 4; off <<= 1) {
        const double ov = __shfl_xor_sync(0xffffffffu, bd, off);
        const int oi = __shfl_xor_sync(0xffffffffu, bi, off);
        if (oi >= 0 && (bi < 0 || ov < bd || (ov == bd && oi < bi))) bd = ov, bi = oi;
      }
      if (fk == 0) {
        const int r = wm0 + i * 16 + fr + 8 * h;
        mbd[wni][r] = bd, mbi[wni][r] = bi;
      }
    }
  __syncthreads();
  if (tid < SB_M) {
    double v = mbd[0][tid];
    int c = mbi[0][tid];
#pragma unroll
    for (int q = 1; q < SB_N / SWN; ++q) {
      const double ov = mbd[q][tid];
      const int oi = mbi[q][tid];
      if (oi >= 0 && (c < 0 || ov < v || (ov == v && oi < c))) v = ov, c = oi;
    }
    pbd[tn * np + m0 + tid] = v;
    pbi[tn * np + m0 + tid] = c;
  }
  __threadfence();  // this block's bests are visible before its ticket says so
  __syncthreads();
  if (tid == 0) {
    last = atomicAdd(&tickets[tm], 1u) == unsigned(tiles_n - 1);
    if (last) tickets[tm] = 0;  // ready for the next iteration
  }
  __syncthreads();
  if (!last) return;
  __threadfence();

  // The row's last block: the best over its tiles (in tile order: a strict <
  // keeps the lowest centroid), the assignment, counts and sums.
  unsigned local = 0;
  int* rc = mbi[0];
  if (tid < SB_M) {
    const std::int64_t r = m0 + tid;
    const bool mine = r < n;
    double v = 0;
    int c = -1;
    if (mine)
      for (int q = 0; q < tiles_n; ++q) {
        const double ov = __ldcg(pbd + q * np + r);
        const int oi = __ldcg(pbi + q * np + r);
        if (c < 0 || ov < v) v = ov, c = oi;
      }
    if (mine) {
      best[r] = xx[r] + v;
      if (assign[r] != c) assign[r] = c, ++local;
    }
    rc[tid] = c;
    const unsigned peers = __match_any_sync(0xffffffffu, c);
    if (c >= 0 && lane == __ffs(peers) - 1) atomicAdd(&counts[c], (unsigned long long)__popc(peers));
  }
  __syncthreads();
  for (int j = tid; j < SB_M * d; j += STHREADS) {
    const int r = j / d, col = j - r * d, c = rc[r];
    if (c >= 0) atomicAdd(&sums[std::int64_t(c) * d + col], __ldg(X + (m0 + r) * d + col));
  }
  add_changed(local, changed);
}

// The points listed cluster by cluster: order[offsets[c] + j] is the j-th
// point of cluster c to arrive (the order within a cluster is not fixed).
__global__ void scatter(const int* __restrict__ assign, const unsigned long long* __restrict__ offsets,
                        unsigned* __restrict__ fill, int* __restrict__ order, std::int64_t n) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int c = assign[i];
    order[offsets[c] + atomicAdd(&fill[c], 1u)] = int(i);
  }
}

// A warp per SEG consecutive points of the list, lanes over coordinates (in
// passes of 128): each run of one cluster is summed in registers and added
// to the sums with one atomic a coordinate.
__global__ void segment_sums(const double* __restrict__ X, const int* __restrict__ assign,
                             const int* __restrict__ order, double* sums, std::int64_t n, int d) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t w = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; w * SEG < n; w += warps) {
    const std::int64_t q0 = w * SEG, q1 = q0 + SEG < n ? q0 + SEG : n;
    for (int t0 = 0; t0 < d; t0 += 128) {
      double acc[4] = {0, 0, 0, 0};
      int cur = -1;
      for (std::int64_t q = q0; q < q1; ++q) {
        const int i = order[q], c = assign[i];  // the same for the whole warp
        if (c != cur) {
          if (cur >= 0)
#pragma unroll
            for (int u = 0; u < 4; ++u) {
              const int t = t0 + lane + 32 * u;
              if (t < d) atomicAdd(&sums[std::int64_t(cur) * d + t], acc[u]);
              acc[u] = 0;
            }
          cur = c;
        }
        const double* row = X + std::int64_t(i) * d;
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int t = t0 + lane + 32 * u;
          if (t < d) acc[u] += row[t];
        }
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int t = t0 + lane + 32 * u;
        if (t < d) atomicAdd(&sums[std::int64_t(cur) * d + t], acc[u]);
      }
    }
  }
}

using AssignKernel = void (*)(const double*, const double*, const double*, const double*, int*, double*,
                              unsigned long long*, unsigned long long*, double*, std::int64_t, int, int);

template <bool FUSED>
AssignKernel assign_kernel(bool vec, int mt) {
  if (mt == 2) return vec ? dmma_assign<2, 2, FUSED> : dmma_assign<1, 2, FUSED>;
  return vec ? dmma_assign<2, 1, FUSED> : dmma_assign<1, 1, FUSED>;
}

class Dmma final : public DeviceKMeans {
 public:
  explicit Dmma(DmmaSums mode) : mode_(mode), fused_(mode != DmmaSums::Segments) {}
  Support supports(const Problem& p) const override {
    const int sm = device_sm_or_zero();
    if (sm == 0) return Support::no("no usable CUDA device");
    if (sm < 90)
      return Support::no("needs sm_90 or newer (f64 mma.sync m16n8k8); this GPU is sm_" + std::to_string(sm));
    if (p.n > 2147483647 || p.k > 2147483647 || p.d > 65536)
      return Support::no("N, K or D exceeds the kernel's int indices");
    if (block_bytes(p.d, 1) > shared_optin_bytes())
      return Support::no("128 points and two 32-centroid tiles of D = " + std::to_string(p.d) + " need " +
                         std::to_string(block_bytes(p.d, 1)) + " bytes of shared memory, more than the " +
                         std::to_string(shared_optin_bytes()) + " a block can have (CUDA.GEMM runs it)");
    return Support::yes();
  }

 protected:
  Layouts layouts() const override { return {true, false}; }
  bool device_update() const override { return true; }
  void after_prepare() override {
    const auto N = p_.n, K = p_.k;
    xx_ = DeviceBuffer<double>(N);
    cn_ = DeviceBuffer<double>(K);
    if (mode_ == DmmaSums::Segments) {
      offsets_ = DeviceBuffer<unsigned long long>(K);
      fill_ = DeviceBuffer<unsigned>(K);
      order_ = DeviceBuffer<int>(N);
      scan_bytes_ = 0;
      PB_CUDA(
          cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes_, counts_.get(), offsets_.get(), int(K), s()));
      scan_tmp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(scan_bytes_, 1));
    }
    const bool vec = p_.d % 2 == 0 && reinterpret_cast<std::uintptr_t>(xa_.get()) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(C_.get()) % 16 == 0;
    if (mode_ == DmmaSums::Stream) {
      const std::int64_t rows = (N + SB_M - 1) / SB_M, tiles_n = (K + SB_N - 1) / SB_N;
      pbd_ = DeviceBuffer<double>(rows * SB_M * tiles_n);
      pbi_ = DeviceBuffer<int>(rows * SB_M * tiles_n);
      tickets_ = DeviceBuffer<unsigned>(rows);
      PB_CUDA(cudaMemsetAsync(tickets_.get(), 0, tickets_.bytes(), s()));
      stream_kernel_ = vec ? dmma_stream<2> : dmma_stream<1>;
      PB_CUDA(cudaFuncSetAttribute(stream_kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(kStreamShared)));
      launch_row_norms(xa_.get(), xx_.get(), N, p_.d, s());
      return;
    }
    // Two 64-centroid tiles where they fit (fewer shared-memory reads an MMA), else 32.
    const int mt = block_bytes(p_.d, 2) <= shared_optin_bytes() ? 2 : 1;
    bytes_ = tile_bytes(p_.d, mt);
    kernel_ = fused_ ? assign_kernel<true>(vec, mt) : assign_kernel<false>(vec, mt);
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
    launch_row_norms(xa_.get(), xx_.get(), N, p_.d, s());
  }
  bool launch_assign() override {
    const auto N = p_.n, D = p_.d, K = p_.k;
    launch_row_norms(C_.get(), cn_.get(), K, D, s());
    if (mode_ == DmmaSums::Stream) {
      const std::int64_t blocks = (N + SB_M - 1) / SB_M * ((K + SB_N - 1) / SB_N);
      stream_kernel_<<<unsigned(blocks), STHREADS, kStreamShared, s()>>>(
          xa_.get(), C_.get(), cn_.get(), xx_.get(), assign_.get(), best_.get(), changed_.get(),
          counts_.get(), sums_.get(), pbd_.get(), pbi_.get(), tickets_.get(), N, int(D), int(K));
      PB_CUDA_LAUNCHED();
      return true;
    }
    const unsigned blocks = unsigned((N + BM - 1) / BM);
    kernel_<<<blocks, THREADS, bytes_, s()>>>(xa_.get(), C_.get(), cn_.get(), xx_.get(), assign_.get(),
                                              best_.get(), changed_.get(), counts_.get(), sums_.get(), N,
                                              int(D), int(K));
    PB_CUDA_LAUNCHED();
    if (fused_) return true;  // the kernel added the sums
    std::size_t bytes = scan_bytes_;
    PB_CUDA(
        cub::DeviceScan::ExclusiveSum(scan_tmp_.get(), bytes, counts_.get(), offsets_.get(), int(K), s()));
    PB_CUDA(cudaMemsetAsync(fill_.get(), 0, fill_.bytes(), s()));
    scatter<<<grid_for(N, 256), 256, 0, s()>>>(assign_.get(), offsets_.get(), fill_.get(), order_.get(), N);
    PB_CUDA_LAUNCHED();
    const std::int64_t warps = (N + SEG - 1) / SEG;
    segment_sums<<<grid_for(warps * 32, 256), 256, 0, s()>>>(xa_.get(), assign_.get(), order_.get(),
                                                             sums_.get(), N, int(D));
    PB_CUDA_LAUNCHED();
    return true;  // sums and counts are done
  }

 private:
  DmmaSums mode_;
  bool fused_;
  AssignKernel kernel_ = nullptr;
  decltype(&dmma_stream<1>) stream_kernel_ = nullptr;
  DeviceBuffer<double> pbd_;
  DeviceBuffer<int> pbi_;
  DeviceBuffer<unsigned> tickets_;
  DeviceBuffer<double> xx_, cn_;
  DeviceBuffer<unsigned long long> offsets_;
  DeviceBuffer<unsigned> fill_;
  DeviceBuffer<int> order_;
  DeviceBuffer<unsigned char> scan_tmp_;
  std::size_t scan_bytes_ = 0, bytes_ = 0;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_dmma(DmmaSums mode) { return std::make_unique<Dmma>(mode); }

}  // namespace pb::kmeans
