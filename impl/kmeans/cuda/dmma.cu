// CUDA.DMMA: the wide shapes (D in the tens to ~200, K in the hundreds),
// where the distances are a GEMM's work. Relative to CUDA.GEMM (cuBLAS
// DGEMM writes G = X C^T, N x K, to memory, then a kernel reads it back for
// the argmin):
//  - the distance GEMM is this project's own FP64 tensor-core kernel
//    (mma.sync m16n8k8 in f64 as the GEMM family's CUDA.DMMA issues it,
//    gemm/cuda/dmma_ops.cuh), and the argmin is its epilogue: G never
//    leaves the registers. A block holds its points (all D coordinates) in
//    shared memory and walks every cluster in tiles, double-buffered: bulk
//    copies (cp.async.bulk, one warp issuing, each buffer's arrival an
//    mbarrier phase, its reuse a named barrier, no block barrier a tile)
//    when D is even, else cp.async, a warp a row. When D % 8 == 4 the rows
//    are unpadded (the last k step an m16n8k4), so a tile is one bulk copy
//    and a block's points one (two with 8 or 16 warps, a copy a half); else
//    a copy a row. With bulk copies and 8 or 16 warps the block's two
//    halves of points run half a tile apart, so one half's argmin overlaps
//    the other's multiplies. A k step's fragments are read from shared
//    memory while the previous step multiplies. The first shape that fits
//    (kWide below): 16 warps over 128 points and 64-centroid tiles, a warp
//    16 points by 32 centroids (D <= 104); else 8 warps over 32-centroid
//    tiles; else 4 warps over 64 points. Each thread keeps the best
//    cluster of its rows across its columns (predicated, with the tile's
//    norms in shared memory), the 4 lanes of a row settle it by shuffles
//    and the warps of a row's column halves through shared memory.
//    Distances in the expanded form |c|^2 - 2 x.c (+ |x|^2 for the
//    inertia), ties to the lowest index.
//  - the sums, two ways:
//     - fused (N / K <= 10,000): the assignment kernel adds each of its
//       points to its cluster's sums from the tile it already holds, one
//       atomic a coordinate, a warp a point, into one of two copies of the
//       K x D sums (blocks alternate; update_step adds them), so the points
//       are read once; the counts in two copies likewise. CUDA.DMMA keeps
//       the sums from one iteration to the next (delta sums, DeviceKMeans::
//       delta_sums): only the points that changed cluster add, themselves
//       to the new one and minus themselves to the old, and every 16th
//       iteration (the first too) the sums start from zero and every point
//       adds. After the first iterations few points move, so a delta
//       iteration issues a small fraction of the atomics of one where every
//       point adds.
//       CUDA.DMMA.Full adds every point every iteration;
//     - with few clusters, where those atomics would pile onto few addresses:
//       an exclusive scan of the counts (CUB) and a scatter list the points
//       cluster by cluster, then a warp takes 16 consecutive points of that
//       list and adds their rows while the cluster stays the same, one atomic
//       a coordinate per run of a cluster.
//    Counts come from the assignment kernel either way.
//  - the update is the shared update_step (device_kmeans.cu), which also
//    writes the centroids' norms for the next assignment; the two kernels
//    are launched early (programmatic dependent launch), so an assignment's
//    blocks copy their points while the update before it runs.
// The multiply loop is bound by the FP64 tensor pipe, so the choices above
// cut the work around it: the copies' index arithmetic, the block
// barriers, the argmin and the sums. Forms that are slower, and so not
// used: a GEMM-style kernel streaming both operands in k tiles; a
// persistent kernel; one barrier a tile; an L2 prefetch of the next wave's
// points; the sums by bulk reduce-add; the norms folded into the
// accumulators; the argmin as selects; a cluster's points summed in
// registers before one atomic; each point's atomics from a rotated column.
// Measurements behind these choices: docs/perf/kmeans-dmma.md.
// Bytes an iteration: the points once (fused) or twice, the centroids once
// per block from L2, O(N) of assignment (and list and counts); the fused
// sums' atomics D a point, or with delta sums 2 D a moved point. Needs sm_90
// (f64 m16n8k8 and m16n8k4, bulk copies) and (64 + 2 * 32) rows of D
// doubles (padded) of shared memory.
#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda/cp_async.cuh"
#include "core/cuda/device_sm.cuh"
#include "core/cuda/mbarrier.cuh"
#ifdef PARBENCH_WITH_NCCL
#include "core/cuda/team.cuh"
#include "core/mpi.hpp"
#endif
#include "gemm/cuda/dmma_ops.cuh"
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {
using namespace pb::cuda_f64;
using namespace pb::cp_async;

constexpr int KW = 8;    // m16n8k8
constexpr int SEG = 16;  // sorted points a warp of the sums takes

// k rounded up to the mma's 8, and the row stride of the shared tiles: that
// plus 4, so a warp's 32 fragment reads (rows g, columns t, g < 8, t < 4)
// take two shared-memory wavefronts, the least 256 bytes can (a stride of
// 4 or 12 mod 16 doubles spreads them over all 16 bank pairs twice).
__host__ __device__ inline int kpad(int d) { return (d + KW - 1) / KW * KW; }
__host__ __device__ inline int stride_for(int d) { return kpad(d) + 4; }
// With bulk copies and D % 8 == 4 the rows stay unpadded: the stride D is
// then 4 or 12 mod 16 already, the last k step is an m16n8k4 that ends at
// D, and a tile is one bulk copy, a block's points one or two (a copy a
// half when the halves run apart), not a copy a row.
__host__ __device__ inline bool unpadded(int d, bool bulk) { return bulk && d % 8 == 4; }
__host__ __device__ inline int stride_of(int d, bool bulk) { return unpadded(d, bulk) ? d : stride_for(d); }
// Named barriers (bar.sync 0 is __syncthreads): arrive without waiting, or
// wait until `count` threads have arrived or waited. Every lane of a warp
// runs the same one.
template <int ID>
__device__ __forceinline__ void named_arrive(int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"n"(ID), "r"(count) : "memory");
}
template <int ID>
__device__ __forceinline__ void named_sync(int count) {
  asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "r"(count) : "memory");
}
// A block shape: WARPS warps as (WARPS / NW) x NW, each warp 16 points by
// 32 centroids (3 fragment reads from shared memory an MMA), so a block
// takes BM = 16 WARPS / NW points and BN = 32 NW centroids a tile.
struct Shape {
  int warps, nw;
};
__host__ __device__ constexpr int bm_for(int warps, int nw) { return 16 * warps / nw; }
std::size_t tile_bytes(std::int64_t d, Shape sh, bool bulk = false) {
  return std::size_t(bm_for(sh.warps, sh.nw) + 2 * 32 * sh.nw) * stride_of(int(d), bulk) * sizeof(double);
}
// Dynamic shared memory, and with it the static rows of the per-point bests
// and left clusters, the tiles' norms and the mbarriers (padded rows: the
// most it can be).
std::size_t block_bytes(std::int64_t d, Shape sh) {
  return tile_bytes(d, sh) + std::size_t(sh.nw) * bm_for(sh.warps, sh.nw) * (sizeof(double) + sizeof(int)) +
         std::size_t(bm_for(sh.warps, sh.nw)) * sizeof(int) +
         2 * (32 * std::size_t(sh.nw) * sizeof(double) + sizeof(std::uint64_t)) + sizeof(std::uint64_t);
}

