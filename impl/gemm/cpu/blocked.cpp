// OMP.Blocked: the cache-blocked GEMM of the BLIS design, written here.
// Relative to OMP (threads over output rows, an i-k-j loop streaming all of B
// through the cache for every row), it blocks for every cache level and
// computes from registers:
//  - B's KC x NC block is packed once into NR-wide column panels (k-major:
//    a panel row is two vectors), shared by all threads, sized for L3;
//  - each thread packs an MC x KC block of A into MR-tall row panels (sized
//    for its L2) and sweeps it against every B panel;
//  - the micro-kernel keeps an MR x NR tile of C in vector registers
//    (MR x 2 vectors: 16 of the 32 AVX-512 registers) over the KC products:
//    per k one vector pair of B and MR broadcasts of A, 2 MR fused
//    multiply-adds, no stores.
// Packing also absorbs the three ops: A^T B packs A by columns and A B^T
// packs B by rows, so every op runs the same kernel on the same layout (OMP's
// transposed operands stride through memory instead). Edges are packed with
// zeros and their tiles written through a scratch tile.
//
// The micro-kernel is compiled for AVX-512, AVX2 and the baseline ISA
// (target_clones: the loader picks the host's best); the vectors are GCC
// vector types of 64 bytes: one AVX-512 register, two AVX2 halves, or four
// SSE quarters in the baseline clone.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "gemm/cpu/cpu_variant.hpp"

namespace pb::gemm {
namespace {

constexpr int MR = 8;  // rows of a micro-tile

// Per precision: a 64-byte vector of T, the micro-tile's width (two vectors)
// and the cache blocks (A's MC x KC block in L2, B's KC x NC block in L3).
template <class T>
struct Blocking;
template <>
struct Blocking<double> {
  typedef double Vec __attribute__((vector_size(64)));
  static constexpr int kLanes = 8, NR = 16, KC = 256, MC = 128, NC = 3072;
};
template <>
struct Blocking<float> {
  typedef float Vec __attribute__((vector_size(64)));
  static constexpr int kLanes = 16, NR = 32, KC = 384, MC = 128, NC = 4096;
};

// C tile (MR x NR at c, row stride ldc) += A panel (MR x kc, k-major) * B
// panel (kc x NR, k-major). Non-template, one per precision: target_clones
// needs plain functions.
#define PB_BLOCKED_KERNEL(NAME, T)                                        \
  __attribute__((target_clones("avx512f", "avx2", "default"))) void NAME( \
      std::int64_t kc, const T* a, const T* b, T* c, std::int64_t ldc) {  \
    using Vec = Blocking<T>::Vec;                                         \
    constexpr int L = Blocking<T>::kLanes;                                \
    Vec acc[MR][2];                                                       \
    std::memset(acc, 0, sizeof acc);                                      \
    for (std::int64_t k = 0; k < kc; ++k) {                               \
      Vec b0, b1;                                                         \
      std::memcpy(&b0, b + k * 2 * L, sizeof b0);                         \
      std::memcpy(&b1, b + k * 2 * L + L, sizeof b1);                     \
      const T* ak = a + k * MR;                                           \
      _Pragma("GCC unroll 8") for (int i = 0; i < MR; ++i) {              \
        acc[i][0] += ak[i] * b0;                                          \
        acc[i][1] += ak[i] * b1;                                          \
      }                                                                   \
    }                                                                     \
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; ++i) {                \
      Vec c0, c1;                                                         \
      std::memcpy(&c0, c + i * ldc, sizeof c0);                           \
      std::memcpy(&c1, c + i * ldc + L, sizeof c1);                       \
      c0 += acc[i][0];                                                    \
      c1 += acc[i][1];                                                    \
      std::memcpy(c + i * ldc, &c0, sizeof c0);                           \
      std::memcpy(c + i * ldc + L, &c1, sizeof c1);                       \
    }                                                                     \
  }
PB_BLOCKED_KERNEL(micro_kernel_d, double)
PB_BLOCKED_KERNEL(micro_kernel_f, float)
#undef PB_BLOCKED_KERNEL

inline void micro_kernel(std::int64_t kc, const double* a, const double* b, double* c, std::int64_t ldc) {
  micro_kernel_d(kc, a, b, c, ldc);
}
inline void micro_kernel(std::int64_t kc, const float* a, const float* b, float* c, std::int64_t ldc) {
  micro_kernel_f(kc, a, b, c, ldc);
}

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

template <class T>
void blocked_gemm(Op op, std::int64_t M, std::int64_t N, std::int64_t K, const T* A, const T* B, const T* Cin,
                  T* C, int threads) {
  using Bk = Blocking<T>;
  constexpr int NR = Bk::NR, KC = Bk::KC, MC = Bk::MC, NC = Bk::NC;
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
  for (auto& a : apack) a = std::make_unique<Aligned<T>>(std::size_t(MC) * KC);
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
                micro_kernel(kc, a, b, C + i0 * N + j0, N);
              } else {  // an edge: through the scratch tile
                std::fill(tile, tile + MR * NR, T(0));
                micro_kernel(kc, a, b, tile, NR);
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
class Blocked final : public CpuVariant<T> {
  using CpuVariant<T>::p_, CpuVariant<T>::in_, CpuVariant<T>::out_;

 public:
  explicit Blocked(int threads) : threads_(threads) {}
  Support supports(const Problem&) const override {
    if (threads_ < 1) return Support::no("threads must be >= 1");
    return Support::yes();
  }
  void run() override {
    blocked_gemm(p_.op, p_.m, p_.n, p_.k, in_->a.data(), in_->b.data(), in_->c.data(), out_.data(), threads_);
  }
  bool backend() const override { return true; }
  void compute(const Problem& p, const T* a, const T* b, const T* c, T* out) override {
    blocked_gemm(p.op, p.m, p.n, p.k, a, b, c, out, threads_);
  }

 private:
  int threads_;
};

}  // namespace

template <class T>
std::unique_ptr<Variant<T>> make_cpu_blocked(int threads) {
  return std::make_unique<Blocked<T>>(threads);
}
template std::unique_ptr<Variant<float>> make_cpu_blocked(int);
template std::unique_ptr<Variant<double>> make_cpu_blocked(int);

}  // namespace pb::gemm
