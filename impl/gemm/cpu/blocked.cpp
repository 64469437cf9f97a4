// OMP.Blocked: the cache-blocked GEMM of the BLIS design, written here.
// Relative to OMP (threads over output rows, an i-k-j loop streaming all of B
// through the cache for every row), it blocks for every cache level and
// computes from registers:
//  - B's KC x NC block is packed once into NR-wide column panels (k-major:
//    a panel row is two vectors), shared by all threads, sized for L3;
//  - each thread packs an MC x KC block of A into MR-tall row panels (sized
//    for its L2) and sweeps it against every B panel;
//  - the micro-kernel keeps an MR x NR tile of C in vector registers over
//    the KC products: per k one vector pair of B and MR broadcasts of A,
//    2 MR fused multiply-adds, no stores.
// Packing also absorbs the three ops: A^T B packs A by columns and A B^T
// packs B by rows, so every op runs the same kernel on the same layout (OMP's
// transposed operands stride through memory instead). Edges are packed with
// zeros and their tiles written through a scratch tile.
//
// One micro-kernel per instruction set, each with the tile its registers
// hold (accumulators, the B vectors of one k, one broadcast of A):
//  - AVX-512 (32 registers of 64 bytes): 8 x 2 vectors, 16 accumulators;
//  - AVX2 + FMA (16 registers of 32 bytes): 6 x 2 vectors, 12 accumulators,
//    2 B vectors and a broadcast: 15 registers, so nothing spills;
//  - the baseline (SSE2: 16 registers of 16 bytes, no FMA): 4 x 2 vectors,
//    leaving registers for the products that a multiply and an add need.
// Each kernel is compiled for its own instruction set (target attribute) and
// the file with -ffp-contract=fast (impl/gemm/CMakeLists.txt), so a multiply
// and its add become one FMA wherever the set has one. The host's widest set
// runs (simd.hpp); the packing code is shared and sized by the kernel's tile.
// Measurements behind these choices: docs/perf/gemm-cpu-blocked.md.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "core/status.hpp"
#include "gemm/cpu/cpu_variant.hpp"
#include "gemm/cpu/simd.hpp"

namespace pb::gemm {
namespace {

// C tile (MR x NR at c, row stride ldc) += A panel (MR x kc, k-major) * B
// panel (kc x NR, k-major, a row NV vectors). One plain function per
// instruction set and precision: a target attribute applies to a function,
// and the vector type's width follows the set.
#define PB_BLOCKED_KERNEL(NAME, TARGET, T, BYTES, MR, NV)                                \
  TARGET void NAME(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t ldc) {    \
    typedef T Vec __attribute__((vector_size(BYTES)));                                   \
    constexpr int L = BYTES / int(sizeof(T));                                            \
    Vec acc[MR][NV];                                                                     \
    std::memset(acc, 0, sizeof acc);                                                     \
    for (std::int64_t k = 0; k < kc; ++k) {                                              \
      Vec bv[NV];                                                                        \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v)                               \
          std::memcpy(&bv[v], b + (k * NV + v) * L, sizeof(Vec));                        \
      const T* ak = a + k * MR;                                                          \
      _Pragma("GCC unroll 8") for (int i = 0; i < MR; ++i) {                             \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[i][v] += ak[i] * bv[v]; \
      }                                                                                  \
    }                                                                                    \
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; ++i) {                               \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) {                             \
        Vec cv;                                                                          \
        std::memcpy(&cv, c + i * ldc + v * L, sizeof cv);                                \
        cv += acc[i][v];                                                                 \
        std::memcpy(c + i * ldc + v * L, &cv, sizeof cv);                                \
      }                                                                                  \
    }                                                                                    \
  }

#if defined(__x86_64__) || defined(__i386__)
#define PB_TARGET_AVX512 __attribute__((target("avx512f")))
#define PB_TARGET_AVX2 __attribute__((target("avx2,fma")))
PB_BLOCKED_KERNEL(kernel_avx512_d, PB_TARGET_AVX512, double, 64, 8, 2)
PB_BLOCKED_KERNEL(kernel_avx512_f, PB_TARGET_AVX512, float, 64, 8, 2)
PB_BLOCKED_KERNEL(kernel_avx2_d, PB_TARGET_AVX2, double, 32, 6, 2)
PB_BLOCKED_KERNEL(kernel_avx2_f, PB_TARGET_AVX2, float, 32, 6, 2)
#undef PB_TARGET_AVX512
#undef PB_TARGET_AVX2
#endif
PB_BLOCKED_KERNEL(kernel_base_d, , double, 16, 4, 2)
PB_BLOCKED_KERNEL(kernel_base_f, , float, 16, 4, 2)
#undef PB_BLOCKED_KERNEL

