#pragma once
// Asynchronous global-to-shared copies (cp.async, sm_80 and newer) and the
// shared-memory address they take: the pipelined GEMM kernels, the Hopper
// GEMM and k-means' tensor-core kernel share them.
#include "core/cuda/check.cuh"

namespace pb::cp_async {

__device__ __forceinline__ unsigned smem_addr(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

// dst <- BYTES (4, 8 or 16) at src, zero-filled when !ok (nothing is read;
// src must still be a valid address). 16-byte copies bypass L1 (.cg).
template <int BYTES>
__device__ __forceinline__ void copy(void* dst, const void* src, bool ok) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(ok ? 16 : 0));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "n"(BYTES), "r"(ok ? BYTES : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_groups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace pb::cp_async
