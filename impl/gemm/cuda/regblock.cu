// CUDA.RegBlock: the first optimised kernel. Relative to Tiled, whose threads
// each compute one output and do two shared-memory loads per multiply-add,
// every thread here computes an 8 x 8 block of outputs from 8 + 8 operands
// held in registers: 64 FMAs per 4 sixteen-byte shared loads (float). A 256-
// thread block owns a 128 x 128 output tile and walks K in steps of BK,
//  - loading global tiles with 16-byte vector loads along each operand's
//    contiguous dimension (scalar, predicated loads when a dimension is not a
//    multiple of the vector width),
//  - storing A transposed (k-major) so both operands are read as vectors,
//  - double-buffering shared memory: the next tile is fetched into registers
//    while the current one is multiplied, one barrier per K step.
// A thread's 8 rows are two groups of 4 spaced 64 apart (same for columns), so
// the 16 threads of a half-warp read 256 contiguous bytes of a shared row:
// no bank conflicts. Edges are handled by zero-filled loads and predicated
// stores, so any M, N, K is correct.
#include <cstdint>

#include "gemm/cuda/device_variant.cuh"

namespace pb::gemm {
namespace {

constexpr int BM = 128, BN = 128, THREADS = 256;

template <class T>
struct Cfg;
template <>
struct Cfg<float> {
  static constexpr int BK = 16;
  static constexpr int VEC = 4;
};
template <>
struct Cfg<double> {
  static constexpr int BK = 8;  // keeps 2 x (A + B) tiles inside 48 KB of static shared memory
  static constexpr int VEC = 2;
};

// 16-byte vector moves between memory and register arrays, component by
// component so the arrays stay in registers.
__device__ __forceinline__ void vload(const float* p, float* r) {
  float4 v = *reinterpret_cast<const float4*>(p);
  r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
}
__device__ __forceinline__ void vload(const double* p, double* r) {
  double2 v = *reinterpret_cast<const double2*>(p);
  r[0] = v.x, r[1] = v.y;
}
__device__ __forceinline__ void vstore(float* p, const float* r) {
  *reinterpret_cast<float4*>(p) = make_float4(r[0], r[1], r[2], r[3]);
}
__device__ __forceinline__ void vstore(double* p, const double* r) {
  *reinterpret_cast<double2*>(p) = make_double2(r[0], r[1]);
}

// One operand line of VEC consecutive elements into r, zero where out of
// range: element t is loaded when `ok` and t < `valid`. For a line along k
// (A of AB / ABtC, B of ABtC) ok is the fixed row check and valid = K - k;
// for a line along i or j (A of AtB, B of AB / AtB) ok is the per-tile k
// check and valid is fixed. `vec`: rows are VEC-aligned and their lengths
// multiples of VEC, so a line is entirely in range or entirely out.
template <class T, bool vec>
__device__ __forceinline__ void load_line(const T* p, bool ok, int valid, T* r) {
  constexpr int VEC = Cfg<T>::VEC;
  if (vec && ok && valid > 0) {
    vload(p, r);
  } else {
#pragma unroll
    for (int t = 0; t < VEC; ++t) r[t] = (!vec && ok && t < valid) ? p[t] : T(0);
  }
}

template <Op op, class T, bool vec>
// One block per SM's worth of register cap (255): 64 accumulators, 16 operands
// and 16 staged loads do not fit the 128 registers that two blocks would
// allow without spilling (ptxas showed 48-216 bytes of spills at 128).
__global__ void __launch_bounds__(THREADS, 1)
    regblock_kernel(const T* __restrict__ A, const T* __restrict__ B, const T* __restrict__ C,
                    T* __restrict__ D, int64_t M, int64_t N, int64_t K) {
  constexpr int BK = Cfg<T>::BK, VEC = Cfg<T>::VEC, PAD = VEC;
  constexpr int LOADS = BM * BK / VEC / THREADS;  // vectors per thread per operand tile (2)
  static_assert(LOADS * VEC * THREADS == BM * BK && BM == BN, "tile shape");
  __shared__ __align__(16) T As[2][BK][BM + PAD];  // As[k][i]
  __shared__ __align__(16) T Bs[2][BK][BN + PAD];  // Bs[k][j]

  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int64_t n0 = int64_t(blockIdx.x) * BN;
  const int64_t tiles_m = (M + BM - 1) / BM;

  T ra[LOADS][VEC], rb[LOADS][VEC];  // next tile, staged in registers

  // Per-thread load state, set once per output tile so the K loop does no
  // 64-bit index arithmetic: each line's pointer advances by a fixed stride.
  constexpr bool a_kcontig = op != Op::AtB, b_kcontig = op == Op::ABtC;
  const T* pa[LOADS];
  const T* pb[LOADS];
  int a_koff[LOADS], b_koff[LOADS];    // k offset of the line within the tile
  bool a_fix[LOADS], b_fix[LOADS];     // k-contiguous: row in range
  int a_valid[LOADS], b_valid[LOADS];  // k-strided: elements in range
  const int64_t a_step = a_kcontig ? BK : BK * M, b_step = b_kcontig ? BK : BK * N;

  auto setup = [&](int64_t m0) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const int v = tid + l * THREADS;
      if (a_kcontig) {
        const int ir = v / (BK / VEC), kv = (v % (BK / VEC)) * VEC;
        pa[l] = A + (m0 + ir) * K + kv;
        a_koff[l] = kv, a_fix[l] = m0 + ir < M, a_valid[l] = 0;
      } else {
        const int kr = v / (BM / VEC), iv = (v % (BM / VEC)) * VEC;
        pa[l] = A + int64_t(kr) * M + m0 + iv;
        a_koff[l] = kr, a_fix[l] = true;
        a_valid[l] = int(max(int64_t(0), min(int64_t(VEC), M - (m0 + iv))));
      }
      if (b_kcontig) {
        const int jr = v / (BK / VEC), kv = (v % (BK / VEC)) * VEC;
        pb[l] = B + (n0 + jr) * K + kv;
        b_koff[l] = kv, b_fix[l] = n0 + jr < N, b_valid[l] = 0;
      } else {
        const int kr = v / (BN / VEC), jv = (v % (BN / VEC)) * VEC;
        pb[l] = B + int64_t(kr) * N + n0 + jv;
        b_koff[l] = kr, b_fix[l] = true;
        b_valid[l] = int(max(int64_t(0), min(int64_t(VEC), N - (n0 + jv))));
      }
    }
  };
  // Global -> registers for the K tile starting at k0; then advance the lines.
  auto fetch = [&](int64_t k0) {
    const int64_t kleft = K - k0;
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      if (a_kcontig)
        load_line<T, vec>(pa[l], a_fix[l], int(min(kleft - a_koff[l], int64_t(VEC))), ra[l]);
      else
        load_line<T, vec>(pa[l], a_koff[l] < kleft, a_valid[l], ra[l]);
      if (b_kcontig)
        load_line<T, vec>(pb[l], b_fix[l], int(min(kleft - b_koff[l], int64_t(VEC))), rb[l]);
      else
        load_line<T, vec>(pb[l], b_koff[l] < kleft, b_valid[l], rb[l]);
      pa[l] += a_step;
      pb[l] += b_step;
    }
  };
  // Registers -> shared buffer `buf`, in k-major layout.
  auto stash = [&](int buf) {
#pragma unroll
    for (int l = 0; l < LOADS; ++l) {
      const int v = tid + l * THREADS;
      if (op == Op::AtB) {
        const int kr = v / (BM / VEC), iv = (v % (BM / VEC)) * VEC;
        vstore(&As[buf][kr][iv], ra[l]);
      } else {
        const int ir = v / (BK / VEC), kv = (v % (BK / VEC)) * VEC;
#pragma unroll
        for (int t = 0; t < VEC; ++t) As[buf][kv + t][ir] = ra[l][t];
      }
      if (op == Op::ABtC) {
        const int jr = v / (BK / VEC), kv = (v % (BK / VEC)) * VEC;
#pragma unroll
        for (int t = 0; t < VEC; ++t) Bs[buf][kv + t][jr] = rb[l][t];
      } else {
        const int kr = v / (BN / VEC), jv = (v % (BN / VEC)) * VEC;
        vstore(&Bs[buf][kr][jv], rb[l]);
      }
    }
  };

  for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
    const int64_t m0 = tm * BM;
    T acc[8][8];
