// CUDA.OneRead: an iteration that reads the points once, for the narrow
// shapes (D <= 32) where k-means is bound by memory, not by distances.
// Two passes produce the same partials for the same update kernel: the FMA
// pass described first, and on sm_90 with K <= 32 and D <= 16 the
// tensor-core pass (mma_pass below). At D = 16 and K = 16 the FMA pass is
// bound by its instructions, not by memory; the tensor-core pass issues
// far fewer a point and is faster. Measurements behind these choices:
// docs/perf/kmeans-cuda.md.
//
// Relative to CUDA.AllGPU (the FMA pass):
//  - One pass over the points does the assignment and the partial sums. A
//    thread holds its point's coordinates in registers (up to 32 of them, the
//    kernel instantiated for 4, 8, 16 and 32), so each coordinate is read
//    from memory once and used for every distance and for the sums. AllGPU
//    staged a tile in shared memory and had each sum element scan the tile,
//    K*D predicated adds a point.
//  - Distances in the expanded form |c|^2 - 2 x.c (|x|^2 is added only for
//    the inertia): one FMA a coordinate and centroid instead of a subtract
//    and an FMA. Like CUDA.GEMM, the rounding differs from the direct form's
//    only for near-ties.
//  - Partial sums without atomics: the lanes of a warp that chose the same
//    cluster find each other (__match_any_sync), the lowest of them gathers
//    their coordinates by shuffles and adds them to its warp's own K x (D+1)
//    table in shared memory (counts in the last column). Each warp's table is
//    its own, so the adds are plain; only when K*D leaves no room for a table
//    a warp do warps share tables, with shared-memory atomics.
//  - Each block writes its summed tables to its own slot of a partials
//    buffer (no global atomics at all), its changed-point count and inertia
//    beside them. A second kernel, a block per cluster, sums that cluster's
//    slots over the blocks in a fixed order, forms the new centroid and its
//    move; the last of its blocks to finish (a ticket counter) takes the
//    largest move, the changed count and the inertia, runs the exit test and
//    writes the run's state on the device.
//  - No host round trip an iteration: both kernels begin by reading that
//    state and return at once once the run has stopped, so the host queues
//    iterations ahead (a fixed-loop run all at once; a converging run 4, then
//    8, ... at a time) and reads the 40-byte state once a batch.
// With a table a warp (every shape the issue measures), the sums are formed
// in a fixed order, so a run's centroids and inertia are the same from run to
// run (AllGPU's global atomics are not); shared tables add in any order.
//
// Bytes an iteration: the points once (N*D*8), the assignment read and, for
// points that move, written (4 to 8 a point), and grid * K * (D+1) * 8 of
// partials written and read (under a megabyte at N = 4,000,000, D = K = 16).
#include <math_constants.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda/cp_async.cuh"
#include "core/cuda/device_sm.cuh"
#ifdef PARBENCH_WITH_NCCL
#include "core/cuda/nccl.cuh"
#include "core/cuda/team.cuh"
#endif
#include "gemm/cuda/dmma_ops.cuh"
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

// The run's state, written by the last block of each update.
struct State {
  unsigned long long changed;
  double move;
  double inertia;
  int iterations;
  int stop;
  unsigned done;  // update blocks finished this iteration; the last one resets it
  unsigned pad;
};

constexpr int kMaxD = 32;
constexpr int kUpdateThreads = 512;
constexpr unsigned kFull = 0xffffffffu;

// A centroid's row in shared memory: D rounded up to even (the pad is 0), so
// the distance loop reads two coordinates with one 16-byte load.
__host__ __device__ inline std::int64_t padded(std::int64_t d) { return (d + 1) & ~std::int64_t(1); }

// Shared memory of the pass: centroids K x padded(D), their squared norms,
// `copies` sum tables K x (D+1), and two slots a warp for the block's reductions.
std::size_t pass_bytes(std::int64_t k, std::int64_t d, std::int64_t copies, int warps) {
  return std::size_t(k * padded(d) + k + copies * k * (d + 1) + 2 * std::int64_t(warps)) * sizeof(double);
}

__device__ __forceinline__ double warp_sum(double v) {
  for (int off = 16; off; off >>= 1) v += __shfl_down_sync(kFull, v, off);
  return v;
}

// The block's inertia and changed-point count, from its warps' slots (red[w]
// and red[warps + w]), into its slots of the partials: thread 0 only.
__device__ __forceinline__ void write_block_totals(const double* red, int warps, double* inertia_part,
                                                   unsigned long long* changed_part) {
  double a = 0, ch = 0;
  for (int w = 0; w < warps; ++w) a += red[w], ch += red[warps + w];
  inertia_part[blockIdx.x] = a;
  changed_part[blockIdx.x] = (unsigned long long)ch;
}