// A kernel and the blocking around it, as constants so the packing loops
// unroll: the micro-tile MR x NR, A's MC x KC block (per thread, in L2), B's
// KC x NC block (shared, in L3). KC keeps a B panel (KC x NR) in L1 beside
// the A panel streaming through.
template <class T, void (*Fn)(std::int64_t, const T*, const T*, T*, std::int64_t), int MR_, int NR_, int KC_,
          int MC_, int NC_>
struct Blocking {
  static constexpr int MR = MR_, NR = NR_, KC = KC_, MC = MC_, NC = NC_;
  static void kernel(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t ldc) {
    Fn(kc, a, b, c, ldc);
  }
};

// 64-byte aligned scratch (packed panels), freed with std::free.
template <class T>
struct Aligned {
  explicit Aligned(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    p = static_cast<T*>(std::aligned_alloc(64, bytes ? bytes : 64));
    if (!p) throw std::bad_alloc();
  }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  T* p;
};

template <class T, class Bk>
void blocked_gemm(Op op, std::int64_t M, std::int64_t N, std::int64_t K, const T* A, const T* B, const T* Cin,
                  T* C, int threads) {
  constexpr int MR = Bk::MR, NR = Bk::NR, KC = Bk::KC, MC = Bk::MC, NC = Bk::NC;
  // Element (i, k) of A and (k, j) of B for the op (row-major operands).
  auto a_at = [&](std::int64_t i, std::int64_t k) { return op == Op::AtB ? A[k * M + i] : A[i * K + k]; };
  auto b_at = [&](std::int64_t k, std::int64_t j) { return op == Op::ABtC ? B[j * K + k] : B[k * N + j]; };
  // C starts as 0, or as the + C of A B^T + C; every block then accumulates.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) C[i * N + j] = op == Op::ABtC ? Cin[i * N + j] : T(0);
  if (K == 0) return;
  Aligned<T> bpack(std::size_t(KC) * std::size_t((std::min<std::int64_t>(N, NC) + NR - 1) / NR * NR));
  std::vector<std::unique_ptr<Aligned<T>>> apack(static_cast<std::size_t>(threads));
  for (auto& a : apack) a = std::make_unique<Aligned<T>>(std::size_t((MC + MR - 1) / MR * MR) * KC);
  for (std::int64_t jc = 0; jc < N; jc += NC) {
    const std::int64_t nc = std::min<std::int64_t>(NC, N - jc), panels = (nc + NR - 1) / NR;
    for (std::int64_t pc = 0; pc < K; pc += KC) {
      const std::int64_t kc = std::min<std::int64_t>(KC, K - pc);
#pragma omp parallel num_threads(threads)
      {
        // B's block into NR-wide panels (zeros past N), the panels split over threads.
#pragma omp for schedule(static)
        for (std::int64_t p = 0; p < panels; ++p) {
          T* dst = bpack.p + p * kc * NR;
          for (std::int64_t k = 0; k < kc; ++k)
            for (int j = 0; j < NR; ++j) {
              const std::int64_t col = jc + p * NR + j;
              dst[k * NR + j] = col < N ? b_at(pc + k, col) : T(0);
            }
        }  // implicit barrier: the packed block is complete
        T* ap = apack[std::size_t(omp_get_thread_num())]->p;
        alignas(64) T tile[MR * NR];
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t ic = 0; ic < M; ic += MC) {
          const std::int64_t mc = std::min<std::int64_t>(MC, M - ic), strips = (mc + MR - 1) / MR;
          for (std::int64_t s = 0; s < strips; ++s)  // A's block into MR-tall panels (zeros past M)
            for (std::int64_t k = 0; k < kc; ++k)
              for (int i = 0; i < MR; ++i) {
                const std::int64_t row = ic + s * MR + i;
                ap[(s * kc + k) * MR + i] = row < M ? a_at(row, pc + k) : T(0);
              }
          for (std::int64_t p = 0; p < panels; ++p) {
            const std::int64_t j0 = jc + p * NR, w = std::min<std::int64_t>(NR, N - j0);
            for (std::int64_t s = 0; s < strips; ++s) {
              const std::int64_t i0 = ic + s * MR, h = std::min<std::int64_t>(MR, M - i0);
              const T* a = ap + s * kc * MR;
              const T* b = bpack.p + p * kc * NR;
              if (h == MR && w == NR) {
                Bk::kernel(kc, a, b, C + i0 * N + j0, N);
              } else {  // an edge: through the scratch tile
                std::fill(tile, tile + MR * NR, T(0));
                Bk::kernel(kc, a, b, tile, NR);
                for (std::int64_t i = 0; i < h; ++i)
                  for (std::int64_t j = 0; j < w; ++j) C[(i0 + i) * N + j0 + j] += tile[i * NR + j];
              }
            }
          }
        }
      }
    }
  }
}

