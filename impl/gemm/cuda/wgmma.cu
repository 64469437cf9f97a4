// CUDA.WGMMA (TF32 and BF16 in, float accumulate): the Hopper step. The
// earlier kernels have every warp copy, wait and multiply in turn on
// mma.sync-sized tiles; here the work is split by role and handed to the
// hardware units Hopper adds:
//  - a producer warpgroup (one thread of it) issues TMA bulk tensor copies:
//    one instruction moves a whole operand tile of 128-byte rows (128 or 256
//    rows of k; an MN-major operand: 64 columns by BK rows of k a copy) into
//    shared memory, 128-byte swizzled, and zero-fills what lies past the
//    matrix edges, so no thread computes an address or a predicate;
//  - the copies fill a 4-stage ring; "full" mbarriers count the bytes in
//    (the TMA completes them), "empty" ones count the consumers' releases, so
//    the producer runs up to 4 K tiles ahead;
//  - two consumer warpgroups each multiply a 64 x 256 slice of the 128 x 256
//    block tile with wgmma: one asynchronous instruction a 64 x 256 x 16
//    (BF16) or x 8 (TF32) product, both operands read by the tensor cores
//    straight from the swizzled tiles through matrix descriptors, 128 float
//    accumulators a thread;
//  - setmaxnreg moves registers from the producer (40) to the consumers (232).
//  - one K tile's wgmma group stays in flight while the next is issued;
//  - ABtC's accumulators start at C, loaded while the first operand tiles
//    are in flight, so the epilogue only stores;
//  - the grid is persistent, clusters of two blocks that share B by TMA
//    multicast, and a long run's last partial round is shared out by K
//    tiles (stream-K), as described at wgmma_kernel.
// wgmma reads BF16 operands K-major (contiguous along k) or MN-major (along i
// or j: A of AtB, B of AB and AtB), so BF16 reads all three ops in place; TF32
// it reads K-major only, so there an MN-major operand is first transposed into
// a K-major workspace by a tiled transpose. An operand whose rows are not a
// multiple of 16 bytes (TMA's stride rule) goes through that workspace too,
// in padded rows. Both passes are part of the timed run. Output tiles are
// walked in groups of 8 tile rows as in CUDA.DMMA.
// Built for sm_90a only (wgmma, setmaxnreg); other GPUs get "unsupported".
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/cuda/cp_async.cuh"
#include "core/cuda/mbarrier.cuh"
#include "gemm/cuda/device_variant.cuh"
#include "gemm/cuda/streamk.hpp"
#include "gemm/cuda/tensor_operands.cuh"
#include "gemm/cuda/transpose.cuh"