// Assignment and partial sums of every point, a warp taking 32 consecutive
// points at a time (coordinate-major points xs, D x N, so each coordinate's
// load is coalesced). Writes this block's K x (D+1) sums and counts, its
// changed-point count and its inertia to its slots.
template <int DMAX>
__global__ void one_pass(const double* __restrict__ xs, const double* __restrict__ C,
                         int* __restrict__ assign, double* __restrict__ part,
                         unsigned long long* __restrict__ changed_part, double* __restrict__ inertia_part,
                         const State* __restrict__ st, std::int64_t n, int d, int k, int copies) {
  if (st->stop) return;
  extern __shared__ __align__(16) double sm[];
  const int P = blockDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = P >> 5;
  const int row = d + 1, dp = int(padded(d));
  const std::int64_t table = std::int64_t(k) * row;
  double* cs = sm;                    // K x dp centroids, the pad 0
  double* cn = cs + k * dp;           // K squared norms
  double* ws = cn + k;                // copies x K x (D+1) sums and counts
  double* red = ws + copies * table;  // 2 x warps
  for (int j = tid; j < k * dp; j += P) {
    const int c = j / dp, t = j - c * dp;
    cs[j] = t < d ? C[std::int64_t(c) * d + t] : 0.0;
  }
  for (std::int64_t j = tid; j < copies * table; j += P) ws[j] = 0;
  __syncthreads();
  for (int c = tid; c < k; c += P) {
    double s = 0;
    for (int t = 0; t < d; ++t) s = fma(cs[c * dp + t], cs[c * dp + t], s);
    cn[c] = s;
  }
  __syncthreads();

  double* mine = ws + std::int64_t(warp % copies) * table;
  const bool own_table = copies == warps;
  unsigned changed = 0;
  double inertia = 0;
  const std::int64_t stride = std::int64_t(gridDim.x) * P;
  // base is the same for the whole warp, so the loop and the *_sync calls in it are warp-uniform.
  for (std::int64_t base = std::int64_t(blockIdx.x) * P + warp * 32; base < n; base += stride) {
    const std::int64_t i = base + lane;
    const bool valid = i < n;
    double x[DMAX];
    double xx = 0;
#pragma unroll
    for (int t = 0; t < DMAX; ++t) {
      x[t] = (valid && t < d) ? __ldg(xs + std::int64_t(t) * n + i) : 0.0;
      xx = fma(x[t], x[t], xx);
    }
    int b = -1;
    if (valid) {
      double bd = 0;
      for (int c = 0; c < k; ++c) {
        const double2* cc = reinterpret_cast<const double2*>(cs + c * dp);
        double even = 0, odd = 0;  // two chains of FMAs, not one
#pragma unroll
        for (int t = 0; t < DMAX; t += 2)
          if (t < dp) {
            const double2 v = cc[t / 2];  // broadcast: every lane reads the same centroid
            even = fma(x[t], v.x, even);
            odd = fma(x[t + 1], v.y, odd);
          }
        const double v = fma(-2.0, even + odd, cn[c]);  // the squared distance less |x|^2
        if (b < 0 || v < bd) bd = v, b = c;             // ties to the lowest index
      }
      inertia += xx + bd;
      if (assign[i] != b) assign[i] = b, ++changed;
    }
    // The lanes with the same cluster (invalid lanes: cluster -1) and their
    // lowest lane, which gathers the others' coordinates in lane order.
    const unsigned peers = __match_any_sync(kFull, b);
    const int leader = __ffs(peers) - 1;
    if (peers == kFull) {
      // The whole warp in one cluster (K = 1, or clustered data in order): a
      // butterfly sum, 5 rounds, not 31.
#pragma unroll
      for (int t = 0; t < DMAX; ++t)
        if (t < d)
          for (int off = 16; off; off >>= 1) x[t] += __shfl_xor_sync(kFull, x[t], off);
    } else {
      unsigned rest = peers & (peers - 1);
      const int rounds = int(__reduce_max_sync(kFull, unsigned(__popc(peers)))) - 1;
      for (int r = 0; r < rounds; ++r) {
        const int src = rest ? __ffs(rest) - 1 : lane;
        rest &= rest - 1;
#pragma unroll
        for (int t = 0; t < DMAX; ++t)
          if (t < d) {  // d is the same for the whole warp
            const double v = __shfl_sync(kFull, x[t], src);
            if (lane == leader && src != lane) x[t] += v;
          }
      }
    }
    if (lane == leader && b >= 0) {
      double* w = mine + std::int64_t(b) * row;
      const double cnt = double(__popc(peers));
      if (own_table) {
#pragma unroll
        for (int t = 0; t < DMAX; ++t)
          if (t < d) w[t] += x[t];
        w[d] += cnt;
      } else {
#pragma unroll
        for (int t = 0; t < DMAX; ++t)
          if (t < d) atomicAdd(w + t, x[t]);
        atomicAdd(w + d, cnt);
      }
    }
    __syncwarp();  // the leaders' table writes, before the next round's leaders read them
  }

  const double wi = warp_sum(inertia);
  const unsigned wc = __reduce_add_sync(kFull, changed);
  if (lane == 0) red[warp] = wi, red[warps + warp] = double(wc);
  __syncthreads();
  double* out = part + std::int64_t(blockIdx.x) * table;
  for (std::int64_t j = tid; j < table; j += P) {
    double s = 0;
    for (int q = 0; q < copies; ++q) s += ws[q * table + j];
    out[j] = s;
  }
  if (tid == 0) write_block_totals(red, warps, inertia_part, changed_part);
}

// The tensor-core pass (sm_90, K <= 32 and D <= 16, the shapes where the
// FMA pass above is bound by its instruction count, not by memory): the same
// outputs, with both the distances and the sums as FP64 MMAs (m16n8k8,
// gemm/cuda/dmma_ops.cuh) on a warp's 32 points at a time.
//  - A warp copies its next 32 points (D rows of 256 contiguous bytes) into
//    its own shared tile, DP x TS, by cp.async while it works on the current
//    one: two tiles a warp, no block-wide barrier in the loop.
//  - Distances: (32 x DP points) (DP x KP centroids, times -2, held in
//    registers for the whole pass), the accumulators starting at |c|^2 and
//    padding clusters at +inf; the argmin of a row over its 4 lanes by two
//    shuffles, ties to the lowest index.
//  - Sums: (KP x 32 one-hot of the chosen clusters) (32 x DP points), added
//    into accumulators a warp keeps in registers across its whole share of
//    the points; the products are exact (x times 1 or 0), so the sums are
//    formed in a fixed order and a run repeats bit for bit. Counts: the
//    lowest lane of each cluster's lanes adds them to the warp's own table.
//  - At the end, the warps' sums meet in shared memory and the block writes
//    its K x (D + 1) slot of the partials in the FMA pass's layout, so the
//    same update kernel follows either pass.
// A tile row is 32 points and 4 of padding: the distance fragments (rows t,
// columns g) and the sum fragments (rows g, columns t) then both take the
// two shared-memory wavefronts that 32 doubles need.
constexpr int TS = 36;