// Rows [r0, r0 + R) of a rows x d row-major matrix into s (row stride S),
// zero past the matrix and in the columns [d, kpad(d)), by cp.async: a warp
// a row, lanes along it, VEC doubles a copy.
template <int R, int VEC, int WARPS>
__device__ __forceinline__ void load_rows(double* s, const double* m, std::int64_t r0, std::int64_t rows,
                                          int d, int S) {
  const int per_row = kpad(d) / VEC, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r = warp; r < R; r += WARPS) {
    const bool row_ok = r0 + r < rows;
    const double* src = row_ok ? m + (r0 + r) * d : m;
    double* dst = s + r * S;
#pragma unroll 1
    for (int c = lane; c < per_row; c += 32) {
      const int kc = c * VEC;
      const bool ok = row_ok && kc < d;
      copy<VEC * 8>(dst + kc, ok ? src + kc : m, ok);
    }
  }
}

// Assignment of BM points against all K centroids on the FP64 tensor cores,
// the argmin in the epilogue; also counts each cluster's points and, with
// FUSED, adds each point's coordinates to its cluster's sums (an atomic a
// coordinate, from the tile in shared memory: the points are read once),
// into copy blockIdx.x % reps of the sums, and the counts into that copy
// of theirs. With FUSED and !every (a delta iteration: the sums and counts
// still hold the last iteration's, see DeviceKMeans::delta_sums) only the
// points that moved add, themselves to their new cluster and minus
// themselves to their old. Copies: with VEC = 2 (D even,
// rows 16-byte aligned) bulk copies that one warp (the producer) issues,
// each tile buffer's arrival a phase of its mbarrier and its reuse a named
// barrier the other warps arrive at (so no block barrier a tile); else
// cp.async, a warp a row, and a block barrier a tile. Tile t's centroid
// norms come with it into shared memory. Launched early (launch_early): the
// points are copied before grid_wait(), everything the previous kernel
// writes after it.
template <int VEC, int NW, bool FUSED, int WARPS>
__global__ void __launch_bounds__(WARPS * 32, WARPS == 4 ? 2 : 1)
    dmma_assign(const double* __restrict__ X, const double* __restrict__ C, const double* __restrict__ cn,
                const double* __restrict__ xx, int* __restrict__ assign, double* __restrict__ best,
                unsigned long long* __restrict__ changed, unsigned long long* __restrict__ counts,
                double* __restrict__ sums, std::int64_t n, int d, int k, int reps, bool every) {
  constexpr int BN = 32 * NW, NT = 4, BM = bm_for(WARPS, NW),
                THREADS = WARPS * 32;  // NT: a warp's 32 centroids
  constexpr bool BULK = VEC == 2;
  extern __shared__ __align__(16) double sm[];
  __shared__ double rbd[NW][BM];  // the warps' best of each point in each column part
  __shared__ int rbi[NW][BM];
  __shared__ int rsub[BM];                     // FUSED, delta: the cluster a moved point left (-1: none)
  __shared__ __align__(16) double cns[2][BN];  // the tiles' squared norms
  __shared__ std::uint64_t full[2];            // BULK: tile buffer b's arrival
  __shared__ std::uint64_t half;               // split: the second half's points landed
  // BULK with 8 or 16 warps: the warps of the block's second half of points
  // (one or two a scheduler) run half a tile behind the first half's, so one
  // half's argmin overlaps the other's multiplies; the last warp issues the
  // copies.
  constexpr bool HALVES = BULK && WARPS >= 8;
  const bool contig = unpadded(d, BULK), split = HALVES && contig;
  const int S = stride_of(d, BULK), kp = kpad(d);
  double* xs = sm;  // BM x S points, then two BN x S centroid tiles
  auto tile_at = [&](int t) { return sm + (BM + (t & 1) * BN) * S; };
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, fr = lane / 4, fk = lane % 4;
  const int producer = HALVES ? WARPS - 1 : 0;
  const int wm = warp / NW, wn = warp % NW;
  const int wr = wm * 16;  // the warp's first row of the block's points
  const std::int64_t r0 = std::int64_t(blockIdx.x) * BM;
  const int tiles = (k + BN - 1) / BN;
  // cp.async: tile t's centroids and norms into buffer t & 1.
  auto load_tile = [&](int t) {
    load_rows<BN, VEC, WARPS>(tile_at(t), C, std::int64_t(t) * BN, k, d, S);
    for (int j = tid; j < BN; j += THREADS) {
      const int col = t * BN + j;
      copy<8>(&cns[t & 1][j], col < k ? cn + col : cn, col < k);
    }
  };
  // BULK, the producer warp: tile t (rows and norms; first the block's
  // points when points) into buffer t & 1, one phase of its mbarrier; with
  // split, the second half of the points on `half`, after the tile.
  const unsigned row_bytes = unsigned(d) * 8;
  auto bulk_tile = [&](int t, bool points) {
    const int b = t & 1;
    const std::int64_t c0 = std::int64_t(t) * BN;
    const int rows = int(k - c0 < BN ? k - c0 : BN);
    const int prows = points ? int(n - r0 < BM ? n - r0 : BM) : 0;
    const int pa = split && prows > BM / 2 ? BM / 2 : prows, pb = prows - pa;  // pb: on `half`
    if (lane == 0) mbarrier::expect_bytes(&full[b], unsigned(rows + pa) * row_bytes + BN * 8);
    __syncwarp();
    // Unpadded rows are as contiguous here as in memory: one copy a run of
    // them; else a copy a row.
    if (contig) {
      if (lane == 0 && pa > 0) mbarrier::bulk_copy(xs, X + r0 * d, unsigned(pa) * row_bytes, &full[b]);
    } else {
      for (int r = lane; r < prows; r += 32)
        mbarrier::bulk_copy(xs + r * S, X + (r0 + r) * d, row_bytes, &full[b]);
    }
    if (points) grid_wait();  // the centroids and norms are the previous kernel's
    if (contig) {
      if (lane == 0) mbarrier::bulk_copy(tile_at(t), C + c0 * d, unsigned(rows) * row_bytes, &full[b]);
    } else {
      for (int r = lane; r < rows; r += 32)
        mbarrier::bulk_copy(tile_at(t) + r * S, C + (c0 + r) * d, row_bytes, &full[b]);
    }
    if (lane == 0) {
      mbarrier::bulk_copy(&cns[b][0], cn + c0, BN * 8, &full[b]);  // cn is padded to whole tiles
      if (split && points && pb > 0) {                             // the second half's points, after the tile
        mbarrier::expect_bytes(&half, unsigned(pb) * row_bytes);
        mbarrier::bulk_copy(xs + (BM / 2) * S, X + (r0 + BM / 2) * d, unsigned(pb) * row_bytes, &half);
      } else if (split && points) {
        mbarrier::arrive(&half);
      }
    }
    __syncwarp();  // the warp together again after its lane-0 copies
  };

  if (BULK) {
    if (tid == 0) {
      mbarrier::init(&full[0], 1);
      mbarrier::init(&full[1], 1);
      mbarrier::init(&half, 1);
      mbarrier::fence_init();
    }
    // Bulk copies write columns [0, d) of a row (rows past N or K are not
    // copied: their results are never used); padded rows' columns up to kp
    // stay the zero written here, in the points and both tile buffers.
    const int pad = contig ? 0 : kp - d;
    for (int i = tid; i < (BM + 2 * BN) * pad; i += THREADS) sm[(i / pad) * S + d + i % pad] = 0;
    __syncthreads();
    if (warp == producer) {
      bulk_tile(0, true);
      if (tiles > 1) bulk_tile(1, false);
    } else {
      grid_wait();
    }
  } else {
    load_rows<BM, VEC, WARPS>(xs, X, r0, n, d, S);
    grid_wait();  // the centroids, norms, sums and counts are the previous kernel's
    load_tile(0);
    commit();
    if (tiles > 1) load_tile(1);
    commit();
  }

  double bd[2] = {0, 0};  // rows fr and fr + 8 of the warp's 16
  int bi[2] = {-1, -1};
  const bool late = HALVES && warp >= WARPS / 2;
  if (late) {
    if (split) mbarrier::wait(&half, 0);
    __syncwarp();            // after the spin on `half`
    named_sync<1>(THREADS);  // the first half is midway through tile 0
  }
  for (int t = 0; t < tiles; ++t) {
    if (BULK) {
      mbarrier::wait(&full[t & 1], (t >> 1) & 1);  // tile t (and the points) landed
    } else {
      wait_groups<1>();  // tile t (and the points) landed: this thread's copies
      __syncthreads();   // ... and everyone's
    }
    const double* cs = tile_at(t) + wn * 32 * S;
    // acc[j][2 h + e] is (row fr + 8 h, column j * 8 + 2 fk + e of the
    // warp's 32): this thread's columns in increasing order, so the argmin's
    // strict < keeps the lowest. Columns past K are predicated off there,
    // not branched around.
    double acc[NT][4] = {};
    // A k step's fragments are read while the previous step multiplies.
    double a[2][4], b[2][NT][2];
    auto frag = [&](int kk, double(&fa)[4], double(&fb)[NT][2]) {
      const double* xa = xs + (wr + fr) * S + kk + fk;
      fa[0] = xa[0], fa[1] = xa[8 * S], fa[2] = xa[4], fa[3] = xa[8 * S + 4];
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const double* cc = cs + (j * 8 + fr) * S + kk + fk;
        fb[j][0] = cc[0], fb[j][1] = cc[4];
      }
    };
    auto mul = [&](const double(&fa)[4], const double(&fb)[NT][2]) {
#pragma unroll
      for (int j = 0; j < NT; ++j) dmma<KW>(acc[j], fa, fb[j]);
    };
    const int kend = contig ? kp - KW : kp;  // the k8 steps (unpadded rows: then a k4 one)
    if (kend > 0) frag(0, a[0], b[0]);
    // The first half lets the second start midway through tile 0's k steps.
    const bool mid = HALVES && !late && t == 0;
    const int kmid = kend / (2 * KW) / 2 * 2 * KW;
    if (mid && kmid == 0) named_arrive<1>(THREADS);
    int kk = 0;
    for (; kk + 2 * KW <= kend; kk += 2 * KW) {
      if (mid && kmid > 0 && kk == kmid) named_arrive<1>(THREADS);
      frag(kk + KW, a[1], b[1]);
      mul(a[0], b[0]);
      if (kk + 2 * KW < kend) frag(kk + 2 * KW, a[0], b[0]);
      mul(a[1], b[1]);
    }
    if (kk < kend) mul(a[0], b[0]);
    if (contig) {
      const double* xa = xs + (wr + fr) * S + kend + fk;
      const double ta[2] = {xa[0], xa[8 * S]};
      double tb[NT][1];
#pragma unroll
      for (int j = 0; j < NT; ++j) tb[j][0] = cs[(j * 8 + fr) * S + kend + fk];
#pragma unroll
      for (int j = 0; j < NT; ++j) dmma<4>(acc[j], ta, tb[j]);
    }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int cl = wn * 32 + j * 8 + 2 * fk + e, col = t * BN + cl;
        const bool ok = col < k;
        const double c2 = cns[t & 1][cl];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const double v = fma(-2.0, acc[j][2 * h + e], c2);
          if (ok && (bi[h] < 0 || v < bd[h])) bd[h] = v, bi[h] = col;
        }
      }
    if (BULK) {  // no block barrier: the producer waits for every warp to be done with tile t's buffer
      if (t + 2 < tiles) {
        if (warp != producer) {
          (t & 1) ? named_arrive<5>(THREADS) : named_arrive<4>(THREADS);
        } else {
          (t & 1) ? named_sync<5>(THREADS) : named_sync<4>(THREADS);
          bulk_tile(t + 2, false);
        }
      }
      continue;
    }
    __syncthreads();  // every warp is done with tile t's buffer
    if (t + 2 < tiles) load_tile(t + 2);
    commit();  // an empty group past the end keeps the count the wait expects
  }
  if (!BULK) wait_groups<0>();
  grid_release();  // the update may start once every block is here

  // The 4 lanes of a row hold interleaved columns: the smaller distance, on a
  // tie the lower cluster; then the warps of the other column parts.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    for (int off = 1; off < 4; off <<= 1) {
      const double ov = __shfl_xor_sync(0xffffffffu, bd[h], off);
      const int oi = __shfl_xor_sync(0xffffffffu, bi[h], off);
      if (oi >= 0 && (bi[h] < 0 || ov < bd[h] || (ov == bd[h] && oi < bi[h]))) bd[h] = ov, bi[h] = oi;
    }
    if (fk == 0) {
      const int r = wr + fr + 8 * h;
      rbd[wn][r] = bd[h], rbi[wn][r] = bi[h];
    }
  }
  __syncthreads();
  unsigned local = 0;
  const bool all = !FUSED || every;  // every point adds itself (the segment sums take them all)
  if (tid < BM) {                    // thread pt: point pt of the block
    const int pt = tid;
    double v = rbd[0][pt];
    int c = rbi[0][pt];
#pragma unroll
    for (int q = 1; q < NW; ++q) {
      const double ov = rbd[q][pt];
      const int oi = rbi[q][pt];
      if (oi >= 0 && (c < 0 || ov < v || (ov == v && oi < c))) v = ov, c = oi;
    }
    const std::int64_t r = r0 + pt;
    const bool mine = r < n;
    int old = -1;
    if (mine) {
      best[r] = xx[r] + v;
      old = assign[r];
      if (old != c) assign[r] = c, ++local;
    }
    // What the point adds: in a full iteration itself to its cluster; in a
    // delta one, only if it moved, itself to its new cluster and minus
    // itself to the one it left (none before its first assignment).
    const bool moved = mine && old != c;
    const int add = mine && (all || moved) ? c : -1, sub = !all && moved ? old : -1;
    rbi[0][pt] = add;
    if (FUSED) rsub[pt] = sub;
    // One count atomic a cluster a warp, from the lowest of its lanes; a
    // delta iteration's decrements wrap in the copy and cancel in the sum
    // of the copies update_step takes.
    unsigned long long* cnt = counts + std::int64_t(blockIdx.x % reps) * k;
    const unsigned peers = __match_any_sync(0xffffffffu, add);
    if (add >= 0 && lane == __ffs(peers) - 1) atomicAdd(&cnt[add], (unsigned long long)__popc(peers));
    if (!all) {
      const unsigned left = __match_any_sync(0xffffffffu, sub);
      if (sub >= 0 && lane == __ffs(left) - 1) atomicAdd(&cnt[sub], 0ull - (unsigned long long)__popc(left));
    }
  }
  if (FUSED) {
    if (split) mbarrier::wait(&half, 0);              // every thread reads the second half's rows here
    __syncthreads();                                  // rbi[0] / rsub: the cluster a point adds to / leaves
    sums += std::int64_t(blockIdx.x % reps) * k * d;  // this block's copy of the sums
    for (int r = warp; r < BM; r += WARPS) {          // a warp a point, lanes along its row
      const int c = rbi[0][r], o = rsub[r];
      if (c < 0) continue;  // (o >= 0 only where c >= 0)
      double* srow = sums + std::int64_t(c) * d;
      if (o < 0) {
#pragma unroll 1
        for (int col = lane; col < d; col += 32) atomicAdd(srow + col, xs[r * S + col]);
      } else {
        double* orow = sums + std::int64_t(o) * d;
#pragma unroll 1
        for (int col = lane; col < d; col += 32) {
          const double x = xs[r * S + col];
          atomicAdd(srow + col, x);
          atomicAdd(orow + col, -x);
        }
      }
    }
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
                              unsigned long long*, unsigned long long*, double*, std::int64_t, int, int, int,
                              bool);