namespace pb::gemm {
namespace {

constexpr int BM = 128, BN = 256, STAGES = 4, GROUP_M = 8, CONSUMERS = 2;
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int ROW_BYTES = 128;  // one swizzled row of a tile: BK elements
constexpr int A_BYTES = BM * ROW_BYTES, B_BYTES = BN * ROW_BYTES, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr std::size_t kShared = std::size_t(STAGES) * STAGE_BYTES + 1024;  // + room to align to 1024
// The staged epilogue (CUDA.WGMMA.TmaStore): each consumer's 64 x 256 slice
// of a tile leaves through two 8 KB buffers of 64 rows x 32 floats, after
// the ring.
constexpr int OUT_COLS = 32, OUT_SLICE_BYTES = 64 * OUT_COLS * 4, OUT_BYTES = CONSUMERS * 2 * OUT_SLICE_BYTES;
constexpr std::size_t kSharedStaged = kShared + OUT_BYTES;

template <Precision P>
struct Fmt;
template <>
struct Fmt<Precision::BF16> {
  using E = __nv_bfloat16;
  static constexpr int BK = 64, KSTEP = 16;  // elements a tile row, k of one wgmma
};
template <>
struct Fmt<Precision::TF32> {
  using E = float;
  static constexpr int BK = 32, KSTEP = 8;
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PB_WGMMA_BUILT 1
#endif

using pb::cp_async::smem_addr;

#ifdef PB_WGMMA_BUILT
// An operand tile in 128-byte swizzled rows (swizzle mode 1), 8-row groups
// 1024 bytes apart (stride byte offset). K-major (rows of k): the leading
// byte offset is unused (1). MN-major (rows of 64 i or j, one per k): `lead`
// is the distance between the 64-wide column blocks.
__device__ __forceinline__ std::uint64_t descriptor(unsigned addr, unsigned lead = 16) {
  return std::uint64_t((addr & 0x3FFFF) >> 4) | (std::uint64_t(lead >> 4) << 16) |
         (std::uint64_t(1024 >> 4) << 32) | (std::uint64_t(1) << 62);
}

#define PB_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define PB_F16(i) PB_F4(i), PB_F4(i + 4), PB_F4(i + 8), PB_F4(i + 12)
#define PB_F128 PB_F16(0), PB_F16(16), PB_F16(32), PB_F16(48), PB_F16(64), PB_F16(80), PB_F16(96), PB_F16(112)
#define PB_D128                                                                                  \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "             \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// TA, TB: the operand is MN-major (BF16 only; TF32 reads K-major alone).
template <Precision P, int TA, int TB>
struct Mma;
template <int TA, int TB>
struct Mma<Precision::BF16, TA, TB> {
  static __device__ __forceinline__ void run(float (&d)[128], std::uint64_t da, std::uint64_t db) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{" PB_D128 "}, %128, %129, p, 1, 1, %131, %132;\n}\n"
        : PB_F128
        : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB));
  }
};
template <>
struct Mma<Precision::TF32, 0, 0> {
  static __device__ __forceinline__ void run(float (&d)[128], std::uint64_t da, std::uint64_t db) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
        "{" PB_D128 "}, %128, %129, p, 1, 1;\n}\n"
        : PB_F128
        : "l"(da), "l"(db), "r"(1));
  }
};
#undef PB_F4
#undef PB_F16
#undef PB_F128
#undef PB_D128

// Rows [row, row + box) by elements [k, k + BK) of the map's matrix into dst.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, std::uint64_t* bar, int k,
                                         int row) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, "
      "%4}], "
      "[%2];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(k), "r"(row)
      : "memory");
}

// Cluster helpers (sm_90): the rank of this block in its cluster, a barrier
// of all threads of the cluster, and an arrival on the mbarrier at bar's
// offset in block `cta` of the cluster (mbarrier::wait sees it).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}
__device__ __forceinline__ void arrive_in(std::uint64_t* bar, unsigned cta) {
  asm volatile(
      "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}
// As tma_load, written at the same offset into the shared memory of every
// block of the cluster in `ctas`, each completing bytes on its own bar.
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                                   int k, int row, unsigned short ctas) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(k), "r"(row), "h"(ctas)
      : "memory");
}
#endif

