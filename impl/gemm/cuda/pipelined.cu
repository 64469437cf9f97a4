// CUDA.Pipelined (float): the next step after RegBlock. Relative to it:
//  - global -> shared copies are asynchronous (cp.async) into a ring of 2-4
//    shared-memory tiles, so the next K tiles are in flight while one is
//    multiplied; no registers stage the next tile, which (with 64 fewer bytes
//    of state a thread) lets two 256-thread blocks share an SM in the 64 x 32
//    warp-tile configurations (RegBlock needed the whole register file for
//    one: 8 warps to hide latency, here 16);
//  - threads are laid out by warp: the block tile is made of warp tiles of
//    64 x 32 (or 64 x 64), a warp's 8 x 4 threads each own 8 x 8 (8 x 16)
//    outputs (two 4-row by two (four) 4-column groups), so a warp's shared
//    reads of one k are 128 contiguous bytes of A (4 threads share each) and
//    64 of B;
//  - an operand that is contiguous along k (A of AB and ABtC, B of ABtC) is
//    copied element by element (4-byte cp.async) into the k-major tile the
//    multiply reads with 16-byte loads; an operand contiguous along i or j is
//    copied 16 bytes at a time when its rows allow (multiple of 4 and
//    aligned), element by element otherwise. So every op runs the same inner
//    loop (in RegBlock, AtB is the slowest op);
//  - a 1-D grid walks the output tiles in groups of 8 tile rows
//    (gemm/cuda/raster.hpp), so the blocks running together share their A
//    and B panels in L2.
// Out-of-range elements are zero-filled by the copy (source size 0); edges
// are stored under predicates. Double is not built: its tensor-core kernel is
// a separate step. The block tile and ring depth come from a small set (see
// tiles()), one per op and shape from the table a tuning sweep wrote
// (gemm/gemm.hpp).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cuda/cp_async.cuh"
#include "gemm/cuda/device_variant.cuh"
#include "gemm/cuda/raster.hpp"
#include "gemm/cuda/transpose.cuh"
#include "gemm/gemm.hpp"

namespace pb::gemm {
const std::vector<std::string>& pipelined_tiles();
namespace {
using namespace pb::cp_async;

constexpr int BK = 16, PAD = 4, GROUP_M = 8;

// A tile configuration: block tile BM x BN of warp tiles 64 x WN (so BM / 64
// x BN / WN warps), a STAGES-deep ring. A thread owns 8 x WN / 4 outputs:
// WN = 32, 64 floats of accumulators and registers capped so 512 threads
// fit an SM (two 256-thread blocks, four 128-thread ones); WN = 64, 128
// accumulators, twice the multiply-adds per shared load, up to 255 registers
// and one block an SM (the shape cuBLAS SGEMM launches on sm_90).
// PACK: operands contiguous along k (A of AB and ABtC, B of ABtC) are first
// transposed into k-major workspaces (a timed pass, gemm/cuda/transpose.cuh),
// so every op runs AtB's loop, whose operands are all copied 16 bytes at a
// time: faster than 4-byte transposing copies, and the pass reads and
// writes each transposed operand once, a small part of a large product.
// Measurements behind these choices: docs/perf/gemm-cuda.md.
template <int BM_, int BN_, int STAGES_, int WN_ = 32, bool PACK_ = false>
struct Config {
  static constexpr int BM = BM_, BN = BN_, STAGES = STAGES_, WN = WN_, TN = WN / 4;  // TN: a thread's columns
  static constexpr bool PACK = PACK_;
  static constexpr int WARPS_N = BN / WN, THREADS = (BM / 64) * WARPS_N * 32;
  static constexpr int MIN_BLOCKS = WN == 32 ? 512 / THREADS : 1;
  static constexpr int TILE_A = BK * (BM + PAD), TILE_B = BK * (BN + PAD);  // floats, k-major padded rows
  static constexpr std::size_t kShared = std::size_t(STAGES) * (TILE_A + TILE_B) * sizeof(float);
};

// Copies one operand's BK x R tiles (rows r0 ... of i or j, k tile by k
// tile) into k-major shared tiles s[k][r], from per-thread state set once per
// output tile, so a K step costs a pointer add and the predicates. kcontig:
// element (r, k) at p[r * ld + k], else at p[k * ld + r]; `rows` and `K`
// bound the valid range. A thread's copies: kcontig, 4 bytes at k = tid % 16
// and rows tid / 16 + (THREADS / 16) l (a warp reads 2 rows of 16 k: 64-byte
// runs); vec, 16 bytes at rows k = tid / (R / 4) + l (THREADS / (R / 4)), 4
// columns from (tid % (R / 4)) * 4; otherwise 4 bytes at k = tid / R + l
// (THREADS / R), column tid % R.
template <int R, int THREADS, bool kcontig, bool vec>
struct TileLoader {
  static constexpr int PER_K = kcontig ? 16 : vec ? R / 4 : R;  // threads along one k row (kcontig: along r)
  static constexpr int COPIES = kcontig ? R * 16 / THREADS : BK * PER_K / THREADS;
  static_assert(COPIES >= 1 && (kcontig ? R % (THREADS / 16) == 0 : THREADS % PER_K == 0),
                "tile copies must split evenly over the threads");
  const float* base;  // the operand (a valid address for zero-filled copies)
  const float* p;     // copy 0's element of the next k tile
  int64_t lstride;    // between a thread's copies
  int64_t step;       // to the next k tile
  unsigned ok_rows;   // bit l: copy l's row or column (group) in range
  int k_of0, k_dl;    // copy l's k within the tile: k_of0 + l * k_dl
  int s_of0, s_dl;    // copy l's shared offset: s_of0 + l * s_dl