template <int KP, int DP>
std::size_t mma_pass_bytes(int warps) {
  // Per warp: two tiles and the chunk's 32 best distances; two slots a warp
  // for the block's reductions; then, as ints, the chunk's 32 clusters and
  // the warp's KP counts. After the loop a warp's tiles hold its KP x DP sums.
  static_assert(KP * DP <= 2 * DP * TS, "a warp's sums fit in its tiles");
  return std::size_t(warps) * ((2 * DP * TS + 32 + 2) * sizeof(double) + (32 + KP) * sizeof(int));
}

// K up to 32 holds twice the centroid and sum fragments: at most 256 threads
// a block, so that they stay in registers.
template <int KP, int DP>
__global__ void __launch_bounds__(KP == 32 ? 256 : 512)
    mma_pass(const double* __restrict__ xs, const double* __restrict__ C, int* __restrict__ assign,
             double* __restrict__ part, unsigned long long* __restrict__ changed_part,
             double* __restrict__ inertia_part, const State* __restrict__ st, std::int64_t n, int d, int k,
             int /*copies: the FMA pass's*/) {
  using namespace pb::cuda_f64;
  using namespace pb::cp_async;
  if (st->stop) return;
  constexpr int NT = KP / 8, KT = DP / 8, MS = KP / 16;  // cluster and coordinate tiles of 8; sum tiles of 16
  constexpr int TILE = DP * TS;
  extern __shared__ __align__(16) double sm[];
  const int P = blockDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = P >> 5;
  const int g = lane >> 2, t = lane & 3;
  double* tiles = sm + std::size_t(warp) * 2 * TILE;
  double* sbd = sm + std::size_t(warps) * 2 * TILE + warp * 32;
  double* red = sm + std::size_t(warps) * (2 * TILE + 32);
  int* sb = reinterpret_cast<int*>(red + 2 * warps) + warp * 32;
  unsigned* counts = reinterpret_cast<unsigned*>(red + 2 * warps) + warps * 32;  // warps x KP
  unsigned* cnt = counts + warp * KP;

  // The centroids as the distance MMA's B operand, times -2 (exact):
  // bc[kt][nt][i] = -2 C(nt * 8 + g, kt * 8 + t + 4 i); the norms of this
  // thread's accumulator columns nt * 8 + 2 t + e.
  double bc[KT][NT][2], cn[NT][2];
#pragma unroll
  for (int kt = 0; kt < KT; ++kt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int c = nt * 8 + g, j = kt * 8 + t + 4 * i;
        bc[kt][nt][i] = c < k && j < d ? -2.0 * __ldg(C + std::int64_t(c) * d + j) : 0.0;
      }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int c = nt * 8 + 2 * t + e;
      double s = CUDART_INF;
      if (c < k) {
        s = 0;
        for (int j = 0; j < d; ++j) {
          const double v = __ldg(C + std::int64_t(c) * d + j);
          s = fma(v, v, s);
        }
      }
      cn[nt][e] = s;
    }
  // The tiles' rows past d stay 0 (the copies fill rows < d only).
  for (int j = lane; j < 2 * TILE; j += 32)
    if ((j % TILE) / TS >= d) tiles[j] = 0;
  for (int j = lane; j < KP; j += 32) cnt[j] = 0;

  const std::int64_t chunks = (n + 31) / 32, wstride = std::int64_t(gridDim.x) * warps;
  auto load = [&](std::int64_t ch, double* tile) {
    const std::int64_t i = ch * 32 + lane;
    const bool ok = i < n;
#pragma unroll
    for (int r = 0; r < DP; ++r)
      if (r < d) copy<8>(tile + r * TS + lane, ok ? xs + std::int64_t(r) * n + i : xs, ok);
  };
  std::int64_t ch = std::int64_t(blockIdx.x) * warps + warp;
  if (ch < chunks) load(ch, tiles);
  commit();

  double sacc[MS][KT][4] = {};
  unsigned changed = 0;
  double inertia = 0;
  for (int buf = 0; ch < chunks; ch += wstride, buf ^= 1) {
    const double* tile = tiles + buf * TILE;
    if (ch + wstride < chunks) load(ch + wstride, tiles + (buf ^ 1) * TILE);
    commit();
    wait_groups<1>();  // this chunk's copies, this lane's ...
    __syncwarp();      // ... and the warp's

    double xx = 0;  // |x|^2 of this lane's point, for the inertia
#pragma unroll
    for (int r = 0; r < DP; ++r) xx = fma(tile[r * TS + lane], tile[r * TS + lane], xx);

      // Distances of 16 points at a time: acc[nt][2 h + e] is point
      // mt * 16 + g + 8 h against cluster nt * 8 + 2 t + e.
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
      double acc[NT][4];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
        acc[nt][0] = cn[nt][0], acc[nt][1] = cn[nt][1], acc[nt][2] = cn[nt][0], acc[nt][3] = cn[nt][1];
#pragma unroll
      for (int kt = 0; kt < KT; ++kt) {
        const double* xa = tile + (kt * 8 + t) * TS + mt * 16 + g;
        const double a[4] = {xa[0], xa[8], xa[4 * TS], xa[4 * TS + 8]};
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) dmma<8>(acc[nt], a, bc[kt][nt]);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        double bd = acc[0][2 * h];
        int bi = 2 * t;
#pragma unroll
        for (int q = 1; q < 2 * NT; ++q) {  // this lane's columns in increasing order: < keeps the lowest
          const double v = acc[q / 2][2 * h + q % 2];
          if (v < bd) bd = v, bi = (q / 2) * 8 + 2 * t + q % 2;
        }
#pragma unroll
        for (int off = 1; off < 4; off <<= 1) {
          const double ov = __shfl_xor_sync(kFull, bd, off);
          const int oi = __shfl_xor_sync(kFull, bi, off);
          if (ov < bd || (ov == bd && oi < bi)) bd = ov, bi = oi;
        }
        if (t == 0) sb[mt * 16 + g + 8 * h] = bi, sbd[mt * 16 + g + 8 * h] = bd;
      }
    }
    __syncwarp();
    const std::int64_t i = ch * 32 + lane;
    int b = -1;
    if (i < n) {
      b = sb[lane];
      inertia += xx + sbd[lane];
      if (assign[i] != b) assign[i] = b, ++changed;
    } else {
      sb[lane] = -1;  // no cluster: a zero row of the one-hot
    }
    const unsigned peers = __match_any_sync(kFull, b);
    if (b >= 0 && lane == __ffs(peers) - 1) cnt[b] += unsigned(__popc(peers));
    __syncwarp();

    // Sums: sacc[m][nt][2 h + e] is cluster m * 16 + g + 8 h, coordinate nt * 8 + 2 t + e.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int p0 = kk * 8 + t, p1 = p0 + 4;
      const int b0 = sb[p0], b1 = sb[p1];
      double bx[KT][2];
