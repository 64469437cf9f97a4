// CUDA.DMMA (double): the FP64 step onto the tensor cores. An FFMA kernel
// (RegBlock in double) is bounded by the FP64 pipes, about half of what
// Hopper's FP64 tensor cores (DMMA) do; so relative to Pipelined (the float
// FFMA kernel whose copy pipeline this one keeps):
//  - the multiply is mma.sync in f64 on m16n8 tiles (the m16n8k8 and k16
//    shapes sm_90 adds to Ampere's m8n8k4): a warp's 64 x 32 tile is 4 x 4
//    such tiles, 64 accumulators a thread;
//  - each operand keeps its global orientation in shared memory (rows of k
//    for an operand contiguous along k, rows of i or j otherwise), so every
//    copy is 16 bytes (two doubles) when the leading dimension is even, for
//    all three ops; the fragment read follows the orientation instead;
//  - where an operand is contiguous along k (AB's A, ABtC's A and B), the
//    mma's k positions are renumbered: thread t's positions t + 4 q hold
//    k = (KW / 4) t + q, the same order for both operands, so the sum is
//    unchanged and that operand's fragment row is KW / 4 consecutive
//    doubles, read 16 bytes at a time (half the shared loads of 8-byte
//    reads). The paddings are chosen per op so that no fragment read takes
//    more shared-memory wavefronts than the plain layout's;
//  - output tiles are walked in groups of 8 tile rows, column by column
//    within a group, so blocks running together share A and B tiles in L2.
// Tiling: block tile BM x BN x 16, warps of WM x WN, a STAGES-deep cp.async
// ring, m16n8kKW mma; one configuration per op and shape from a small set
// (tiles()), chosen by the table a tuning sweep wrote (gemm/gemm.hpp).
// Float is not built: its tensor-core steps are the TF32 and BF16 kernels.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/cp_async.cuh"
#include "gemm/cuda/device_variant.cuh"
#include "gemm/cuda/dmma_ops.cuh"
#include "gemm/cuda/raster.hpp"
#include "gemm/gemm.hpp"

namespace pb::gemm {
const std::vector<std::string>& dmma_tiles();
namespace {
using namespace pb::cuda_f64;
using namespace pb::cp_async;

constexpr int BK = 16, GROUP_M = 8;

// A tile configuration: block tile BM x BN, warp tile WM x WN, ring depth, k
// of one mma; KPERM: the k positions renumbered where an operand is
// contiguous along k, so its fragments are read 16 bytes at a time.
template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int KW_, bool KPERM_ = false>
struct Config {
  static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_, KW = KW_;
  static constexpr bool KPERM = KPERM_;
  static constexpr int WARPS = (BM / WM) * (BN / WN), THREADS = WARPS * 32;
  static constexpr int MI = WM / 16, NI = WN / 8;  // m16n8 tiles of a warp
  // Shared doubles of one operand's tile: rows of k (R x (BK + PADK)) or of
  // i / j (BK x (R + PADR)), whichever is larger, so every op's layout fits
  // one slot (Layout's paddings are at most PADK_MAX and 8; the kernel
  // asserts it).
  static constexpr int PADK_MAX = KPERM && KW == 8 ? 8 : 4;
  static constexpr int tile(int R) { return std::max(R * (BK + PADK_MAX), BK * (R + 8)); }
  static constexpr int TILE_A = tile(BM), TILE_B = tile(BN);
  static constexpr std::size_t kShared = std::size_t(STAGES) * (TILE_A + TILE_B) * sizeof(double);
};

// An op's shared layout: which operands are contiguous along k, whether the
// k positions are renumbered, and the row strides' paddings in doubles, each
// chosen so that a warp's fragment reads take as few shared-memory
// wavefronts as the plain layout's, the fewest their size allows where the
// hardware serves the warp's addresses together:
//  - 8-byte reads along a k row (PADK 4): a row of 20 doubles spreads the
//    eight rows a warp reads over four bank quarters, two wavefronts;
//  - 16-byte reads along a k row (renumbered): rows r and r + 1 (one
//    quarter warp) must take disjoint banks: with KW 16 a thread's first
//    read covers k 4 t .. 4 t + 1, so a row of 18 doubles (PADK 2) shifts
//    row r + 1 by 2 doubles into the gaps; with KW 8 a quarter warp's row
//    reads 8 consecutive doubles, so a row of 24 (PADK 8) shifts it by 8;
//  - 8-byte reads along a row of i or j: the four k rows a warp reads at
//    once must fall on two bank halves: k rows 1 apart (not renumbered) need
//    a stride of 8 mod 16 doubles (PADR 8); renumbered (AB's B) they are
//    KW / 4 apart, and a stride of 2 mod 4 (PADR 6) serves both KW.
template <Op op, bool KPERM, int KW>
struct Layout {
  static constexpr bool a_kcontig = op != Op::AtB, b_kcontig = op == Op::ABtC;
  static constexpr bool kperm = KPERM && (a_kcontig || b_kcontig);
  static constexpr int PADK = kperm ? (KW == 8 ? 8 : 2) : 4, PADR = kperm ? 6 : 8;
};

// One operand's R x BK tiles into shared memory: kcontig, element (r, k) at
// p[r * ld + k], stored s[r][k]; else at p[k * ld + r], stored s[k][r]; rows
// of S doubles. VEC doubles a copy (2 when ld is even and the operand 16-byte
// aligned, else 1); a warp's copies run along the contiguous dimension.
template <int R, int THREADS, bool kcontig, int VEC, int S>
struct Loader {
  static constexpr int CHUNKS = R * BK / VEC, COPIES = CHUNKS / THREADS;
  static_assert(CHUNKS % THREADS == 0, "tile copies must split evenly");
  static constexpr int PER_LINE = (kcontig ? BK : R) / VEC;  // chunks along the contiguous dimension
  const double* base;
  const double* p;  // copy 0's element of the next k tile
  int64_t ld;
  int64_t step;
  int line0, along0;  // copy 0's line (r or k) and position along it
  static constexpr int LINE_STEP = THREADS / PER_LINE;
  int64_t r0, rows;