  __device__ __forceinline__ TileLoader(const float* a, int64_t ld, int64_t r0, int64_t rows, int tid)
      : base(a) {
    int r;
    if (kcontig) {
      constexpr int rstep = THREADS / 16;
      r = tid / 16, k_of0 = tid % 16, k_dl = 0;
      p = a + (r0 + r) * ld + k_of0, lstride = rstep * ld, step = BK;
      s_of0 = k_of0 * (R + PAD) + r, s_dl = rstep;
      ok_rows = 0;
      for (int l = 0; l < COPIES; ++l) ok_rows |= unsigned(r0 + r + rstep * l < rows) << l;
    } else {
      const int width = vec ? 4 : 1;
      k_of0 = tid / PER_K, k_dl = THREADS / PER_K, r = (tid % PER_K) * width;
      p = a + int64_t(k_of0) * ld + r0 + r, lstride = int64_t(k_dl) * ld, step = BK * ld;
      s_of0 = k_of0 * (R + PAD) + r, s_dl = k_dl * (R + PAD);
      ok_rows = r0 + r < rows ? ~0u : 0u;  // vec: rows is a multiple of 4, all four or none
    }
  }
  // Tile t (k from t * BK) into s; then on to the next tile.
  __device__ __forceinline__ void load(float* s, int64_t k0, int64_t K) {
#pragma unroll
    for (int l = 0; l < COPIES; ++l) {
      const bool ok = (ok_rows >> l & 1u) && k0 + k_of0 + l * k_dl < K;
      const float* src = ok ? p + l * lstride : base;
      if (!kcontig && vec)
        copy<16>(s + s_of0 + l * s_dl, src, ok);
      else
        copy<4>(s + s_of0 + l * s_dl, src, ok);
    }
    p += step;
  }
};

// op sets the operands' layouts; addC adds C in the epilogue (ABtC, or AtB
// standing in for a packed ABtC).
template <class Cfg, Op op, bool vec, bool addC = op == Op::ABtC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    pipelined_kernel(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ C,
                     float* __restrict__ D, int64_t M, int64_t N, int64_t K) {
  constexpr int BM = Cfg::BM, BN = Cfg::BN, STAGES = Cfg::STAGES, THREADS = Cfg::THREADS;
  extern __shared__ __align__(16) float smem[];  // STAGES x (A tile, B tile)
  constexpr bool a_kcontig = op != Op::AtB, b_kcontig = op == Op::ABtC;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  constexpr int TN = Cfg::TN;
  // Warp tile (wm, wn) of BM / 64 x BN / WN; thread (ty, tx) of 8 x 4 inside it.
  const int wm = warp / Cfg::WARPS_N, wn = warp % Cfg::WARPS_N, ty = lane / 4, tx = lane % 4;
  const int row0 = wm * 64 + ty * 4, col0 = wn * Cfg::WN + tx * 4;  // + {0, 32} rows, + 16 g columns
  const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, ktiles = (K + BK - 1) / BK;
  const int64_t lda = a_kcontig ? K : M, ldb = b_kcontig ? K : N;
  const TileCoord tile = grouped_tile(blockIdx.x, tiles_m, tiles_n, GROUP_M);
  const int64_t m0 = tile.tm * BM, n0 = tile.tn * BN;
  {
    TileLoader<BM, THREADS, a_kcontig, vec> la(A, lda, m0, M, tid);
    TileLoader<BN, THREADS, b_kcontig, vec> lb(B, ldb, n0, N, tid);
    // Tiles are issued in order, t = 0, 1, ...: each loader walks forward.
    auto issue = [&](int64_t t) {
      if (t < ktiles) {
        float* s = smem + (t % STAGES) * (Cfg::TILE_A + Cfg::TILE_B);
        la.load(s, t * BK, K);
        lb.load(s + Cfg::TILE_A, t * BK, K);
      }
      commit();  // an empty group past the end keeps the count the waits expect
    };
    float acc[8][TN];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
      for (int c = 0; c < TN; ++c) acc[r][c] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) issue(s);
    for (int64_t t = 0; t < ktiles; ++t) {
      wait_groups<STAGES - 2>();  // tile t has landed (this thread's copies)
      __syncthreads();            // ... everyone's; and stage (t - 1) % STAGES is free
      issue(t + STAGES - 1);
      const float* As = smem + (t % STAGES) * (Cfg::TILE_A + Cfg::TILE_B);
      const float* Bs = As + Cfg::TILE_A;
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float a[8], b[TN];
        const float4 a0 = *reinterpret_cast<const float4*>(As + k * (BM + PAD) + row0);
        const float4 a1 = *reinterpret_cast<const float4*>(As + k * (BM + PAD) + row0 + 32);
        a[0] = a0.x, a[1] = a0.y, a[2] = a0.z, a[3] = a0.w, a[4] = a1.x, a[5] = a1.y, a[6] = a1.z,
        a[7] = a1.w;
#pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
          const float4 bg = *reinterpret_cast<const float4*>(Bs + k * (BN + PAD) + col0 + 16 * g);
          b[4 * g] = bg.x, b[4 * g + 1] = bg.y, b[4 * g + 2] = bg.z, b[4 * g + 3] = bg.w;
        }
#pragma unroll
        for (int r = 0; r < 8; ++r)
#pragma unroll
          for (int c = 0; c < TN; ++c) acc[r][c] += a[r] * b[c];
      }
    }
    wait_groups<0>();  // no copy may still be landing when the block exits

#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int64_t i = m0 + row0 + (r / 4) * 32 + (r % 4);
      if (i >= M) continue;
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) {
        const int64_t j = n0 + col0 + g * 16;
        float out[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          out[c] = acc[r][g * 4 + c];
          if (addC && j + c < N) out[c] += C[i * N + j + c];
        }
        if (vec && j + 3 < N) {
          *reinterpret_cast<float4*>(D + i * N + j) = make_float4(out[0], out[1], out[2], out[3]);
        } else {
#pragma unroll
          for (int c = 0; c < 4; ++c)
            if (j + c < N) D[i * N + j + c] = out[c];
        }
      }
    }
  }
}