#pragma unroll
      for (int nt = 0; nt < KT; ++nt)
        bx[nt][0] = tile[(nt * 8 + g) * TS + p0], bx[nt][1] = tile[(nt * 8 + g) * TS + p1];
#pragma unroll
      for (int m = 0; m < MS; ++m) {
        const int r = m * 16 + g;
        const double a[4] = {b0 == r ? 1.0 : 0.0, b0 == r + 8 ? 1.0 : 0.0, b1 == r ? 1.0 : 0.0,
                             b1 == r + 8 ? 1.0 : 0.0};
#pragma unroll
        for (int nt = 0; nt < KT; ++nt) dmma<8>(sacc[m][nt], a, bx[nt]);
      }
    }
    __syncwarp();  // the warp is done with this tile and sb before they are written again
  }
  wait_groups<0>();

  const double wi = warp_sum(inertia);
  const unsigned wc = __reduce_add_sync(kFull, changed);
  if (lane == 0) red[warp] = wi, red[warps + warp] = double(wc);
  double* ws = tiles;  // the warp's KP x DP sums
#pragma unroll
  for (int m = 0; m < MS; ++m)
#pragma unroll
    for (int nt = 0; nt < KT; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          ws[(m * 16 + g + 8 * h) * DP + nt * 8 + 2 * t + e] = sacc[m][nt][2 * h + e];
  __syncthreads();
  const int row = d + 1;
  double* out = part + std::int64_t(blockIdx.x) * k * row;
  for (int j = tid; j < k * row; j += P) {
    const int c = j / row, col = j - c * row;
    double s = 0;
    if (col < d)
      for (int w = 0; w < warps; ++w) s += sm[std::size_t(w) * 2 * TILE + c * DP + col];
    else
      for (int w = 0; w < warps; ++w) s += double(counts[w * KP + c]);
    out[j] = s;
  }
  if (tid == 0) write_block_totals(red, warps, inertia_part, changed_part);
}

// A block per cluster: its sums and count over the pass's blocks, the new
// centroid (an empty cluster keeps its own) and its squared move; the last
// block to finish runs the exit test.
__global__ void __launch_bounds__(kUpdateThreads)
    one_update(const double* __restrict__ part, const unsigned long long* __restrict__ changed_part,
               const double* __restrict__ inertia_part, double* __restrict__ C, double* __restrict__ move2,
               State* st, int grid, int d, int k, std::int64_t n, Criteria crit) {
  if (st->stop) return;
  extern __shared__ double col[];  // d + 1: the cluster's sums and its count
  constexpr int W = kUpdateThreads / 32;
  __shared__ double red[W][33];
  __shared__ unsigned long long redc[W];
  __shared__ bool last;
  const int c = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int row = d + 1;
  const std::int64_t table = std::int64_t(k) * row;
  for (int t0 = 0; t0 < row; t0 += 32) {
    const int t = t0 + lane;
    double s = 0;
    if (t < row) {
      const double* p = part + std::int64_t(c) * row + t;
#pragma unroll 4
      for (int b = warp; b < grid; b += W) s += p[std::int64_t(b) * table];
    }
    red[warp][lane] = s;
    __syncthreads();
    if (warp == 0 && t < row) {
      double tot = 0;
      for (int w = 0; w < W; ++w) tot += red[w][lane];
      col[t] = tot;
    }
    __syncthreads();
  }
  const double cnt = col[d];
  double m = 0;
  if (cnt > 0)
    for (int t = tid; t < d; t += kUpdateThreads) {
      const double old = C[std::int64_t(c) * d + t];
      const double v = col[t] / cnt;
      m += (v - old) * (v - old);
      C[std::int64_t(c) * d + t] = v;
    }
  m = warp_sum(m);
  if (lane == 0) red[warp][32] = m;
  __syncthreads();
  if (tid == 0) {
    double mm = 0;
    for (int w = 0; w < W; ++w) mm += red[w][32];
    move2[c] = mm;
    __threadfence();  // the move is visible before the ticket says so
    last = atomicAdd(&st->done, 1u) == unsigned(k - 1);
  }
  __syncthreads();
  if (!last) return;

  // The last block: every cluster's move is written.
  __threadfence();
  double mx = 0, in = 0;
  unsigned long long ch = 0;
  for (int q = tid; q < k; q += kUpdateThreads) mx = fmax(mx, __ldcg(move2 + q));
  for (int b = tid; b < grid; b += kUpdateThreads) ch += changed_part[b], in += inertia_part[b];
  for (int off = 16; off; off >>= 1) {
    mx = fmax(mx, __shfl_down_sync(kFull, mx, off));
    in += __shfl_down_sync(kFull, in, off);
    ch += __shfl_down_sync(kFull, ch, off);
  }
  if (lane == 0) red[warp][0] = mx, red[warp][1] = in, redc[warp] = ch;
  __syncthreads();
  if (tid == 0) {
    mx = 0, in = 0, ch = 0;
    for (int w = 0; w < W; ++w) mx = fmax(mx, red[w][0]), in += red[w][1], ch += redc[w];
    State s = *st;
    s.iterations += 1;
    s.changed = ch;
    s.move = sqrt(mx);
    s.inertia = in;
    s.stop = crit.stop(s.iterations, (std::int64_t)ch, s.move, n) ? 1 : 0;
    s.done = 0;
    *st = s;
  }
}