  __device__ __forceinline__ Loader(const double* a, int64_t ld_, int64_t r0_, int64_t rows_, int tid)
      : base(a), ld(ld_), r0(r0_), rows(rows_) {
    line0 = tid / PER_LINE, along0 = (tid % PER_LINE) * VEC;
    if (kcontig)
      p = a + (r0 + line0) * ld + along0, step = BK;
    else
      p = a + int64_t(line0) * ld + r0 + along0, step = BK * ld;
  }
  __device__ __forceinline__ void load(double* s, int64_t k0, int64_t K) {
#pragma unroll
    for (int l = 0; l < COPIES; ++l) {
      const int line = line0 + l * LINE_STEP;
      // Element positions: VEC = 2 needs both in or both out, which even
      // lengths (K or rows) give.
      const int64_t r = kcontig ? r0 + line : r0 + along0;
      const int64_t k = kcontig ? k0 + along0 : k0 + line;
      const bool ok = r < rows && k < K;
      const double* src = ok ? p + int64_t(l) * LINE_STEP * ld : base;  // lines are rows or k
      double* dst = s + line * S + along0;
      copy<VEC * 8>(dst, src, ok);
    }
    p += step;
  }
};

// The k of this thread's mma k position fk + 4 q in the step at kk: renumbered,
// (KW / 4) fk + q (a thread's positions are consecutive along k), else fk + 4 q.
template <int KW, bool kperm>
__device__ __forceinline__ int kpos(int kk, int fk, int q) {
  return kk + (kperm ? fk * (KW / 4) + q : fk + 4 * q);
}
// Element (line, k) of a shared tile of rows of S doubles: line is a row of A
// or a column of B; kcontig tiles hold rows of k.
template <bool kcontig, int S>
__device__ __forceinline__ double at(const double* t, int line, int k) {
  return kcontig ? t[line * S + k] : t[k * S + line];
}
// This thread's KW / 4 values of one line at its k positions (v[q] at
// position fk + 4 q): 16-byte reads where the positions are consecutive
// along a k row.
template <int KW, bool kcontig, bool kperm, int S>
__device__ __forceinline__ void fragment(const double* t, int line, int kk, int fk, double (&v)[KW / 4]) {
  if constexpr (kcontig && kperm && KW >= 8) {
    const double2* p = reinterpret_cast<const double2*>(t + line * S + kpos<KW, kperm>(kk, fk, 0));
#pragma unroll
    for (int h = 0; h < KW / 8; ++h) {
      const double2 x = p[h];
      v[2 * h] = x.x, v[2 * h + 1] = x.y;
    }
  } else {
#pragma unroll
    for (int q = 0; q < KW / 4; ++q) v[q] = at<kcontig, S>(t, line, kpos<KW, kperm>(kk, fk, q));
  }
}

template <class Cfg, Op op, int VEC>
__global__ void __launch_bounds__(Cfg::THREADS, 1)
    dmma_kernel(const double* __restrict__ A, const double* __restrict__ B, const double* __restrict__ C,
                double* __restrict__ D, int64_t M, int64_t N, int64_t K) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, MI = Cfg::MI, NI = Cfg::NI, STAGES = Cfg::STAGES, KW = Cfg::KW;
  using L = Layout<op, Cfg::KPERM, KW>;
  constexpr bool a_kcontig = L::a_kcontig, b_kcontig = L::b_kcontig;
  constexpr int SA = a_kcontig ? BK + L::PADK : BM + L::PADR, SB = b_kcontig ? BK + L::PADK : BN + L::PADR;
  static_assert((a_kcontig ? BM : BK) * SA <= Cfg::TILE_A && (b_kcontig ? BN : BK) * SB <= Cfg::TILE_B,
                "an operand's shared rows must fit its slot");
  extern __shared__ __align__(16) double smem[];  // STAGES x (A tile, B tile)
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm0 = (warp / (BN / Cfg::WN)) * Cfg::WM, wn0 = (warp % (BN / Cfg::WN)) * Cfg::WN;
  const int fr = lane / 4, fk = lane % 4;  // fragment row (of A) / column (of B), and k
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, ktiles = (K + BK - 1) / BK;
  const int64_t lda = a_kcontig ? K : M, ldb = b_kcontig ? K : N;