// One tile configuration's kernels, by run-time op and vector path. Dynamic
// shared memory beyond 48 KB is opted into once per kernel (untimed: from
// prepare() and bind()). wa, wb: k-major workspaces of M x K and N x K floats
// for a PACK configuration.
struct Tile {
  const char* name;
  bool pack;
  void (*allow)();
  void (*launch)(const Problem& p, bool vec, const float* a, const float* b, const float* c, float* d,
                 float* wa, float* wb, cudaStream_t s);
};

template <class Cfg>
Tile tile(const char* name) {
  auto allow = [] {
    for (auto kernel :
         {pipelined_kernel<Cfg, Op::AB, true>, pipelined_kernel<Cfg, Op::AB, false>,
          pipelined_kernel<Cfg, Op::AtB, true>, pipelined_kernel<Cfg, Op::AtB, false>,
          pipelined_kernel<Cfg, Op::ABtC, true>, pipelined_kernel<Cfg, Op::ABtC, false>,
          pipelined_kernel<Cfg, Op::AtB, true, true>, pipelined_kernel<Cfg, Op::AtB, false, true>})
      PB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Cfg::kShared)));
  };
  auto launch = [](const Problem& p, bool vec, const float* a, const float* b, const float* c, float* d,
                   float* wa, float* wb, cudaStream_t s) {
    const unsigned grid = unsigned(((p.m + Cfg::BM - 1) / Cfg::BM) * ((p.n + Cfg::BN - 1) / Cfg::BN));
    if (Cfg::PACK && p.op != Op::AtB) {
      // A (M x K) -> K x M; ABtC's B (N x K) -> K x N; then AtB's loop.
      transpose(a, wa, p.m, p.k, p.k, p.m, s);
      if (p.op == Op::ABtC) transpose(b, wb, p.n, p.k, p.k, p.n, s);
      const float* bk = p.op == Op::ABtC ? wb : b;
      const bool v = p.m % 4 == 0 && p.n % 4 == 0 && aligned16(b) && aligned16(c) && aligned16(d);
      auto kernel =
          p.op == Op::ABtC
              ? (v ? pipelined_kernel<Cfg, Op::AtB, true, true> : pipelined_kernel<Cfg, Op::AtB, false, true>)
              : (v ? pipelined_kernel<Cfg, Op::AtB, true> : pipelined_kernel<Cfg, Op::AtB, false>);
      kernel<<<grid, Cfg::THREADS, Cfg::kShared, s>>>(wa, bk, c, d, p.m, p.n, p.k);
      return;
    }
    with_op(p.op, [&](auto op) {
      auto kernel = vec ? pipelined_kernel<Cfg, op.value, true> : pipelined_kernel<Cfg, op.value, false>;
      kernel<<<grid, Cfg::THREADS, Cfg::kShared, s>>>(a, b, c, d, p.m, p.n, p.k);
    });
  };
  return {name, Cfg::PACK, allow, launch};
}