template <bool FUSED>
AssignKernel assign_kernel(bool vec, Shape sh) {
  if (sh.warps == 16) return vec ? dmma_assign<2, 2, FUSED, 16> : dmma_assign<1, 2, FUSED, 16>;
  if (sh.warps == 4) return vec ? dmma_assign<2, 1, FUSED, 4> : dmma_assign<1, 1, FUSED, 4>;
  return vec ? dmma_assign<2, 1, FUSED, 8> : dmma_assign<1, 1, FUSED, 8>;
}

// The shapes CUDA.DMMA takes, the first that fits: 16 warps of 16 x 32 over
// 128 points and 64-centroid tiles (D <= 104); 8 warps of 16 x 32 over
// 32-centroid tiles; 4 warps over 64 points. 16 warps of 16 x 32, not 8 of
// 32 x 32: 3 fragment reads an MMA instead of 2, but twice the warps a
// scheduler to hide latency, which is faster; and one 16-warp block an SM
// with two tile buffers, not two 8-warp blocks with one buffer each, which
// is slower.
constexpr Shape kWide{16, 2}, kNarrow{8, 1}, kSmall{4, 1};

// Whether the assignment kernel adds the sums (see after_prepare).
bool fuses(const Problem& p) { return p.n <= 10000 * p.k; }

