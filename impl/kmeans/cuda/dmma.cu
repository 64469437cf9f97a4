// CUDA.DMMA: the wide shapes (D in the tens to ~200, K in the hundreds),
// where the distances are a GEMM's work. Relative to CUDA.GEMM (cuBLAS
// DGEMM writes G = X C^T, N x K, to memory, then a kernel reads it back for
// the argmin):
//  - the distance GEMM is this project's own FP64 tensor-core kernel
//    (mma.sync m16n8k8 in f64 as the GEMM family's CUDA.DMMA issues it,
//    gemm/cuda/dmma_ops.cuh, fed by cp.async copies, core/cuda/cp_async.cuh),
//    and the argmin is its epilogue: G never leaves the registers. A block
//    holds its points (all D coordinates) in shared memory and walks every
//    cluster in tiles, double-buffered by cp.async. The first shape that
//    fits (kWide below): 16 warps over 128 points and 64-centroid tiles, a
//    warp 16 points by 32 centroids (D <= 104); else 8 warps over
//    32-centroid tiles; else 4 warps over 64 points. Each thread keeps the
//    best cluster of its rows across its columns, the 4 lanes of a row
//    settle it by shuffles and the warps of a row's column halves through
//    shared memory. Distances in
//    the expanded form |c|^2 - 2 x.c (+ |x|^2 for the inertia), ties to the
//    lowest index.
//  - the sums, two ways:
//     - fused (N / K <= 10,000): the assignment kernel adds each of its
//       points to its cluster's sums from the tile it already holds, one
//       atomic a coordinate on K x D addresses, so the points are read once;
//     - with few clusters, where those atomics would pile onto few addresses:
//       an exclusive scan of the counts (CUB) and a scatter list the points
//       cluster by cluster, then a warp takes 16 consecutive points of that
//       list and adds their rows while the cluster stays the same, one atomic
//       a coordinate per run of a cluster.
//    Counts come from the assignment kernel either way.
// Measured against other forms (H100, results/nvidia-h100/issue20): 8 warps
// of 32 x 32 were 10% slower than the 16 warps (w16-run); a GEMM-style
// kernel streaming both operands in k tiles of 16 (the last block of a row
// of points merging the bests) took 0.33 ms an iteration at
// 100,000 x 100 x 316 against 0.26 for the 8 warps in the same call
// (kmeans-run4), its 7 k tiles too few to fill a copy ring. A persistent
// form (one block an SM walking point blocks, points and centroid tiles
// swapping halves of shared memory so the next block's points load during
// this one's argmin and sums) was slower: 0.248 / 0.266 ms an iteration
// against 0.242 / 0.257, its kernel 274 us against 264 under ncu
// (dmma-persist-run): the copy of a block's points was not what limits it.
// The update and exit test are the shared device update (device_kmeans.cu).
// Bytes an iteration: the points once (fused) or twice, the centroids once
// per block from L2, O(N) of assignment (and list and counts). Needs sm_90
// (f64 m16n8k8) and (64 + 2 * 32) rows of D doubles (padded) of shared
// memory.
#include <algorithm>
#include <cstdlib>
#include <cub/device/device_scan.cuh>
#include <string>

#include "core/cuda/cp_async.cuh"
#include "core/cuda/device_sm.cuh"
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
// A block shape: WARPS warps as (WARPS / NW) x NW, each warp MT m-tiles of
// 16 points by 32 centroids, so a block takes BM = 16 MT WARPS / NW points
// and BN = 32 NW centroids a tile. MT = 2 reads 2 fragments from shared
// memory an MMA, MT = 1 reads 3 (but holds half the accumulators, so twice
// the warps fit).
struct Shape {
  int warps, mt, nw, bufs;  // bufs: centroid tile buffers (1: two blocks an SM)
};
__host__ __device__ constexpr int bm_for(int warps, int mt, int nw) { return 16 * mt * warps / nw; }
std::size_t tile_bytes(std::int64_t d, Shape sh) {
  return std::size_t(bm_for(sh.warps, sh.mt, sh.nw) + sh.bufs * 32 * sh.nw) * stride_for(int(d)) *
         sizeof(double);
}
// Dynamic shared memory, and with it the static rows of the per-point bests.
std::size_t block_bytes(std::int64_t d, Shape sh) {
  return tile_bytes(d, sh) +
         std::size_t(sh.nw) * bm_for(sh.warps, sh.mt, sh.nw) * (sizeof(double) + sizeof(int)) +
         std::size_t(sh.bufs) * (32 * sh.nw * sizeof(double) + sizeof(unsigned long long));
}

