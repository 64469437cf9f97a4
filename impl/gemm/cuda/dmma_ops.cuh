#pragma once
// The FP64 tensor-core multiply (mma.sync f64 on m16n8 tiles): CUDA.DMMA's
// GEMM and k-means' CUDA.DMMA distance kernel share it.
#include "core/cuda/check.cuh"

namespace pb::cuda_f64 {

// D (16 x 8) += A (16 x KW) B (KW x 8) in f64, KW = 4, 8 or 16: the m16n8
// shapes sm_90 adds (built for sm_90 and newer; below, a trap, and
// supports() refuses). Thread (g, t) = (lane / 4, lane % 4) holds A(g, t + 4 i)
// in a[2 i] and A(g + 8, t + 4 i) in a[2 i + 1], B(t + 4 i, g) in b[i], and
// D(g, 2 t + {0, 1}) in d[0, 1], D(g + 8, 2 t + {0, 1}) in d[2, 3].
template <int KW>
__device__ __forceinline__ void dmma(double (&d)[4], const double (&a)[KW / 2], const double (&b)[KW / 4]);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define PB_DMMA_TRAP 1
#endif
template <>
__device__ __forceinline__ void dmma<4>(double (&d)[4], const double (&a)[2], const double (&b)[1]) {
#ifdef PB_DMMA_TRAP
  __trap();
#else
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#endif
}
template <>
__device__ __forceinline__ void dmma<8>(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#ifdef PB_DMMA_TRAP
  __trap();
#else
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#endif
}
template <>
__device__ __forceinline__ void dmma<16>(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
#ifdef PB_DMMA_TRAP
  __trap();
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, "
      "%11}, "
      "{%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
        "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
}

}  // namespace pb::cuda_f64