class Dmma final : public DeviceKMeans {
 public:
  // delta: with the fused sums, an iteration adds only the points that moved
  // (CUDA.DMMA); else every point every iteration (CUDA.DMMA.Full).
  explicit Dmma(bool delta) : delta_(delta) {}
  Support supports(const Problem& p) const override {
    const int sm = device_sm_or_zero();
    if (sm == 0) return Support::no("no usable CUDA device");
    if (sm < 90)
      return Support::no("needs sm_90 or newer (f64 mma.sync m16n8k8); this GPU is sm_" + std::to_string(sm));
    if (p.n > 2147483647 || p.k > 2147483647 || p.d > 65536)
      return Support::no("N, K or D exceeds the kernel's int indices");
    if (block_bytes(p.d, kSmall) > gpu_status().shared_optin_bytes)
      return Support::no(
          "64 points and two 32-centroid tiles of D = " + std::to_string(p.d) + " need " +
          std::to_string(block_bytes(p.d, kSmall)) + " bytes of shared memory, more than the " +
          std::to_string(gpu_status().shared_optin_bytes) + " a block can have (CUDA.GEMM runs it)");
    return Support::yes();
  }

 protected:
  Layouts layouts() const override { return {true, false}; }
  bool device_update() const override { return true; }
  double* centroid_norms() override { return cn_.get(); }
  // Two copies of the sums, blocks alternating: halves the atomics on a
  // row of a big cluster (clustered points draw many to a few rows); four
  // copies are no faster. Without the fused sums (few clusters) the
  // segment sums add to one copy, and the scan of the counts reads one
  // copy of K.
  int sum_replicas() const override { return fuses(p_) ? 2 : 1; }
  bool delta_sums() const override { return delta_ && fuses(p_); }
  void after_prepare() override {
    const auto N = p_.n, K = p_.k;
    xx_ = DeviceBuffer<double>(N);
    // Padded to whole 64-centroid tiles (the bulk copies take a tile's norms
    // whole; past K they are never used).
    cn_ = DeviceBuffer<double>((K + 63) / 64 * 64);
    PB_CUDA(cudaMemsetAsync(cn_.get(), 0, cn_.bytes(), s()));
    // Sums from the assignment kernel's tile (an atomic a coordinate) unless
    // the clusters are so few that those atomics pile onto few addresses:
    // with hundreds of points a cluster the fused sums are faster than the
    // scan, scatter and segment passes; with hundreds of thousands they
    // are slower.
    fused_ = fuses(p_);
    if (!fused_) {
      offsets_ = DeviceBuffer<unsigned long long>(K);
      fill_ = DeviceBuffer<unsigned>(K);
      order_ = DeviceBuffer<int>(N);
      scan_bytes_ = 0;
      PB_CUDA(
          cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes_, counts_.get(), offsets_.get(), int(K), s()));
      scan_tmp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(scan_bytes_, 1));
    }
    // The largest block shape that fits (64-point blocks, two an SM, are
    // slower at D = 100).
    const std::size_t optin = gpu_status().shared_optin_bytes;
    shape_ = kSmall;
    for (Shape sh : {kWide, kNarrow})
      if (block_bytes(p_.d, sh) <= optin) {
        shape_ = sh;
        break;
      }
    const bool vec = p_.d % 2 == 0 && reinterpret_cast<std::uintptr_t>(xa_.get()) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(C_.get()) % 16 == 0;
    bytes_ = tile_bytes(p_.d, shape_, vec);
    kernel_ = fused_ ? assign_kernel<true>(vec, shape_) : assign_kernel<false>(vec, shape_);
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
    launch_row_norms(xa_.get(), xx_.get(), N, p_.d, s());
  }
  bool launch_assign() override {
    const auto N = p_.n, D = p_.d, K = p_.k;
    const int bm = bm_for(shape_.warps, shape_.nw);
    const unsigned blocks = unsigned((N + bm - 1) / bm);
    // Launched early: its blocks copy their points while the previous
    // iteration's update runs (grid_wait, grid_release).
    launch_early(kernel_, blocks, unsigned(shape_.warps * 32), bytes_, s(), xa_.get(), C_.get(), cn_.get(),
                 xx_.get(), assign_.get(), best_.get(), changed_.get(), counts_.get(), sums_.get(), N, int(D),
                 int(K), sum_replicas(), full_sums());
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
  bool delta_ = true, fused_ = true;
  Shape shape_ = kWide;
  AssignKernel kernel_ = nullptr;
  DeviceBuffer<double> xx_, cn_;
  DeviceBuffer<unsigned long long> offsets_;
  DeviceBuffer<unsigned> fill_;
  DeviceBuffer<int> order_;
  DeviceBuffer<unsigned char> scan_tmp_;
  std::size_t scan_bytes_ = 0, bytes_ = 0;
};