// The configurations a tuning sweep chooses from (ci/tune-gemm); the first is
// the default where the table has no choice (another GPU, a shape class the
// sweep did not cover).
const std::vector<Tile>& tiles() {
  static const std::vector<Tile> list = {
      tile<Config<128, 128, 3>>("128x128s3"),
      tile<Config<128, 128, 4>>("128x128s4"),
      tile<Config<128, 128, 2>>("128x128s2"),
      tile<Config<128, 64, 3>>("128x64s3"),
      tile<Config<64, 128, 3>>("64x128s3"),
      tile<Config<256, 128, 3>>("256x128s3"),
      tile<Config<256, 128, 3, 64>>("256x128w64s3"),
      tile<Config<128, 256, 3, 64>>("128x256w64s3"),
      tile<Config<128, 128, 3, 64>>("128x128w64s3"),
      tile<Config<256, 128, 4, 64>>("256x128w64s4"),
      tile<Config<128, 128, 2, 32, true>>("128x128s2p"),
      tile<Config<128, 256, 3, 64, true>>("128x256w64s3p"),
      tile<Config<256, 128, 3, 64, true>>("256x128w64s3p"),
      tile<Config<128, 128, 3, 64, true>>("128x128w64s3p"),
  };
  return list;
}

template <class T>
class CudaPipelined final : public DeviceVariant<T> {
 public:
  explicit CudaPipelined(int tile) : tile_for_("CUDA.Pipelined", pipelined_tiles, "f32", tile) {}
  void prepare(const Problem& p, const Inputs<T>& in) override {
    DeviceVariant<T>::prepare(p, in);
    bind_device();
    if (tiles()[tile_for_(p)].pack) reserve(p);  // untimed; compute() grows them on a larger problem
  }
  void bind_device() override {
    if (std::is_same<T, float>::value)
      for (const auto& t : tiles()) t.allow();
    tile_for_.set_sm(device_sm());
  }
  Support supports(const Problem& p) const override {
    if (!std::is_same<T, float>::value)
      return Support::no("an FFMA float kernel; double runs on the tensor cores in its own variant");
    if ((p.m + 63) / 64 * ((p.n + 63) / 64) > std::numeric_limits<int>::max())
      return Support::no("more output tiles than a grid holds");
    return Support::yes();
  }
  void launch(const Problem& p, const T* a, const T* b, const T* c, T* d) override {
    if constexpr (std::is_same<T, float>::value) {
      // 16-byte copies of i- or j-contiguous rows and 16-byte stores of D need
      // rows of a multiple of 4 floats and 16-byte aligned operands.
      const bool vec = p.n % 4 == 0 && (p.op != Op::AtB || p.m % 4 == 0) && aligned16(a) && aligned16(b) &&
                       aligned16(c) && aligned16(d);
      const Tile& t = tiles()[tile_for_(p)];
      if (t.pack) reserve(p);
      t.launch(p, vec, a, b, c, d, wa_.get(), wb_.get(), this->s());
      PB_CUDA_LAUNCHED();
    } else {
      throw std::logic_error("CUDA.Pipelined is a float kernel: " + p.str());
    }
  }

 private:
  // Room in the packing workspaces for p's transposed operands (AtB's are
  // k-major already: none).
  void reserve(const Problem& p) {
    const auto need_a = std::size_t(p.op == Op::AtB ? 0 : p.m * p.k);
    const auto need_b = std::size_t(p.op == Op::ABtC ? p.n * p.k : 0);
    if (wa_.size() < need_a) wa_ = DeviceBuffer<float>(need_a);
    if (wb_.size() < need_b) wb_ = DeviceBuffer<float>(need_b);
  }
  // The configuration for a problem: looked up untimed in prepare() (the
  // MLP's compute() repeats a few shapes).
  TileChoice tile_for_;
  DeviceBuffer<float> wa_, wb_;
};
}  // namespace

const std::vector<std::string>& pipelined_tiles() {
  static const std::vector<std::string> names = tile_names(tiles());
  return names;
}

template <class T>
std::unique_ptr<Variant<T>> make_cuda_pipelined(int tile) {
  return std::make_unique<CudaPipelined<T>>(tile);
}
template std::unique_ptr<Variant<float>> make_cuda_pipelined(int);
template std::unique_ptr<Variant<double>> make_cuda_pipelined(int);

}  // namespace pb::gemm