// Accumulator i of a consumer thread: row row_base + 8 ((i / 2) % 2), column
// n0 + 8 (i / 4) + 2 (lane % 4) + i % 2 of the output, where row_base = m0 +
// 64 c + 16 warp + lane / 4 (c: the consumer's 64 x 256 slice of the 128 x
// 256 tile). ABtC starts them at C: the loads of C then overlap the wait for
// the tile's first operands instead of following its last product. The
// loads are predicated instructions, not branches: accumulators defined
// under a branch make ptxas serialize the wgmma chain (its warning C7515).
// use_c false: zeros.
template <bool addC>
__device__ __forceinline__ void start_accumulators(float (&d)[128], const float* __restrict__ C, int M, int N,
                                                   int row_base, int n0, int lane, bool vec2, bool use_c) {
#pragma unroll
  for (int i = 0; i < 128; i += 2) {
    const int row = row_base + 8 * ((i / 2) % 2), col = n0 + 8 * (i / 4) + 2 * (lane % 4);
    d[i] = 0.f, d[i + 1] = 0.f;
    if (!addC) continue;
    const float* at = C + std::int64_t(row) * N + col;  // read only under its predicate
    const bool in = use_c && row < M;
    const unsigned v2 = in && vec2 && col + 1 < N, s0 = in && !v2 && col < N, s1 = in && !v2 && col + 1 < N;
    asm("{\n .reg .pred p, q, r;\n setp.ne.u32 p, %2, 0;\n setp.ne.u32 q, %3, 0;\n setp.ne.u32 r, %4, 0;\n"
        " @p ld.global.nc.v2.f32 {%0, %1}, [%5];\n @q ld.global.nc.f32 %0, [%5];\n"
        " @r ld.global.nc.f32 %1, [%5 + 4];\n}\n"
        : "+f"(d[i]), "+f"(d[i + 1])
        : "r"(v2), "r"(s0), "r"(s1), "l"(at));
  }
}
__device__ __forceinline__ void store_accumulators(const float (&d)[128], float* __restrict__ D, int M, int N,
                                                   int row_base, int n0, int lane, bool vec2) {
#pragma unroll
  for (int i = 0; i < 128; i += 2) {
    const int row = row_base + 8 * ((i / 2) % 2), col = n0 + 8 * (i / 4) + 2 * (lane % 4);
    if (row >= M) continue;
    const std::int64_t at = std::int64_t(row) * N + col;
    if (vec2 && col + 1 < N) {
      *reinterpret_cast<float2*>(D + at) = make_float2(d[i], d[i + 1]);
    } else {
      if (col < N) D[at] = d[i];
      if (col + 1 < N) D[at + 1] = d[i + 1];
    }
  }
}

#ifdef PB_WGMMA_BUILT
// Consumer c's 128 threads only.
__device__ __forceinline__ void warpgroup_sync(int c) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
}

// The staged epilogue: consumer c's 64 x 256 slice of the tile (rows m0c..,
// columns n0..) leaves as 8 pieces of 64 x 32 floats, each written into one
// of the consumer's two 8 KB buffers at `out` and stored by one TMA copy,
// which clips at the matrix's edges, so the warpgroup goes on to the next
// tile while the copies drain. The buffers hold the map's 128-byte swizzle
// (16-byte chunk q of row r at q ^ (r % 8)), which spreads the 8 rows a
// warp's 8-byte stores touch over 8 chunks of the banks, where unswizzled
// rows would all meet in the same 4 banks. A buffer is written again once
// the copy issued from it two pieces before has read it; `pieces` counts
// this consumer's pieces across tiles. Thread 0 of the warpgroup issues and
// waits for the copies (bulk groups are per thread).
__device__ __forceinline__ void store_staged(const float (&d)[128], unsigned char* out, const CUtensorMap* td,
                                             int m0c, int n0, int c, int tid, int& pieces) {
  const int warp = tid / 32, lane = tid % 32;
#pragma unroll
  for (int s = 0; s < BN / OUT_COLS; ++s, ++pieces) {
    unsigned char* buf = out + (pieces % 2) * OUT_SLICE_BYTES;
    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
    warpgroup_sync(c);
#pragma unroll
    for (int jj = 0; jj < OUT_COLS / 8; ++jj) {
      const int j = s * (OUT_COLS / 8) + jj;  // the 8-column group of accumulators 4 j .. 4 j + 3
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // rows r and r + 8
        const int r = warp * 16 + lane / 4 + 8 * h, col = jj * 8 + 2 * (lane % 4);
        const int chunk = (col / 4) ^ (r % 8);
        *reinterpret_cast<float2*>(buf + r * 128 + chunk * 16 + (col % 4) * 4) =
            make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      }
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the writes, to the copy's proxy
    warpgroup_sync(c);
    if (tid == 0) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                       reinterpret_cast<std::uint64_t>(td)),
                   "r"(n0 + s * OUT_COLS), "r"(m0c), "r"(smem_addr(buf))
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    }
  }
}
#endif