#ifdef PARBENCH_WITH_NCCL
// CUDA.NCCL's step for wide points (D > 32, where OneRead does not run):
// CUDA.DMMA.Full on every GPU of the team (core/cuda/team.cuh), each on its
// slice of the points (team member q holds points N q / T to N (q+1) / T).
// An iteration: each GPU's assignment adds its points into its sums and
// counts; one NCCL all-reduce (a group: the sums and counts of every replica
// and the changed count) leaves every GPU the whole problem's; every GPU runs
// the same update on the same numbers, so all form the same centroids and
// the same exit decision, and the host reads the first GPU's flag. Delta
// sums do not apply: a GPU's sums hold everyone's after the all-reduce, so
// every point adds every iteration. The timer's stream is the first GPU's,
// which the other GPUs' streams start after and which ends after them.
class DmmaTeam final : public Variant {
 public:
  DmmaTeam(int gpus, int parts, bool over_ranks) : parts_(parts), team_(gpus, over_ranks) {}
  ~DmmaTeam() override { release(); }

  Support supports(const Problem& p) const override {
    if (parts_ != team_.size()) return Support::no("one part a GPU");
    if (Support s = team_.supports(parts_); !s.ok()) return s;
    const std::int64_t T = team_.size();
    if (p.n < T) return Support::no("fewer points than GPUs");
    // Every GPU all-reduces as many sums as the others: their slices must
    // agree on how DMMA adds them.
    Problem lo = p, hi = p;
    lo.n = p.n / T, hi.n = (p.n + T - 1) / T;
    if (fuses(lo) != fuses(hi)) return Support::no("the GPUs' slices straddle DMMA's fused-sums threshold");
    return Dmma(false).supports(p);
  }