// Rows [r0, r0 + R) of a rows x d row-major matrix into s (row stride S),
// zero past the matrix and in the columns [d, kpad(d)): VEC doubles a copy
// (2 when d is even and the matrix 16-byte aligned). FAST: a warp a row,
// lanes along it (no index division); else chunks spread over the threads.
template <int R, int VEC, int WARPS, bool FAST>
__device__ __forceinline__ void load_rows(double* s, const double* m, std::int64_t r0, std::int64_t rows,
                                          int d, int S) {
  const int per_row = kpad(d) / VEC;
  if (FAST) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
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
  } else {
    for (int ch = threadIdx.x; ch < R * per_row; ch += blockDim.x) {
      const int r = ch / per_row, kc = (ch - r * per_row) * VEC;
      const bool ok = r0 + r < rows && kc < d;
      copy<VEC * 8>(s + r * S + kc, ok ? m + (r0 + r) * d + kc : m, ok);
    }
  }
}

// Bulk copies (cp.async.bulk, sm_90) completing on an mbarrier in shared
// memory: the BULK form's rows, one instruction a row.
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, "
        "p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes,
                                          unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// Forms of the assignment kernel (TEMP A/B switches, PARBENCH_DMMA_FORM):
// TAIL: the fused sums a warp a point row (no index division);
// REGS: a k step's fragments loaded while the previous step multiplies;
// COPY: load_rows' FAST copies; EPI: the argmin without branches, the
// tile's norms copied to shared memory with the tile; BULK (VEC = 2 only):
// rows and norms by bulk copies that one warp issues, a row an instruction,
// each tile buffer's arrival an mbarrier phase (so no barrier at the top of
// a tile).
constexpr int TAIL = 1, REGS = 4, COPY = 8, EPI = 16, BULK = 32, ALL = TAIL | REGS | COPY | EPI | BULK;