using PassKernel = void (*)(const double*, const double*, int*, double*, unsigned long long*, double*,
                            const State*, std::int64_t, int, int, int);

// The pass for a shape: the tensor-core one where it applies (sm_90 or newer,
// K <= 32, D <= 16), else the FMA one; and its shared memory for a block of
// `block` threads (0 when none fits: the FMA pass with too large a K x D).
struct Pass {
  PassKernel kernel = nullptr;
  bool mma = false;
  int copies = 1;  // the FMA pass's sum tables a block
  std::size_t bytes = 0;
};

// The tensor-core pass's launch bounds keep its fragments in registers: 512
// threads a block, 256 for K over 16; larger blocks take the FMA pass.
bool mma_applies(std::int64_t k, std::int64_t d, int block, int sm) {
  return sm >= 90 && k <= 32 && d <= 16 && block <= (k > 16 ? 256 : 512);
}

// Sum tables for the block: one a warp where that leaves room for two blocks
// an SM, else as many as fit in one block's shared memory (at least one).
int choose_copies(std::int64_t k, std::int64_t d, int block) {
  const int warps = block / 32;
  const std::size_t optin = gpu_status().shared_optin_bytes;
  for (int c = warps; c >= 1; --c)
    if (pass_bytes(k, d, c, warps) <= optin / 2) return c;
  return pass_bytes(k, d, 1, warps) <= optin ? 1 : 0;
}

// The tensor-core pass for K up to KP and D up to DP.
template <int KP, int DP>
Pass mma_pass_for(int warps) {
  Pass p;
  p.mma = true;
  p.kernel = mma_pass<KP, DP>;
  p.bytes = mma_pass_bytes<KP, DP>(warps);
  if (p.bytes > gpu_status().shared_optin_bytes) p.bytes = 0;
  return p;
}

Pass choose_pass(std::int64_t k, std::int64_t d, int block, int sm) {
  const int warps = block / 32;
  if (mma_applies(k, d, block, sm)) {
    if (k > 16) return d > 8 ? mma_pass_for<32, 16>(warps) : mma_pass_for<32, 8>(warps);
    return d > 8 ? mma_pass_for<16, 16>(warps) : mma_pass_for<16, 8>(warps);
  }
  Pass p;
  p.kernel = d <= 4 ? one_pass<4> : d <= 8 ? one_pass<8> : d <= 16 ? one_pass<16> : one_pass<32>;
  p.copies = choose_copies(k, d, block);
  p.bytes = p.copies ? pass_bytes(k, d, p.copies, warps) : 0;
  return p;
}

class OneRead final : public Variant {
 public:
  explicit OneRead(int block) : block_(block) {}
  ~OneRead() override {
    for (auto& e : ev_)
      if (e) cudaEventDestroy(e);
    if (h_state_) cudaFreeHost(h_state_);
  }

  Support supports(const Problem& p) const override {
    if (p.d > kMaxD)
      return Support::no("D = " + std::to_string(p.d) +
                         ": OneRead keeps a point's coordinates in registers, at most " +
                         std::to_string(kMaxD) + " (CUDA.GEMM and CUDA.Tiled run wider points)");
    if (p.k > 2147483647 / (p.d + 1) || p.n > (std::int64_t(1) << 40))
      return Support::no("K x (D+1) or N too large for the kernel's indices");
    const Pass pass = choose_pass(p.k, p.d, block_, device_sm_or_zero());
    if (Support b = check_block(block_, pass.kernel); !b.ok()) return b;
    if (pass.bytes == 0)
      return Support::no(pass.mma
                             ? "the tensor-core pass's tiles need more shared memory than a block can have"
                             : "K x (D+1) sums and the centroids need " +
                                   std::to_string(pass_bytes(p.k, p.d, 1, block_ / 32)) +
                                   " bytes of shared memory, more than the " +
                                   std::to_string(gpu_status().shared_optin_bytes) + " a block can have");
    return Support::yes();
  }

  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p, in_ = &in;
    stream_ = std::make_unique<Stream>();
    const auto N = p.n, D = p.d, K = p.k;
    xs_ = upload_coordinate_major(in.points, N, D, s());