  void prepare(const Problem& p, const Inputs& in) override {
    const DeviceGuard guard;
    release();
    team_.connect();  // first: see core/cuda/team.cuh
    p_ = p;
    const std::int64_t T = team_.size(), D = p.d;
    for (int g = 0; g < team_.local(); ++g) {
      auto sl = std::make_unique<Slice>();
      const std::int64_t q = team_.first() + g;
      sl->lo = p.n * q / T, sl->hi = p.n * (q + 1) / T;
      sl->in.points.assign(in.points.begin() + sl->lo * D, in.points.begin() + sl->hi * D);
      sl->in.init = in.init;
      Problem part = p;
      part.n = sl->hi - sl->lo;
      PB_CUDA(cudaSetDevice(team_.device(g)));
      sl->dmma = std::make_unique<Dmma>(false);
      sl->dmma->prepare(part, sl->in);
      slices_.push_back(std::move(sl));
    }
    std::vector<cudaStream_t> streams;
    for (int g = 0; g < team_.local(); ++g) streams.push_back(stream_of(g));
    PB_CUDA(cudaSetDevice(team_.device(0)));
    fan_ = std::make_unique<StreamFan>(team_.devices(), streams);  // the first GPU's stream is the timer's
    PB_CUDA(cudaMallocHost(&h_flag_, sizeof(Flag)));
  }