// D = A B^T (+ C): A M x K and B N x K behind the tensor maps, K-major, or
// MN-major (a_mn, b_mn: stored k by k, BF16 only).
//
// Persistent: one cluster of two blocks on every pair of SMs for the whole
// product. A work unit is output tiles m and m + 1 of one 256-wide column,
// one a block; each block loads half of the unit's B tile and multicasts it
// to both, so B crosses from L2 once per pair. The producer runs on into
// the next unit while the consumers store the last one.
//
// Stream-K tail (sk.dp_units < sk.units): the last, partial round of units
// is shared out by K tiles; gemm/cuda/streamk.hpp says who takes which
// pieces, in which order, and why a wait never depends on a cluster that
// launches later. A split unit's other clusters write their partial sums
// to a workspace and count them in on the unit's flag; its finisher waits
// for the count, adds them in a fixed order (the same sum in every run),
// resets the flag and stores.
constexpr int PAIR = 2;
// Stream-K only from this many full rounds: below it, sharing the tail cost
// more than the idle tail (docs/perf/gemm-cuda.md). Tests lower it to reach
// the stream-K path on small shapes.
constexpr int kStreamKRounds = 8;

// The schedule (gemm/cuda/streamk.hpp) and the stream-K workspace:
// partials holds (units - dp_units) x (parts - 1) x PAIR x BM x BN floats,
// flags (units - dp_units) x PAIR counters, zero between launches.
struct StreamK : streamk::Schedule {
  float* partials = nullptr;
  int* flags = nullptr;
};

#ifdef PB_WGMMA_BUILT
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }
#endif