    const Pass pass = choose_pass(K, D, block_, device_sm());
    kernel_ = pass.kernel;
    copies_ = pass.copies;
    bytes_ = pass.bytes;
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
    int per_sm = 0, dev = 0, sms = 0;
    PB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, block_, bytes_));
    PB_CUDA(cudaGetDevice(&dev));
    PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Persistent grid: each block sums many points before writing its one slot.
    const std::int64_t full = std::int64_t(std::max(1, per_sm)) * std::max(1, sms);
    grid_ = int(std::max<std::int64_t>(1, std::min<std::int64_t>(full, (N + block_ - 1) / block_)));
    update_bytes_ = std::size_t(D + 1) * sizeof(double);
    if (update_bytes_ > 48 * 1024)
      PB_CUDA(
          cudaFuncSetAttribute(one_update, cudaFuncAttributeMaxDynamicSharedMemorySize, int(update_bytes_)));

    C_ = DeviceBuffer<double>(K * D);
    assign_ = DeviceBuffer<int>(N);
    part_ = DeviceBuffer<double>(std::size_t(grid_) * K * (D + 1));
    changed_part_ = DeviceBuffer<unsigned long long>(grid_);
    inertia_part_ = DeviceBuffer<double>(grid_);
    move2_ = DeviceBuffer<double>(K);
    state_ = DeviceBuffer<State>(1);
    for (auto& e : ev_)
      if (!e) PB_CUDA(cudaEventCreate(&e));
    if (!h_state_) PB_CUDA(cudaMallocHost(&h_state_, sizeof(State)));
    PB_CUDA(cudaStreamSynchronize(s()));
  }

  void reset() override {
    PB_CUDA(cudaMemcpyAsync(C_.get(), in_->init.data(), C_.bytes(), cudaMemcpyHostToDevice, s()));
    PB_CUDA(cudaMemsetAsync(assign_.get(), 0xFF, assign_.bytes(), s()));  // -1: no cluster yet
    PB_CUDA(cudaMemsetAsync(state_.get(), 0, sizeof(State), s()));
    PB_CUDA(cudaStreamSynchronize(s()));
  }

  void run() override {
    last_ = Breakdown{};
    const int cap = p_.crit.fixed ? p_.crit.loops : p_.crit.max_iter;
    int queued = 0, batch = p_.crit.fixed ? cap : 4;
    for (;;) {
      const int now = std::min(batch, cap - queued);
      PB_CUDA(cudaEventRecord(ev_[0], s()));
      for (int it = 0; it < now; ++it) {
        kernel_<<<grid_, block_, bytes_, s()>>>(xs_.get(), C_.get(), assign_.get(), part_.get(),
                                                changed_part_.get(), inertia_part_.get(), state_.get(), p_.n,
                                                int(p_.d), int(p_.k), copies_);
        PB_CUDA_LAUNCHED();
        one_update<<<unsigned(p_.k), kUpdateThreads, update_bytes_, s()>>>(
            part_.get(), changed_part_.get(), inertia_part_.get(), C_.get(), move2_.get(), state_.get(),
            grid_, int(p_.d), int(p_.k), p_.n, p_.crit);
        PB_CUDA_LAUNCHED();
      }
      queued += now;
      read_back_timed(ev_, h_state_, state_.get(), sizeof(State), s(), last_);
      if (h_state_->stop) break;
      if (queued >= cap)  // the exit test stops at the cap itself: reaching here is a bug
        throw std::logic_error("CUDA.OneRead: " + std::to_string(queued) +
                               " iterations queued and the device's exit test has not stopped");
      batch = std::min(2 * batch, 64);
    }
  }

  void result(Result& out) override {
    out.assign.resize(p_.n);
    out.centroids.resize(p_.k * p_.d);
    PB_CUDA(cudaMemcpyAsync(out.assign.data(), assign_.get(), assign_.bytes(), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaMemcpyAsync(out.centroids.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaMemcpyAsync(h_state_, state_.get(), sizeof(State), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaStreamSynchronize(s()));
    out.iterations = h_state_->iterations;
    out.inertia = h_state_->inertia;
  }

  Breakdown breakdown() const override { return last_; }
  void* stream() override { return stream_->get(); }

 private:
  cudaStream_t s() const { return stream_->get(); }
  int block_;
  Problem p_;
  const Inputs* in_ = nullptr;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer<double> xs_, C_, part_, inertia_part_, move2_;
  DeviceBuffer<int> assign_;
  DeviceBuffer<unsigned long long> changed_part_;
  DeviceBuffer<State> state_;
  PassKernel kernel_ = nullptr;
  int copies_ = 1, grid_ = 1;
  std::size_t bytes_ = 0, update_bytes_ = 0;
  cudaEvent_t ev_[3] = {};
  State* h_state_ = nullptr;  // pinned
  Breakdown last_;
};

#ifdef PARBENCH_WITH_NCCL
// CUDA.NCCL's step where OneRead runs the shape (D <= 32): the points split
// into parts, part q on GPU q % gpus, each GPU runs OneRead's pass on its
// parts into its own slots of the partials (a part's blocks write their slots
// of the part's band; slots no part of a GPU writes stay zero); one NCCL
// all-reduce sums every slot over the GPUs into a second buffer, and every GPU
// runs OneRead's update on it, so every GPU forms the same centroids and the
// same exit decision (the same sums in the same order) with no broadcast. The
// all-reduce is out of place: a GPU's own slots are never overwritten by the
// others', so a slot its parts leave empty stays zero. As in OneRead, the host
// queues iterations in batches and reads GPU 0's state once a batch; the
// timer's stream is GPU 0's, which every GPU's stream starts after and which
// ends after all of them.
class OneReadNccl final : public Variant {
 public:
  OneReadNccl(int gpus, int parts, int block, bool over_ranks)
      : gpus_(gpus), parts_(parts), block_(block), team_(gpus, over_ranks) {}
  ~OneReadNccl() override { release(); }

  Support supports(const Problem& p) const override {
    if (Support s = team_.supports(parts_); !s.ok()) return s;
    return OneRead(block_).supports(p);
  }

  void prepare(const Problem& p, const Inputs& in) override {
    const DeviceGuard guard;
    release();
    p_ = p, in_ = &in;
    const auto N = p.n, D = p.d, K = p.k;
    team_.connect();  // first: a rank that fails later fails with every rank past this collective
    PB_CUDA(cudaSetDevice(team_.device(0)));
    const Pass pass = choose_pass(K, D, block_, device_sm());
    kernel_ = pass.kernel, copies_ = pass.copies, bytes_ = pass.bytes;
    int per_sm = 0, sms = 0;
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
    PB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, block_, bytes_));
    PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, team_.device(0)));
    const std::int64_t parts = std::min<std::int64_t>(parts_, N);  // each part holds a point or more
    const std::int64_t largest = (N + parts - 1) / parts;
    const std::int64_t full = std::int64_t(std::max(1, per_sm)) * std::max(1, sms);
    grid_ = int(std::max<std::int64_t>(1, std::min<std::int64_t>(full, (largest + block_ - 1) / block_)));
    slots_ = int((parts + gpus_ - 1) / gpus_) * grid_;  // a band of grid_ slots for each part a GPU holds
    update_bytes_ = std::size_t(D + 1) * sizeof(double);
    const std::size_t table = std::size_t(K * (D + 1));
    PB_CUDA(cudaSetDevice(team_.device(0)));
    fan_ =
        std::make_unique<StreamFan>(team_.devices(), false);  // this process's GPU 0's stream is the timer's
    for (int g = 0; g < team_.local(); ++g) {
      PB_CUDA(cudaSetDevice(team_.device(g)));
      PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
      if (update_bytes_ > 48 * 1024)
        PB_CUDA(cudaFuncSetAttribute(one_update, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     int(update_bytes_)));
      auto dev = std::make_unique<Gpu>();
      dev->stream = fan_->stream(std::size_t(g));
      dev->C = DeviceBuffer<double>(std::size_t(K * D));
      dev->part = DeviceBuffer<double>(std::size_t(slots_) * table);
      dev->part_sum = DeviceBuffer<double>(std::size_t(slots_) * table);
      dev->inertia = DeviceBuffer<double>(std::size_t(slots_) * 2);  // own, then summed
      dev->changed = DeviceBuffer<unsigned long long>(std::size_t(slots_) * 2);
      dev->move2 = DeviceBuffer<double>(std::size_t(K));
      dev->state = DeviceBuffer<State>(1);
      PB_CUDA(cudaMemset(dev->part.get(), 0, dev->part.bytes()));
      PB_CUDA(cudaMemset(dev->inertia.get(), 0, dev->inertia.bytes()));
      PB_CUDA(cudaMemset(dev->changed.get(), 0, dev->changed.bytes()));
      gpus_v_.push_back(std::move(dev));
    }
    for (std::int64_t q = 0; q < parts; ++q) {
      if (team_.holder(q) < 0) continue;  // another rank's
      Part part;
      part.dev = team_.holder(q);
      part.band = int(q / gpus_);
      part.lo = N * q / parts;
      part.hi = N * (q + 1) / parts;
      const std::vector<double> slice(in.points.begin() + part.lo * D, in.points.begin() + part.hi * D);
      PB_CUDA(cudaSetDevice(team_.device(part.dev)));
      part.xs = upload_coordinate_major(slice, part.hi - part.lo, D, gpus_v_[std::size_t(part.dev)]->stream);
      part.assign = DeviceBuffer<int>(std::size_t(part.hi - part.lo));
      parts_v_.push_back(std::move(part));
    }
    team_.sync();
    PB_CUDA(cudaSetDevice(team_.device(0)));
    for (auto& e : ev_) PB_CUDA(cudaEventCreate(&e));
    PB_CUDA(cudaMallocHost(&h_state_, sizeof(State)));
  }

  void reset() override {
    const DeviceGuard guard;
    for (int g = 0; g < team_.local(); ++g) {
      PB_CUDA(cudaSetDevice(team_.device(g)));
      Gpu& dev = *gpus_v_[std::size_t(g)];
      PB_CUDA(
          cudaMemcpyAsync(dev.C.get(), in_->init.data(), dev.C.bytes(), cudaMemcpyHostToDevice, dev.stream));
      PB_CUDA(cudaMemsetAsync(dev.state.get(), 0, sizeof(State), dev.stream));
    }
    for (auto& part : parts_v_) {
      PB_CUDA(cudaSetDevice(team_.device(part.dev)));
      PB_CUDA(cudaMemsetAsync(part.assign.get(), 0xFF, part.assign.bytes(),
                              gpus_v_[std::size_t(part.dev)]->stream));  // -1: no cluster yet
    }
    for (int g = 0; g < team_.local(); ++g) {
      PB_CUDA(cudaSetDevice(team_.device(g)));
      PB_CUDA(cudaStreamSynchronize(gpus_v_[std::size_t(g)]->stream));
    }
  }

  void run() override {
    const DeviceGuard guard;
    failed_ = true;  // until run() returns normally
    last_ = Breakdown{};
    const std::int64_t D = p_.d, K = p_.k;
    const std::size_t table = std::size_t(K * (D + 1));
    fan_->start();
    const int cap = p_.crit.fixed ? p_.crit.loops : p_.crit.max_iter;
    int queued = 0, batch = p_.crit.fixed ? cap : 4;
    for (;;) {
      const int now = std::min(batch, cap - queued);
      PB_CUDA(cudaSetDevice(team_.device(0)));
      PB_CUDA(cudaEventRecord(ev_[0], s0()));
      for (int it = 0; it < now; ++it) {
        for (auto& part : parts_v_) {
          PB_CUDA(cudaSetDevice(team_.device(part.dev)));
          Gpu& dev = *gpus_v_[std::size_t(part.dev)];
          const std::size_t base = std::size_t(part.band) * std::size_t(grid_);
          kernel_<<<grid_, block_, bytes_, dev.stream>>>(
              part.xs.get(), dev.C.get(), part.assign.get(), dev.part.get() + base * table,
              dev.changed.get() + base, dev.inertia.get() + base, dev.state.get(), part.hi - part.lo, int(D),
              int(K), copies_);
          PB_CUDA_LAUNCHED();
        }
        all_reduce();
        for (int g = 0; g < team_.local(); ++g) {
          PB_CUDA(cudaSetDevice(team_.device(g)));
          Gpu& dev = *gpus_v_[std::size_t(g)];
          one_update<<<unsigned(K), kUpdateThreads, update_bytes_, dev.stream>>>(
              dev.part_sum.get(), dev.changed.get() + slots_, dev.inertia.get() + slots_, dev.C.get(),
              dev.move2.get(), dev.state.get(), slots_, int(D), int(K), p_.n, p_.crit);
          PB_CUDA_LAUNCHED();
        }
      }
      queued += now;
      PB_CUDA(cudaSetDevice(team_.device(0)));
      read_back_timed(ev_, h_state_, gpus_v_[0]->state.get(), sizeof(State), s0(), last_);
      if (h_state_->stop) break;
      if (queued >= cap)  // the exit test stops at the cap itself: reaching here is a bug
        throw std::logic_error("CUDA.NCCL: " + std::to_string(queued) +
                               " iterations queued and the device's exit test has not stopped");
      batch = std::min(2 * batch, 64);
    }
    fan_->join();
    failed_ = false;
  }

  void result(Result& out) override {
    const DeviceGuard guard;
    out.assign.resize(std::size_t(p_.n));
    out.centroids.resize(std::size_t(p_.k * p_.d));
    team_.sync();
    for (auto& part : parts_v_) {
      PB_CUDA(cudaSetDevice(team_.device(part.dev)));
      PB_CUDA(cudaMemcpy(out.assign.data() + part.lo, part.assign.get(), part.assign.bytes(),
                         cudaMemcpyDeviceToHost));
    }
    // Every rank holds the same centroids and state; rank 0 the whole assignment.
    team_.gather(out.assign, parts_v_.empty() ? 0 : parts_v_.front().lo,
                 parts_v_.empty() ? 0 : parts_v_.back().hi);
    PB_CUDA(cudaSetDevice(team_.device(0)));
    PB_CUDA(
        cudaMemcpy(out.centroids.data(), gpus_v_[0]->C.get(), gpus_v_[0]->C.bytes(), cudaMemcpyDeviceToHost));
    PB_CUDA(cudaMemcpy(h_state_, gpus_v_[0]->state.get(), sizeof(State), cudaMemcpyDeviceToHost));
    out.iterations = h_state_->iterations;
    out.inertia = h_state_->inertia;
  }

  Breakdown breakdown() const override { return last_; }
  void* stream() override { return gpus_v_.empty() ? nullptr : gpus_v_[0]->stream; }

  // The last run's all-reduces alone: one group an iteration, as many as it
  // ran; bytes are what each GPU contributes (nccl-tests' message size).
  CommProfile communication() override {
    const DeviceGuard guard;
    if (team_.size() < 2) return {};
    const int iterations = h_state_->iterations;
    const std::size_t table = std::size_t(p_.k * (p_.d + 1)), slots = std::size_t(slots_);
    PB_CUDA(cudaSetDevice(team_.device(0)));
    team_.sync();
    mpi::barrier();  // over ranks: every rank's all-reduces start together, the slowest counts
    Stopwatch watch;
    watch.begin(s0());
    fan_->start();
    for (int it = 0; it < iterations; ++it) all_reduce();
    fan_->join();
    const double seconds = mpi::max(watch.end(s0()));
    const double per = double(slots * table + 2 * slots) * 8.0;
    return {per * iterations, seconds};
  }

 private:
  // One iteration's all-reduce of the pass's slots (sums and counts, inertia,
  // changed counts), out of place into the summed copies, every GPU at once.
  void all_reduce() {
    NcclGroup group;
    const std::size_t table = std::size_t(p_.k * (p_.d + 1)), slots = std::size_t(slots_);
    for (int g = 0; g < team_.local(); ++g) {
      Gpu& dev = *gpus_v_[std::size_t(g)];
      const ncclComm_t c = team_.comm(g);
      const cudaStream_t st = dev.stream;
      PB_NCCL(ncclAllReduce(dev.part.get(), dev.part_sum.get(), slots * table, ncclDouble, ncclSum, c, st));
      PB_NCCL(ncclAllReduce(dev.inertia.get(), dev.inertia.get() + slots, slots, ncclDouble, ncclSum, c, st));
      PB_NCCL(ncclAllReduce(dev.changed.get(), dev.changed.get() + slots, slots, ncclUint64, ncclSum, c, st));
    }
    group.end();
  }

  struct Gpu {
    cudaStream_t stream = nullptr;  // fan_'s stream of this GPU
    DeviceBuffer<double> C, part, part_sum, inertia, move2;
    DeviceBuffer<unsigned long long> changed;
    DeviceBuffer<State> state;
  };
  struct Part {
    int dev = 0, band = 0;        // its GPU, and its band of slots there
    std::int64_t lo = 0, hi = 0;  // points lo <= i < hi
    DeviceBuffer<double> xs;      // D x (hi - lo)
    DeviceBuffer<int> assign;
  };
  cudaStream_t s0() const { return gpus_v_[0]->stream; }
  void release() {
    team_.release(failed_);
    failed_ = false;
    parts_v_.clear();
    gpus_v_.clear();
    fan_.reset();
    for (auto& e : ev_)
      if (e) cudaEventDestroy(e), e = nullptr;
    if (h_state_) cudaFreeHost(h_state_);
    h_state_ = nullptr;
  }

  int gpus_, parts_, block_;
  Problem p_;
  const Inputs* in_ = nullptr;
  PassKernel kernel_ = nullptr;
  int copies_ = 1, grid_ = 1, slots_ = 1;
  std::size_t bytes_ = 0, update_bytes_ = 0;
  std::vector<std::unique_ptr<Gpu>> gpus_v_;
  std::vector<Part> parts_v_;
  GpuTeam team_;
  std::unique_ptr<StreamFan> fan_;
  cudaEvent_t ev_[3] = {};
  State* h_state_ = nullptr;  // pinned
  Breakdown last_;
  bool failed_ = false;  // a run() threw: the communicators are aborted, not destroyed
};
#endif

}  // namespace

std::unique_ptr<Variant> make_cuda_one_read(int block) { return std::make_unique<OneRead>(block); }

#ifdef PARBENCH_WITH_NCCL
std::unique_ptr<Variant> make_cuda_one_read_nccl(int gpus, int parts, int block, bool over_ranks) {
  return std::make_unique<OneReadNccl>(gpus, parts, block, over_ranks);
}
#endif

}  // namespace pb::kmeans