  void reset() override {
    const DeviceGuard guard;
    for (int g = 0; g < team_.local(); ++g) {
      PB_CUDA(cudaSetDevice(team_.device(g)));
      slices_[std::size_t(g)]->dmma->reset();
    }
    iterations_ = 0;
  }

  void run() override {
    const DeviceGuard guard;
    failed_ = true;  // until run() returns normally
    fan_->start();
    const int per_read = p_.crit.fixed ? p_.crit.loops : 1;
    for (;;) {
      for (int it = 0; it < per_read; ++it) {
        for (int g = 0; g < team_.local(); ++g) {
          PB_CUDA(cudaSetDevice(team_.device(g)));
          slices_[std::size_t(g)]->dmma->launch_partials();
        }
        all_reduce();
        for (int g = 0; g < team_.local(); ++g) {
          PB_CUDA(cudaSetDevice(team_.device(g)));
          slices_[std::size_t(g)]->dmma->launch_update_of(p_.n);
        }
      }
      PB_CUDA(cudaSetDevice(team_.device(0)));
      PB_CUDA(cudaMemcpyAsync(h_flag_, slices_[0]->dmma->device_flag(), sizeof(Flag), cudaMemcpyDeviceToHost,
                              s0()));
      PB_CUDA(cudaStreamSynchronize(s0()));
      iterations_ = h_flag_->iterations;
      if (h_flag_->stop) break;
      if (p_.crit.fixed)  // the exit test stops a fixed run at `loops` itself: reaching here is a bug
        throw std::logic_error(
            "CUDA.NCCL: the fixed iterations ran and the device's exit test has not stopped");
    }
    fan_->join();
    failed_ = false;
  }