  // Grouped order: GROUP_M tile rows at a time, down each column of the group.
  const TileCoord tile = grouped_tile(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int64_t m0 = tile.tm * BM, n0 = tile.tn * BN;

  Loader<BM, Cfg::THREADS, a_kcontig, VEC, SA> la(A, lda, m0, M, tid);
  Loader<BN, Cfg::THREADS, b_kcontig, VEC, SB> lb(B, ldb, n0, N, tid);
  auto issue = [&](int64_t kt) {
    if (kt < ktiles) {
      double* s = smem + (kt % STAGES) * (Cfg::TILE_A + Cfg::TILE_B);
      la.load(s, kt * BK, K);
      lb.load(s + Cfg::TILE_A, kt * BK, K);
    }
    commit();  // an empty group past the end keeps the count the waits expect
  };
  double acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

  // This thread's fragments of the k step at kk of the tile at s: b[j] of
  // column wn0 + 8 j + fr, a[i] of rows wm0 + 16 i + fr and + 8 interleaved
  // (dmma's order).
  const auto read_b = [&](const double* s, int kk, double(&b)[NI][KW / 4]) {
#pragma unroll
    for (int j = 0; j < NI; ++j)
      fragment<KW, b_kcontig, L::kperm, SB>(s + Cfg::TILE_A, wn0 + j * 8 + fr, kk, fk, b[j]);
  };
  const auto read_a = [&](const double* s, int kk, int i, double(&a)[KW / 2]) {
    const int r = wm0 + i * 16 + fr;
    if constexpr (L::kperm && a_kcontig && KW >= 8) {
      double lo[KW / 4], hi[KW / 4];
      fragment<KW, a_kcontig, L::kperm, SA>(s, r, kk, fk, lo);
      fragment<KW, a_kcontig, L::kperm, SA>(s, r + 8, kk, fk, hi);
#pragma unroll
      for (int q = 0; q < KW / 4; ++q) a[2 * q] = lo[q], a[2 * q + 1] = hi[q];
    } else {
      // Row r and row r + 8 k by k, the plain configurations' order of loads
      // (their PTX stays as it was measured).
#pragma unroll
      for (int q = 0; q < KW / 4; ++q) {
        const int k = kpos<KW, L::kperm>(kk, fk, q);
        a[2 * q] = at<a_kcontig, SA>(s, r, k), a[2 * q + 1] = at<a_kcontig, SA>(s, r + 8, k);
      }
    }
  };

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (int64_t kt = 0; kt < ktiles; ++kt) {
    wait_groups<STAGES - 2>();  // tile kt has landed (this thread's copies)
    __syncthreads();            // ... everyone's; and the slot of kt - 1 is free
    issue(kt + STAGES - 1);
    const double* s = smem + (kt % STAGES) * (Cfg::TILE_A + Cfg::TILE_B);
#pragma unroll
    for (int kk = 0; kk < BK; kk += KW) {
      double b[NI][KW / 4];
      read_b(s, kk, b);
      if constexpr (Cfg::KPERM) {
        // Every fragment of the step first: ptxas spills less this way than
        // with the reads interleaved per i (docs/perf/gemm-cuda.md).
        double a[MI][KW / 2];
#pragma unroll
        for (int i = 0; i < MI; ++i) read_a(s, kk, i, a[i]);
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
          for (int j = 0; j < NI; ++j) dmma<KW>(acc[i][j], a[i], b[j]);
      } else {
#pragma unroll
        for (int i = 0; i < MI; ++i) {
          double a[KW / 2];
          read_a(s, kk, i, a);
#pragma unroll
          for (int j = 0; j < NI; ++j) dmma<KW>(acc[i][j], a, b[j]);
        }
      }
    }
  }
  wait_groups<0>();  // no copy may still be landing when the block exits

  // Thread holds (fr + 8 h, 2 fk + {0, 1}) of each 16 x 8 tile in acc[.][.][2 h + {0, 1}].
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t r = m0 + wm0 + i * 16 + fr + 8 * h;
      if (r >= M) continue;
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int64_t c = n0 + wn0 + j * 8 + 2 * fk;
        double v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
        if (op == Op::ABtC) {
          if (c < N) v0 += C[r * N + c];
          if (c + 1 < N) v1 += C[r * N + c + 1];
        }
        if (VEC == 2 && c + 1 < N) {
          *reinterpret_cast<double2*>(D + r * N + c) = make_double2(v0, v1);
        } else {
          if (c < N) D[r * N + c] = v0;
          if (c + 1 < N) D[r * N + c + 1] = v1;
        }
      }
    }
}