//
// staged: D leaves through shared memory and TMA (store_staged, the map td)
// instead of from registers.
template <Precision P, bool addC, bool a_mn, bool b_mn, bool staged>
__global__ void __cluster_dims__(PAIR, 1, 1) __launch_bounds__(THREADS, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                 const __grid_constant__ CUtensorMap td, const float* __restrict__ C, float* __restrict__ D,
                 int M, int N, int K, bool vec2, StreamK sk) {
#ifdef PB_WGMMA_BUILT
  using F = Fmt<P>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  unsigned char* smem =
      smem_raw + ((1024 - smem_addr(smem_raw) % 1024) % 1024);  // the same offset in every block
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const unsigned rank = cluster_rank();
  const int tiles_m = (M + BM - 1) / BM, ktiles = (K + F::BK - 1) / F::BK;
  const int tiles_n = (N + BN - 1) / BN, pairs_m = (tiles_m + PAIR - 1) / PAIR;
  const int cl = blockIdx.x / PAIR, W = gridDim.x / PAIR;
  constexpr int GROUP_PAIRS = GROUP_M / PAIR;
  // Unit u: output tile rows 2 pm and 2 pm + 1 of column pn, walked in
  // groups of GROUP_PAIRS pair rows; this block takes row 2 pm + rank.
  auto origin = [&](int u, int& m0, int& n0) {
    const int per_group = GROUP_PAIRS * tiles_n, first = (u / per_group) * GROUP_PAIRS;
    const int rows = min(pairs_m - first, GROUP_PAIRS);
    m0 = ((first + (u % per_group) % rows) * PAIR + int(rank)) * BM, n0 = ((u % per_group) / rows) * BN;
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s)
      mbarrier::init(&full[s], 1), mbarrier::init(&empty[s], PAIR * CONSUMERS * 4);
    mbarrier::fence_init();
  }
  cluster_sync();  // both blocks' barriers exist before either copies or arrives

  if (wg == 0) {  // producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      int it = 0;
      streamk::for_each_piece(sk, ktiles, cl, W, [&](int u, int k0, int k1) {
        int m0, n0;
        origin(u, m0, n0);
        for (int kt = k0; kt < k1; ++kt, ++it) {
          const int s = it % STAGES;
          if (it >= STAGES) mbarrier::wait(&empty[s], (it / STAGES - 1) & 1);  // both blocks released it
          mbarrier::expect_bytes(&full[s], STAGE_BYTES);
          unsigned char* sa = smem + s * STAGE_BYTES;
          if (a_mn)
            for (int q = 0; q < BM / 64; ++q)
              tma_load(sa + q * F::BK * ROW_BYTES, &ta, &full[s], m0 + 64 * q, kt * F::BK);
          else
            tma_load(sa, &ta, &full[s], kt * F::BK, m0);
          // This block's half of B, into both blocks.
          if (b_mn)
            for (int q = int(rank) * BN / 64 / PAIR; q < (int(rank) + 1) * BN / 64 / PAIR; ++q)
              tma_load_multicast(sa + A_BYTES + q * F::BK * ROW_BYTES, &tb, &full[s], n0 + 64 * q, kt * F::BK,
                                 (1u << PAIR) - 1);
          else
            tma_load_multicast(sa + A_BYTES + rank * (BN / PAIR) * ROW_BYTES, &tb, &full[s], kt * F::BK,
                               n0 + int(rank) * (BN / PAIR), (1u << PAIR) - 1);
        }
      });
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int c = wg - 1, warp = tid / 32, lane = tid % 32, ct = threadIdx.x - 128;  // ct: 0..255
    // A stage is released to both blocks once the group that read it here
    // has completed.
    auto release = [&](int at) {
      if (lane == 0)
        for (unsigned r = 0; r < PAIR; ++r) arrive_in(&empty[at % STAGES], r);
    };
    const long long T = (long long)(sk.units - sk.dp_units) * ktiles;  // stream-K K tiles
    int it = 0, pieces = 0;
    streamk::for_each_piece(sk, ktiles, cl, W, [&](int u, int k0, int k1) {
      int m0, n0;
      origin(u, m0, n0);
      const int row_base = m0 + c * 64 + warp * 16 + lane / 4;
      float d[128];
      // C once, in the piece with the first K tile.
      start_accumulators<addC>(d, C, M, N, row_base, n0, lane, vec2, k0 == 0);
      for (int kt = k0; kt < k1; ++kt, ++it) {
        const int s = it % STAGES;
        mbarrier::wait(&full[s], (it / STAGES) & 1);
        const unsigned a = smem_addr(smem + s * STAGE_BYTES), b = a + A_BYTES;
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < F::BK / F::KSTEP; ++kk) {
          const unsigned kbytes = kk * F::KSTEP * unsigned(sizeof(typename F::E)),
                         krows = kk * F::KSTEP * ROW_BYTES;
          const std::uint64_t da = a_mn ? descriptor(a + c * F::BK * ROW_BYTES + krows, F::BK * ROW_BYTES)
                                        : descriptor(a + c * 64 * ROW_BYTES + kbytes);
          const std::uint64_t db = b_mn ? descriptor(b + krows, F::BK * ROW_BYTES) : descriptor(b + kbytes);
          Mma<P, a_mn, b_mn>::run(d, da, db);
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        if (kt > k0) release(it - 1);
      }
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      if (k1 > k0) release(it - 1);
#pragma unroll
      for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");  // not read before the wait

      if (k1 - k0 < ktiles) {  // a piece of a stream-K unit
        const int us = u - sk.dp_units;
        const streamk::Split split = streamk::split_of(T, sk.shares, us, ktiles);
        const int lowest = split.lowest, finisher = split.finisher;
        int* flag = sk.flags + us * PAIR + rank;
        // Partial p (0..parts-2, from cluster lowest + p) of this block:
        // float4 j of consumer thread ct at (j * 256 + ct), so a warp's
        // stores are 512 contiguous bytes.
        auto slot = [&](int part) {
          return reinterpret_cast<float4*>(sk.partials) +
                 ((std::size_t(us) * (sk.parts - 1) + part) * PAIR + rank) * (BM * BN / 4);
        };
        if (cl != finisher) {
          float4* out = slot(cl - lowest);
#pragma unroll
          for (int j = 0; j < 32; ++j)
            __stcg(out + j * 256 + ct, make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]));
          __threadfence();
          consumers_sync();
          if (ct == 0) atomicAdd(flag, 1);
          return;
        }
        if (ct == 0) {
          while (atomicAdd(flag, 0) < finisher - lowest) __nanosleep(256);
          __threadfence();
        }
        consumers_sync();
        for (int part = 0; part < finisher - lowest; ++part) {
          const float4* in = slot(part);
#pragma unroll
          for (int j = 0; j < 32; ++j) {
            const float4 v = __ldcg(in + j * 256 + ct);
            d[4 * j] += v.x, d[4 * j + 1] += v.y, d[4 * j + 2] += v.z, d[4 * j + 3] += v.w;
          }
        }
        if (ct == 0) *flag = 0;  // ready for the next launch
      }
      if (staged)
        store_staged(d, smem + STAGES * STAGE_BYTES + c * 2 * OUT_SLICE_BYTES, &td, m0 + c * 64, n0, c, tid,
                     pieces);
      else
        store_accumulators(d, D, M, N, row_base, n0, lane, vec2);
    });
    // The copies have written D before the block's shared memory goes.
    if (staged && tid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  }
  __syncwarp();
  cluster_sync();  // neither block leaves while the other may still write into or arrive on it