// Assignment of BM points against all K centroids on the FP64 tensor cores,
// the argmin in the epilogue; also counts each cluster's points and, with
// FUSED, adds each point's coordinates to its cluster's sums (an atomic a
// coordinate, from the tile in shared memory: the points are read once).
template <int VEC, int MT, int NW, bool FUSED, int WARPS, int FORM, int BUFS>
__global__ void __launch_bounds__(WARPS * 32, WARPS == 4 || BUFS == 1 ? 2 : 1)
    dmma_assign(const double* __restrict__ X, const double* __restrict__ C, const double* __restrict__ cn,
                const double* __restrict__ xx, int* __restrict__ assign, double* __restrict__ best,
                unsigned long long* __restrict__ changed, unsigned long long* __restrict__ counts,
                double* __restrict__ sums, std::int64_t n, int d, int k, int reps) {
  constexpr int BN = 32 * NW, NT = 4, BM = bm_for(WARPS, MT, NW),
                THREADS = WARPS * 32;  // NT: a warp's 32 centroids
  extern __shared__ __align__(16) double sm[];
  __shared__ double rbd[NW][BM];  // the warps' best of each point in each column part
  __shared__ int rbi[NW][BM];
  __shared__ __align__(16) double cns[BUFS][BN];  // the centroid tiles' squared norms (EPI)
  __shared__ unsigned long long full[BUFS];       // BULK: tile buffer b's arrival
  const int S = stride_for(d), kp = kpad(d);
  double* xs = sm;                                         // BM x S points, then two BN x S centroid tiles
  auto buf = [](int t) { return BUFS == 2 ? t & 1 : 0; };  // tile t's buffer
  auto tile_at = [&](int t) { return sm + (BM + buf(t) * BN) * S; };
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, fr = lane / 4, fk = lane % 4;
  const int wm = warp / NW, wn = warp % NW;
  const int wr = wm * 16 * MT;  // the warp's first row of the block's points
  const std::int64_t r0 = std::int64_t(blockIdx.x) * BM;
  const int tiles = (k + BN - 1) / BN;
  constexpr bool FAST = (FORM & COPY) != 0, BULKED = (FORM & BULK) && (FORM & EPI) && VEC == 2;
  // Tile t's centroids (and with EPI their norms) into buffer t & 1.
  auto load_tile = [&](int t) {
    load_rows<BN, VEC, WARPS, FAST>(tile_at(t), C, std::int64_t(t) * BN, k, d, S);
    if (FORM & EPI)
      for (int j = tid; j < BN; j += THREADS) {
        const int col = t * BN + j;
        copy<8>(&cns[buf(t)][j], col < k ? cn + col : cn, col < k);
      }
  };

  // BULK: warp 0 copies tile t (its rows, its norms; with the block's points
  // when points) into buffer t & 1, completing that buffer's mbarrier phase.
  const unsigned row_bytes = unsigned(d) * 8;
  auto bulk_tile = [&](int t, bool points) {
    const int b = buf(t);
    const std::int64_t c0 = std::int64_t(t) * BN;
    const int rows = int(k - c0 < BN ? k - c0 : BN);
    const int prows = points ? int(n - r0 < BM ? n - r0 : BM) : 0;
    if (lane == 0) mbar_expect(&full[b], unsigned(rows + prows) * row_bytes + BN * 8);
    __syncwarp();
    for (int r = lane; r < prows; r += 32) bulk_copy(xs + r * S, X + (r0 + r) * d, row_bytes, &full[b]);
    if (points) grid_wait();  // the centroids and norms are the previous kernel's
    for (int r = lane; r < rows; r += 32)
      bulk_copy(tile_at(t) + r * S, C + (c0 + r) * d, row_bytes, &full[b]);
    if (lane == 0) bulk_copy(&cns[b][0], cn + c0, BN * 8, &full[b]);  // cn is padded to BN
  };

  if (BULKED) {
    if (tid == 0) {
      for (int b = 0; b < BUFS; ++b) mbar_init(&full[b], 1);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // Bulk copies write columns [0, d) of a row: the padding up to kp stays
    // the zero written here, in the points and both tile buffers.
    const int pad = kp - d;
    for (int i = tid; i < (BM + BUFS * BN) * pad; i += THREADS) sm[(i / pad) * S + d + i % pad] = 0;
    __syncthreads();
    if (warp == 0) {
      bulk_tile(0, true);
      if (BUFS == 2 && tiles > 1) bulk_tile(1, false);
    } else {
      grid_wait();
    }
  } else {
    load_rows<BM, VEC, WARPS, FAST>(xs, X, r0, n, d, S);
    grid_wait();  // the centroids, norms, sums and counts are the previous kernel's
    load_tile(0);
    commit();
    if (BUFS == 2) {
      if (tiles > 1) load_tile(1);
      commit();
    }
  }

  double bd[MT][2];  // rows fr and fr + 8 of each of the warp's m-tiles
  int bi[MT][2];
#pragma unroll
  for (int m = 0; m < MT; ++m) bd[m][0] = bd[m][1] = 0, bi[m][0] = bi[m][1] = -1;
  for (int t = 0; t < tiles; ++t) {
    if (BULKED) {
      mbar_wait(&full[buf(t)], (BUFS == 2 ? t >> 1 : t) & 1);  // tile t (and the points) landed
    } else {
      wait_groups<BUFS - 1>();  // tile t (and the points) landed: this thread's copies
      __syncthreads();          // ... and everyone's
    }
    const double* cs = tile_at(t) + wn * 32 * S;
    double acc[MT][NT][4] = {};
    if (FORM & REGS) {
      static_assert(MT == 1, "REGS takes one m-tile a warp");
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
        for (int j = 0; j < NT; ++j) dmma<KW>(acc[0][j], fa, fb[j]);
      };
      frag(0, a[0], b[0]);
      int kk = 0;
      for (; kk + 2 * KW <= kp; kk += 2 * KW) {
        frag(kk + KW, a[1], b[1]);
        mul(a[0], b[0]);
        if (kk + 2 * KW < kp) frag(kk + 2 * KW, a[0], b[0]);
        mul(a[1], b[1]);
      }
      if (kk < kp) mul(a[0], b[0]);
    } else {
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
    }
    // acc[m][j][2 h + e] is (row fr + 8 h of m-tile m, column j * 8 + 2 fk + e
    // of the warp's 32): this thread's columns in increasing order, so a
    // strict < keeps the lowest.
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int cl = wn * 32 + j * 8 + 2 * fk + e, col = t * BN + cl;
        if (FORM & EPI) {  // past k: a zero norm (never taken), predicated, not branched around
          const bool ok = col < k;
          const double c2 = cns[buf(t)][cl];
#pragma unroll
          for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const double v = fma(-2.0, acc[m][j][2 * h + e], c2);
              if (ok && (bi[m][h] < 0 || v < bd[m][h])) bd[m][h] = v, bi[m][h] = col;
            }
          continue;
        }
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
    if (BULKED) {
      if (warp == 0 && t + BUFS < tiles) bulk_tile(t + BUFS, false);
    } else {
      if (t + BUFS < tiles) load_tile(t + BUFS);
      commit();  // an empty group past the end keeps the count the wait expects
    }
  }
  if (!BULKED) wait_groups<0>();
  grid_release();  // the update may start once every block is here

  // The 4 lanes of a row hold interleaved columns: the smaller distance, on a
  // tie the lower cluster; then the warps of the other column parts.
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
    for (int q = 1; q < NW; ++q) {
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
    __syncthreads();                                  // rbi[0] holds every point's cluster
    sums += std::int64_t(blockIdx.x % reps) * k * d;  // this block's copy of the sums
    if (FORM & TAIL) {
      for (int r = warp; r < BM; r += WARPS) {  // a warp a point, lanes along its row
        const int c = rbi[0][r];
        if (c < 0) continue;
        double* srow = sums + std::int64_t(c) * d;
#pragma unroll 1
        for (int col = lane; col < d; col += 32) atomicAdd(srow + col, xs[r * S + col]);
      }
    } else {
      for (int j = tid; j < BM * d; j += THREADS) {
        const int r = j / d, col = j - r * d, c = rbi[0][r];
        if (c >= 0) atomicAdd(&sums[std::int64_t(c) * d + col], xs[r * S + col]);
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
                              unsigned long long*, unsigned long long*, double*, std::int64_t, int, int, int);

template <bool FUSED>
AssignKernel assign_kernel(bool vec, Shape sh) {
  if (sh.bufs == 1)
    return vec ? dmma_assign<2, 1, 2, FUSED, 8, ALL, 1> : dmma_assign<1, 1, 2, FUSED, 8, ALL, 1>;
  if (sh.warps == 16) {
    if (FUSED && vec) {  // TEMP A/B
      const char* f = std::getenv("PARBENCH_DMMA_FORM");
      const int form = f ? std::atoi(f) : ALL;
      if (form == 0) return dmma_assign<2, 1, 2, true, 16, 0, 2>;
      if (form == 5) return dmma_assign<2, 1, 2, true, 16, TAIL | REGS, 2>;
      if (form == 13) return dmma_assign<2, 1, 2, true, 16, TAIL | REGS | COPY, 2>;
      if (form == 29) return dmma_assign<2, 1, 2, true, 16, TAIL | REGS | COPY | EPI, 2>;
    }
    return vec ? dmma_assign<2, 1, 2, FUSED, 16, ALL, 2> : dmma_assign<1, 1, 2, FUSED, 16, ALL, 2>;
  }
  if (sh.warps == 4)
    return vec ? dmma_assign<2, 1, 1, FUSED, 4, ALL, 2> : dmma_assign<1, 1, 1, FUSED, 4, ALL, 2>;
  return vec ? dmma_assign<2, 1, 1, FUSED, 8, ALL, 2> : dmma_assign<1, 1, 1, FUSED, 8, ALL, 2>;
}

// The shapes CUDA.DMMA takes, the first that fits: 16 warps of 16 x 32 over
// 128 points and 64-centroid tiles (D <= 104); 8 warps of 16 x 32 over
// 32-centroid tiles; 4 warps over 64 points. At 100,000 x 100 x 316 the 16
// warps took 0.242 ms an iteration where 8 warps of 32 x 32 (2 fragment reads
// an MMA, not 3, but one warp fewer a scheduler to hide latency) took 0.268
// (H100, results/nvidia-h100/issue20/w16-run).
// kPair (TEMP A/B, PARBENCH_DMMA_SHAPE=pair): 8 warps of 16 x 32 over 64
// points and one 64-centroid tile buffer, two blocks an SM.
constexpr Shape kWide{16, 1, 2, 2}, kNarrow{8, 1, 1, 2}, kSmall{4, 1, 1, 2}, kPair{8, 1, 2, 1};

class Dmma final : public DeviceKMeans {
 public:
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
  // TEMP A/B: PARBENCH_DMMA_REPS copies of the sums (default 2; 1 with the
  // old update, which reads one).
  int sum_replicas() const override {
    if (std::getenv("PARBENCH_KMEANS_OLD_UPDATE")) return 1;
    const char* r = std::getenv("PARBENCH_DMMA_REPS");
    return r ? std::max(1, std::atoi(r)) : 2;
  }
  void after_prepare() override {
    const auto N = p_.n, K = p_.k;
    xx_ = DeviceBuffer<double>(N);
    // Padded to whole 64-centroid tiles (the BULK form copies a tile's norms
    // whole; past K they are never used).
    cn_ = DeviceBuffer<double>((K + 63) / 64 * 64);
    PB_CUDA(cudaMemsetAsync(cn_.get(), 0, cn_.bytes(), s()));
    // Sums from the assignment kernel's tile (an atomic a coordinate) unless
    // the clusters are so few that those atomics pile onto few addresses:
    // at N / K = 316 (100,000 x 100 x 316) the fused sums took 0.26-0.28 ms
    // an iteration against 0.30-0.31 for the scan, scatter and segment
    // passes; at N / K = 250,000 (4,000,000 x 16 x 16) 4.8 ms against 2.4
    // (H100, results/nvidia-h100/issue20/kmeans-run5).
    fused_ = N <= 10000 * K;
    if (!fused_) {
      offsets_ = DeviceBuffer<unsigned long long>(K);
      fill_ = DeviceBuffer<unsigned>(K);
      order_ = DeviceBuffer<int>(N);
      scan_bytes_ = 0;
      PB_CUDA(
          cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes_, counts_.get(), offsets_.get(), int(K), s()));
      scan_tmp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(scan_bytes_, 1));
    }
    // The largest block shape that fits. 64-point blocks two to an SM were
    // slower at D = 100: 0.30 ms an iteration against 0.27 (kmeans-run5).
    const std::size_t optin = gpu_status().shared_optin_bytes;
    shape_ = kSmall;
    for (Shape sh : {kWide, kNarrow})
      if (block_bytes(p_.d, sh) <= optin) {
        shape_ = sh;
        break;
      }
    const bool vec = p_.d % 2 == 0 && reinterpret_cast<std::uintptr_t>(xa_.get()) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(C_.get()) % 16 == 0;
    const char* want = std::getenv("PARBENCH_DMMA_SHAPE");
    if (want && std::string(want) == "pair") {  // when two blocks fit an SM
      AssignKernel kp = fused_ ? assign_kernel<true>(vec, kPair) : assign_kernel<false>(vec, kPair);
      const std::size_t b = tile_bytes(p_.d, kPair);
      int per_sm = 0;
      if (block_bytes(p_.d, kPair) <= optin &&
          cudaFuncSetAttribute(kp, cudaFuncAttributeMaxDynamicSharedMemorySize, int(b)) == cudaSuccess &&
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kp, kPair.warps * 32, b) == cudaSuccess &&
          per_sm >= 2)
        shape_ = kPair;
    }
    bytes_ = tile_bytes(p_.d, shape_);
    kernel_ = fused_ ? assign_kernel<true>(vec, shape_) : assign_kernel<false>(vec, shape_);
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
    launch_row_norms(xa_.get(), xx_.get(), N, p_.d, s());
  }
  bool launch_assign() override {
    const auto N = p_.n, D = p_.d, K = p_.k;
    const int bm = bm_for(shape_.warps, shape_.mt, shape_.nw);
    const unsigned blocks = unsigned((N + bm - 1) / bm);
    // Launched early: its blocks copy their points while the previous
    // iteration's update runs (grid_wait, grid_release).
    launch_early(kernel_, blocks, unsigned(shape_.warps * 32), bytes_, s(), xa_.get(), C_.get(), cn_.get(),
                 xx_.get(), assign_.get(), best_.get(), changed_.get(), counts_.get(), sums_.get(), N, int(D),
                 int(K), sum_replicas());
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
  bool fused_ = true;
  Shape shape_ = kWide;
  AssignKernel kernel_ = nullptr;
  DeviceBuffer<double> xx_, cn_;
  DeviceBuffer<unsigned long long> offsets_;
  DeviceBuffer<unsigned> fill_;
  DeviceBuffer<int> order_;
  DeviceBuffer<unsigned char> scan_tmp_;
  std::size_t scan_bytes_ = 0, bytes_ = 0;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_dmma() { return std::make_unique<Dmma>(); }

}  // namespace pb::kmeans