// One tile configuration's kernels, by run-time op and copy width.
struct Tile {
  const char* name;
  int bm, bn;
  void (*allow)();
  void (*launch)(const Problem& p, bool vec, const double* a, const double* b, const double* c, double* d,
                 cudaStream_t s);
};

template <class Cfg>
Tile tile(const char* name) {
  auto allow = [] {
    auto set = [](auto kernel) {
      PB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Cfg::kShared)));
    };
    set(dmma_kernel<Cfg, Op::AB, 1>), set(dmma_kernel<Cfg, Op::AB, 2>);
    set(dmma_kernel<Cfg, Op::AtB, 1>), set(dmma_kernel<Cfg, Op::AtB, 2>);
    set(dmma_kernel<Cfg, Op::ABtC, 1>), set(dmma_kernel<Cfg, Op::ABtC, 2>);
  };
  auto launch = [](const Problem& p, bool vec, const double* a, const double* b, const double* c, double* d,
                   cudaStream_t s) {
    const int64_t tiles = ((p.m + Cfg::BM - 1) / Cfg::BM) * ((p.n + Cfg::BN - 1) / Cfg::BN);
    with_op(p.op, [&](auto op) {
      auto kernel = vec ? dmma_kernel<Cfg, op.value, 2> : dmma_kernel<Cfg, op.value, 1>;
      kernel<<<unsigned(tiles), Cfg::THREADS, Cfg::kShared, s>>>(a, b, c, d, p.m, p.n, p.k);
    });
  };
  return {name, Cfg::BM, Cfg::BN, allow, launch};
}