#else
  __trap();  // not built for this GPU; supports() refuses before a launch
#endif
}

// out[r][k] (row stride ld_out) from in[r][k] (row stride ld_in): rows
// padded to TMA's 16-byte rule.
template <class E>
__global__ void pad_rows_kernel(const E* __restrict__ in, E* __restrict__ out, std::int64_t rows,
                                std::int64_t K, std::int64_t ld_in, std::int64_t ld_out) {
  const std::int64_t r0 = std::int64_t(blockIdx.x) * 32;
  for (std::int64_t k0 = std::int64_t(blockIdx.y) * 32; k0 < K; k0 += std::int64_t(gridDim.y) * 32)
    for (int i = threadIdx.y; i < 32; i += 8) {
      const std::int64_t r = r0 + i, k = k0 + threadIdx.x;
      if (r < rows && k < K) out[r * ld_out + k] = in[r * ld_in + k];
    }
}

// The map of a matrix of `outer` rows of `inner` elements (row stride ld),
// copied in boxes of box_rows rows by 128 bytes, 128-byte swizzled.
CUtensorMap tensor_map(const void* base, bool bf16, std::int64_t inner, std::int64_t outer, std::int64_t ld,
                       int box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    PB_CUDA(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn)
      throw std::runtime_error("the CUDA driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12 or newer)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  const int esize = bf16 ? 2 : 4;
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(outer)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * esize};
  const cuuint32_t box[2] = {cuuint32_t(ROW_BYTES / esize), cuuint32_t(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r = encode(&map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                            2, const_cast<void*>(base), dims, strides, box, unit,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
  return map;
}

class CudaWgmma final : public TensorVariant {
 public:
  // staged: CUDA.WGMMA.TmaStore's epilogue, where D's rows suit TMA (a
  // multiple of 16 bytes); otherwise the register stores.
  CudaWgmma(int streamk_rounds, bool staged) : streamk_rounds_(streamk_rounds), staged_(staged) {}
  Support supports(const Problem& p) const override {
    auto s = TensorVariant::supports(p);
    if (!s.ok()) return s;
    if (p.m > 2147483647 - 2 * BN || p.n > 2147483647 - 2 * BN || p.k > 2147483647 - 2 * BN)
      return Support::no("dimension beyond TMA's 32-bit coordinates");
    if (((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN) > 2147483647)
      return Support::no("more output tiles than the kernel's 32-bit unit counts hold");
    const int sm = device_sm_or_zero();
    if (sm == 0) return Support::no("no usable CUDA device");
    if (sm != 90)
      return Support::no("needs sm_90a (Hopper: wgmma, TMA, setmaxnreg); this GPU is sm_" +
                         std::to_string(sm));
    return Support::yes();
  }

 protected:
  void prepare_device() override {
    const auto& p = p_;
    const int esize = bf16() ? 2 : 4, align = 16 / esize;  // TMA: rows a multiple of 16 bytes
    const std::int64_t kp = (p.k + align - 1) / align * align;
    kp_ = kp;
    // A is stored K-major except in AtB, B only in ABtC. BF16 reads the
    // others as they are (MN-major) where their rows suit TMA; everything
    // else goes through a K-major workspace.
    const bool a_kmajor = p.op != Op::AtB, b_kmajor = p.op == Op::ABtC;
    a_mn_ = !a_kmajor && bf16() && p.m % align == 0;
    b_mn_ = !b_kmajor && bf16() && p.n % align == 0;
    pack_a_ = a_kmajor ? kp != p.k : !a_mn_;
    pack_b_ = b_kmajor ? kp != p.k : !b_mn_;
    const void* a_src = a();
    const void* b_src = b();
    if (pack_a_) wa_ = workspace(p.m * kp), a_src = wa_.get();
    if (pack_b_) wb_ = workspace(p.n * kp), b_src = wb_.get();
    const int bk = ROW_BYTES / esize;
    ta_ = a_mn_ ? tensor_map(a_src, bf16(), p.m, p.k, p.m, bk)
                : tensor_map(a_src, bf16(), p.k, p.m, pack_a_ ? kp : p.k, BM);
    tb_ = b_mn_ ? tensor_map(b_src, bf16(), p.n, p.k, p.n, bk)
                : tensor_map(b_src, bf16(), p.k, p.n, pack_b_ ? kp : p.k, BN / PAIR);
    staged_now_ = staged_ && p.n % 4 == 0;
    if (staged_now_) td_ = tensor_map(d_.get(), false, p.n, p.m, p.n, 64);
    kernel_ = pick();
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared())));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(PAIR * 64);  // any multiple of the cluster: the answer does not depend on it
    cfg.blockDim = dim3(THREADS);
    cfg.dynamicSmemBytes = shared();
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = PAIR, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
    cfg.attrs = &cluster, cfg.numAttrs = 1;
    int resident = 0;  // clusters of two blocks the GPU holds at once
    PB_CUDA(cudaOccupancyMaxActiveClusters(&resident, reinterpret_cast<const void*>(kernel_), &cfg));
    if (resident < 1)
      throw std::runtime_error("no cluster of two " + std::to_string(shared() / 1024) +
                               " KiB blocks fits on this GPU");
    const std::int64_t tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN;
    const std::int64_t units = (tiles_m + PAIR - 1) / PAIR * tiles_n;
    const std::int64_t ktiles = (p.k + bk - 1) / bk;
    sk_ = StreamK{};  // nothing of an earlier problem's workspace stays
    partials_ = DeviceBuffer<float>(), flags_ = DeviceBuffer<int>();
    static_cast<streamk::Schedule&>(sk_) = streamk::plan(units, resident, ktiles, streamk_rounds_);
    grid_ = PAIR * sk_.clusters;
    if (sk_.dp_units == sk_.units) return;
    const std::int64_t sk_units = units - sk_.dp_units;
    if (sk_.parts > 1)
      partials_ = DeviceBuffer<float>(std::size_t(sk_units) * (sk_.parts - 1) * PAIR * BM * BN);
    flags_ = DeviceBuffer<int>(std::size_t(sk_units) * PAIR);
    PB_CUDA(cudaMemsetAsync(flags_.get(), 0, flags_.bytes(), s()));
    sk_.partials = partials_.get(), sk_.flags = flags_.get();
  }
  void run() override {
    const auto& p = p_;
    if (pack_a_) pack(a(), wa_.get(), p.m, p.op == Op::AtB, p.op == Op::AtB ? p.m : p.k);
    if (pack_b_) pack(b(), wb_.get(), p.n, p.op != Op::ABtC, p.op != Op::ABtC ? p.n : p.k);
    const bool vec2 = p.n % 2 == 0;  // float2 stores and C loads (cudaMalloc'd: aligned)
    kernel_<<<grid_, THREADS, shared(), s()>>>(ta_, tb_, td_, c_.get(), d_.get(), int(p.m), int(p.n),
                                               int(p.k), vec2, sk_);
    PB_CUDA_LAUNCHED();
  }

 private:
  using Kernel = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, const float*, float*, int,
                          int, int, bool, StreamK);
  std::size_t shared() const { return staged_now_ ? kSharedStaged : kShared; }
  Kernel pick() const { return staged_now_ ? pick<true>() : pick<false>(); }
  template <bool S>
  Kernel pick() const {
    const bool add_c = p_.op == Op::ABtC;
    if (!bf16())
      return add_c ? wgmma_kernel<Precision::TF32, true, false, false, S>
                   : wgmma_kernel<Precision::TF32, false, false, false, S>;
    if (add_c) return wgmma_kernel<Precision::BF16, true, false, false, S>;
    if (a_mn_)
      return b_mn_ ? wgmma_kernel<Precision::BF16, false, true, true, S>
                   : wgmma_kernel<Precision::BF16, false, true, false, S>;
    return b_mn_ ? wgmma_kernel<Precision::BF16, false, false, true, S>
                 : wgmma_kernel<Precision::BF16, false, false, false, S>;
  }

 private:
  DeviceBuffer<float> workspace(std::int64_t elems) {
    // float units: room for elems of either format
    return DeviceBuffer<float>(std::size_t(bf16() ? (elems + 1) / 2 : elems));
  }
  // The K-major copy of an operand with `rows` rows into out (row stride
  // kp_): transposed from in[k][r] (row stride ld_in), or rows padded.
  void pack(const void* in, void* out, std::int64_t rows, bool transposed, std::int64_t ld_in) {
    auto go = [&](auto tag) {
      using E = decltype(tag);
      auto* i = static_cast<const E*>(in);
      auto* o = static_cast<E*>(out);
      if (transposed) {
        transpose(i, o, p_.k, rows, ld_in, kp_, s());
      } else {
        const dim3 block(32, 8);
        const dim3 grid(unsigned((rows + 31) / 32),
                        unsigned(std::min<std::int64_t>((p_.k + 31) / 32, 65535)));
        pad_rows_kernel<E><<<grid, block, 0, s()>>>(i, o, rows, p_.k, ld_in, kp_);
        PB_CUDA_LAUNCHED();
      }
    };
    if (bf16())
      go(__nv_bfloat16{});
    else
      go(float{});
  }
  bool pack_a_ = false, pack_b_ = false, a_mn_ = false, b_mn_ = false;
  int streamk_rounds_;
  bool staged_, staged_now_ = false;
  int grid_ = 0;
  StreamK sk_{};
  DeviceBuffer<float> partials_;
  DeviceBuffer<int> flags_;
  Kernel kernel_ = nullptr;
  std::int64_t kp_ = 0;
  DeviceBuffer<float> wa_, wb_;
  CUtensorMap ta_{}, tb_{}, td_{};  // td_: D's map, staged only
};
}  // namespace

std::unique_ptr<Variant<float>> make_cuda_wgmma(int streamk_rounds, bool staged) {
  return std::make_unique<CudaWgmma>(streamk_rounds < 0 ? kStreamKRounds : streamk_rounds, staged);
}

}  // namespace pb::gemm