#pragma unroll
    for (int r = 0; r < 8; ++r)
#pragma unroll
      for (int c = 0; c < 8; ++c) acc[r][c] = T(0);

    const int64_t ktiles = (K + BK - 1) / BK;
    setup(m0);
    fetch(0);
    stash(0);
    __syncthreads();
    for (int64_t t = 0; t < ktiles; ++t) {
      const int buf = int(t & 1);
      if (t + 1 < ktiles) fetch((t + 1) * BK);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        T a[8], b[8];
#pragma unroll
        for (int g = 0; g < 2; ++g) {
#pragma unroll
          for (int h = 0; h < 4; h += VEC) {
            vload(&As[buf][k][g * 64 + ty * 4 + h], &a[g * 4 + h]);
            vload(&Bs[buf][k][g * 64 + tx * 4 + h], &b[g * 4 + h]);
          }
        }
#pragma unroll
        for (int r = 0; r < 8; ++r)
#pragma unroll
          for (int c = 0; c < 8; ++c) acc[r][c] += a[r] * b[c];
      }
      if (t + 1 < ktiles) stash(buf ^ 1);
      __syncthreads();
    }

    // Epilogue: rows m0 + {0,64} + ty*4 + r, columns n0 + {0,64} + tx*4 + c.
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int64_t i = m0 + (r / 4) * 64 + ty * 4 + (r % 4);
      if (i >= M) continue;
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        const int64_t j = n0 + g * 64 + tx * 4;
        T out[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          out[c] = acc[r][g * 4 + c];
          if (op == Op::ABtC && j + c < N) out[c] += C[i * N + j + c];
        }
        if (vec && (N % 4 == 0) && j + 3 < N) {
#pragma unroll
          for (int h = 0; h < 4; h += VEC) vstore(&D[i * N + j + h], &out[h]);
        } else {
#pragma unroll
          for (int c = 0; c < 4; ++c)
            if (j + c < N) D[i * N + j + c] = out[c];
        }
      }
    }
  }
}

