#pragma once
// Shared-memory mbarriers and the bulk copies that complete on them (sm_90):
// the Hopper GEMM's TMA pipeline and k-means' CUDA.DMMA share them. A phase
// of a barrier completes when its expected arrivals have arrived and the
// bytes announced by expect_bytes have landed; waiters name the phase by
// its parity. Built for an older GPU the bodies trap (as gemm/cuda/
// dmma_ops.cuh's MMAs do): their callers refuse such GPUs in supports().
#include <cstdint>

#include "core/cuda/cp_async.cuh"

namespace pb::mbarrier {

using pb::cp_async::smem_addr;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define PB_MBAR(...) __trap()
#else
#define PB_MBAR(...) __VA_ARGS__
#endif

__device__ __forceinline__ void init(std::uint64_t* bar, unsigned count) {
  PB_MBAR(asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count)
                       : "memory"));
}
// After a block's init()s, before another thread or a copy uses them.
__device__ __forceinline__ void fence_init() {
  PB_MBAR(asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"));
}
// One arrival that also announces `bytes` still to land in this phase.
__device__ __forceinline__ void expect_bytes(std::uint64_t* bar, unsigned bytes) {
  PB_MBAR(asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
                       "r"(bytes)
                       : "memory"));
}
__device__ __forceinline__ void arrive(std::uint64_t* bar) {
  PB_MBAR(asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory"));
}
// Until the phase of this parity has completed.
__device__ __forceinline__ void wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    PB_MBAR(asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, "
        "p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory"));
}
// dst (shared) <- `bytes` at src (global), counted against bar's phase;
// both addresses 16-byte aligned, bytes a multiple of 16.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
  PB_MBAR(asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory"));
}

#undef PB_MBAR

}  // namespace pb::mbarrier