  void result(Result& out) override {
    const DeviceGuard guard;
    out.assign.resize(std::size_t(p_.n));
    out.centroids.resize(std::size_t(p_.k * p_.d));
    std::vector<double> best(std::size_t(p_.n));
    for (int g = 0; g < team_.local(); ++g) {
      Slice& sl = *slices_[std::size_t(g)];
      PB_CUDA(cudaSetDevice(team_.device(g)));
      sl.dmma->download(out.assign.data() + sl.lo, best.data() + sl.lo, out.centroids.data());
    }
    // Every GPU holds the same centroids; rank 0 the whole assignment.
    team_.gather(out.assign, slices_.front()->lo, slices_.back()->hi);
    team_.gather(best, slices_.front()->lo, slices_.back()->hi);
    out.iterations = iterations_;
    out.inertia = 0;
    for (double v : best) out.inertia += v;
  }

  void* stream() override { return slices_.empty() ? nullptr : slices_[0]->dmma->stream(); }

  // The last run's all-reduces alone, one group an iteration; bytes are what
  // each GPU contributes (nccl-tests' message size).
  CommProfile communication() override {
    const DeviceGuard guard;
    if (team_.size() < 2) return {};
    team_.sync();
    mpi::barrier();  // over ranks: every rank's all-reduces start together, the slowest counts
    PB_CUDA(cudaSetDevice(team_.device(0)));
    Stopwatch watch;
    watch.begin(s0());
    fan_->start();
    for (int it = 0; it < iterations_; ++it) all_reduce();
    fan_->join();
    const double seconds = mpi::max(watch.end(s0()));
    Dmma& d = *slices_[0]->dmma;
    const double per = double(d.partial_sums_count() + d.partial_counts_count() + 1) * 8.0;
    return {per * iterations_, seconds};
  }

 private:
  struct Slice {
    std::int64_t lo = 0, hi = 0;  // points lo <= i < hi
    Inputs in;                    // those points (the instance keeps a pointer)
    std::unique_ptr<Dmma> dmma;
  };
  cudaStream_t s0() { return static_cast<cudaStream_t>(slices_[0]->dmma->stream()); }
  cudaStream_t stream_of(int g) { return static_cast<cudaStream_t>(slices_[std::size_t(g)]->dmma->stream()); }
  // One iteration's all-reduce, in place, every GPU at once.
  void all_reduce() {
    NcclGroup group;
    for (int g = 0; g < team_.local(); ++g) {
      Dmma& d = *slices_[std::size_t(g)]->dmma;
      const ncclComm_t c = team_.comm(g);
      const cudaStream_t st = stream_of(g);
      PB_NCCL(ncclAllReduce(d.partial_sums(), d.partial_sums(), d.partial_sums_count(), ncclDouble, ncclSum,
                            c, st));
      PB_NCCL(ncclAllReduce(d.partial_counts(), d.partial_counts(), d.partial_counts_count(), ncclUint64,
                            ncclSum, c, st));
      PB_NCCL(ncclAllReduce(d.changed_count(), d.changed_count(), 1, ncclUint64, ncclSum, c, st));
    }
    group.end();
  }
  void release() {
    team_.release(failed_);
    failed_ = false;
    fan_.reset();  // its streams are the slices'
    slices_.clear();
    if (h_flag_) cudaFreeHost(h_flag_);
    h_flag_ = nullptr;
  }

  int parts_;
  GpuTeam team_;
  Problem p_;
  std::vector<std::unique_ptr<Slice>> slices_;
  std::unique_ptr<StreamFan> fan_;  // over the slices' own streams
  Flag* h_flag_ = nullptr;          // pinned
  int iterations_ = 0;
  bool failed_ = false;  // a run() threw: the communicators are aborted, not destroyed
};
#endif

}  // namespace

std::unique_ptr<Variant> make_cuda_dmma(SumUpdate sums) {
  return std::make_unique<Dmma>(sums == SumUpdate::Delta);
}

#ifdef PARBENCH_WITH_NCCL
std::unique_ptr<Variant> make_cuda_dmma_nccl(int gpus, int parts, bool over_ranks) {
  return std::make_unique<DmmaTeam>(gpus, parts, over_ranks);
}
#endif

}  // namespace pb::kmeans