// The configurations a tuning sweep chooses from (ci/tune-gemm): block tile,
// warp tile, ring depth, k of one mma (a trailing p: k renumbered, 16-byte
// fragment reads); the first is the default.
const std::vector<Tile>& tiles() {
  static const std::vector<Tile> list = {
      tile<Config<128, 128, 64, 32, 3, 16>>("128x128w64x32s3k16"),
      tile<Config<128, 128, 64, 32, 4, 16>>("128x128w64x32s4k16"),
      tile<Config<128, 128, 64, 32, 3, 8>>("128x128w64x32s3k8"),
      tile<Config<128, 128, 32, 64, 3, 16>>("128x128w32x64s3k16"),
      tile<Config<128, 64, 64, 32, 3, 16>>("128x64w64x32s3k16"),
      tile<Config<64, 128, 32, 32, 3, 16>>("64x128w32x32s3k16"),
      tile<Config<128, 128, 64, 32, 4, 16, true>>("128x128w64x32s4k16p"),
      tile<Config<128, 128, 64, 32, 3, 8, true>>("128x128w64x32s3k8p"),
      tile<Config<128, 64, 64, 32, 3, 16, true>>("128x64w64x32s3k16p"),
      tile<Config<128, 64, 64, 32, 3, 8, true>>("128x64w64x32s3k8p"),
  };
  return list;
}

template <class T>
class CudaDmma final : public DeviceVariant<T> {
 public:
  explicit CudaDmma(int tile) : tile_for_("CUDA.DMMA", dmma_tiles, "f64", tile) {}
  void prepare(const Problem& p, const Inputs<T>& in) override {
    DeviceVariant<T>::prepare(p, in);
    bind_device();
    tile_for_(p);
  }
  void bind_device() override {
    if (std::is_same<T, double>::value)
      for (const auto& t : tiles()) t.allow();
    tile_for_.set_sm(device_sm());
  }
  Support supports(const Problem& p) const override {
    if (!std::is_same<T, double>::value)
      return Support::no("an FP64 tensor-core kernel; float runs on the TF32 / BF16 kernels");
    const int sm = device_sm_or_zero();
    if (sm == 0) return Support::no("no usable CUDA device");
    if (sm < 90)
      return Support::no("needs sm_90 or newer (f64 mma.sync m16n8k16); this GPU is sm_" +
                         std::to_string(sm));
    for (const auto& t : tiles())  // the smallest tiles give the most blocks
      if (((p.m + t.bm - 1) / t.bm) * ((p.n + t.bn - 1) / t.bn) > 2147483647)
        return Support::no("more output tiles than a grid holds");
    return Support::yes();
  }
  void launch(const Problem& p, const T* a, const T* b, const T* c, T* d) override {
    if constexpr (std::is_same<T, double>::value) {
      // Two-double copies and stores need every leading dimension the kernel
      // copies along, and N, even, and 16-byte aligned operands.
      const bool ld_even = p.n % 2 == 0 && (p.op == Op::AtB ? p.m % 2 == 0 : p.k % 2 == 0);
      const bool vec = ld_even && aligned16(a) && aligned16(b) && aligned16(c) && aligned16(d);
      tiles()[tile_for_(p)].launch(p, vec, a, b, c, d, this->s());
      PB_CUDA_LAUNCHED();
    } else {
      throw std::logic_error("CUDA.DMMA is a double kernel: " + p.str());
    }
  }

 private:
  // The configuration for a problem: looked up untimed in prepare() (the
  // MLP's compute() repeats a few shapes).
  TileChoice tile_for_;
};
}  // namespace

const std::vector<std::string>& dmma_tiles() {
  static const std::vector<std::string> names = tile_names(tiles());
  return names;
}

template <class T>
std::unique_ptr<Variant<T>> make_cuda_dmma(int tile) {
  return std::make_unique<CudaDmma<T>>(tile);
}
template std::unique_ptr<Variant<float>> make_cuda_dmma(int);
template std::unique_ptr<Variant<double>> make_cuda_dmma(int);

}  // namespace pb::gemm