template <class T>
class CudaRegBlock final : public DeviceVariant<T> {
 public:
  void launch(const Problem& p, const T* a, const T* b, const T* c, T* d) override {
    // Vector loads need every contiguous dimension to be a multiple of the
    // vector width and 16-byte aligned operands (rows then start aligned;
    // cudaMalloc aligns a buffer's base, a caller's pointer may be inside one).
    constexpr int VEC = Cfg<T>::VEC;
    const bool vec = (p.k % VEC == 0) && (p.n % VEC == 0) && (p.op != Op::AtB || p.m % VEC == 0) &&
                     aligned16(a) && aligned16(b) && aligned16(c) && aligned16(d);
    if (vec)
      dispatch<true>(p, a, b, c, d);
    else
      dispatch<false>(p, a, b, c, d);
    PB_CUDA_LAUNCHED();
  }

 private:
  template <bool vec>
  void dispatch(const Problem& p, const T* a, const T* b, const T* c, T* d) {
    dim3 grid(unsigned((p.n + BN - 1) / BN), unsigned(std::min<int64_t>((p.m + BM - 1) / BM, 65535)));
    auto s = this->s();
    with_op(p.op, [&](auto op) {
      regblock_kernel<op.value, T, vec><<<grid, THREADS, 0, s>>>(a, b, c, d, p.m, p.n, p.k);
    });
  }
};
}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_cuda_regblock() {
  return std::make_unique<CudaRegBlock<T>>();
}
template std::unique_ptr<Variant<float>> make_cuda_regblock();
template std::unique_ptr<Variant<double>> make_cuda_regblock();

}  // namespace pb::gemm