template <class T>
using GemmFn = void (*)(Op, std::int64_t, std::int64_t, std::int64_t, const T*, const T*, const T*, T*, int);

// The blocked GEMM of an instruction set; the baseline's where the build has
// no other (not x86).
template <class T>
GemmFn<T> gemm_for(Simd s);
template <>
GemmFn<double> gemm_for<double>(Simd s) {
  switch (s) {
#if defined(__x86_64__) || defined(__i386__)
    case Simd::Avx512: return blocked_gemm<double, Blocking<double, kernel_avx512_d, 8, 16, 256, 128, 3072>>;
    case Simd::Avx2: return blocked_gemm<double, Blocking<double, kernel_avx2_d, 6, 8, 256, 120, 3072>>;
#endif
    default: return blocked_gemm<double, Blocking<double, kernel_base_d, 4, 4, 256, 128, 3072>>;
  }
}
template <>
GemmFn<float> gemm_for<float>(Simd s) {
  switch (s) {
#if defined(__x86_64__) || defined(__i386__)
    case Simd::Avx512: return blocked_gemm<float, Blocking<float, kernel_avx512_f, 8, 32, 384, 128, 4096>>;
    case Simd::Avx2: return blocked_gemm<float, Blocking<float, kernel_avx2_f, 6, 16, 384, 120, 4096>>;
#endif
    default: return blocked_gemm<float, Blocking<float, kernel_base_f, 4, 8, 256, 128, 4096>>;
  }
}

template <class T>
class Blocked final : public CpuVariant<T> {
  using CpuVariant<T>::p_, CpuVariant<T>::in_, CpuVariant<T>::out_;

 public:
  Blocked(int threads, Simd simd) : threads_(threads), simd_(simd), gemm_(gemm_for<T>(simd)) {}
  Support supports(const Problem&) const override {
    if (threads_ < 1) return Support::no("threads must be >= 1");
    if (!host_supports(simd_)) return Support::no(std::string("this CPU has no ") + to_string(simd_));
    return Support::yes();
  }
  void run() override {
    gemm_(p_.op, p_.m, p_.n, p_.k, in_->a.data(), in_->b.data(), in_->c.data(), out_.data(), threads_);
  }
  bool computes_for_caller() const override { return true; }
  void compute(const Problem& p, const T* a, const T* b, const T* c, T* out) override {
    gemm_(p.op, p.m, p.n, p.k, a, b, c, out, threads_);
  }

 private:
  int threads_;
  Simd simd_;
  GemmFn<T> gemm_;
};

Simd g_blocked = Simd::Baseline;
bool g_blocked_set = false;

}  // namespace

const char* to_string(Simd s) {
  switch (s) {
    case Simd::Baseline: return "baseline";
    case Simd::Avx2: return "avx2";
    case Simd::Avx512: return "avx512";
  }
  return "?";
}

bool host_supports(Simd s) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();  // callable before main (the tests' static case lists ask)
#endif
  switch (s) {
    case Simd::Baseline: return true;
#if defined(__x86_64__) || defined(__i386__)
    case Simd::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Simd::Avx512: return __builtin_cpu_supports("avx512f");
#else
    default: return false;
#endif
  }
  return false;
}

Simd widest_simd() {
  for (Simd s : {Simd::Avx512, Simd::Avx2})
    if (host_supports(s)) return s;
  return Simd::Baseline;
}

Simd parse_host_simd(const std::string& flag, const std::string& v) {
  for (Simd s : {Simd::Baseline, Simd::Avx2, Simd::Avx512})
    if (v == to_string(s)) {
      if (!host_supports(s))
        throw UsageError(flag + ": this CPU has no " + v + " (its widest is " + to_string(widest_simd()) +
                         ")");
      return s;
    }
  throw UsageError(flag + ": unknown value '" + v + "' (one of baseline, avx2, avx512)");
}

Simd blocked_simd() { return g_blocked_set ? g_blocked : widest_simd(); }

void set_blocked_simd(Simd s) { g_blocked = s, g_blocked_set = true; }

template <class T>
std::unique_ptr<Variant<T>> make_cpu_blocked(int threads, Simd simd) {
  return std::make_unique<Blocked<T>>(threads, simd);
}
template std::unique_ptr<Variant<float>> make_cpu_blocked(int, Simd);
template std::unique_ptr<Variant<double>> make_cpu_blocked(int, Simd);

}  // namespace pb::gemm
