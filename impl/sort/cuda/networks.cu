// CUDA.Bitonic and CUDA.OddEvenMerge: Batcher's networks on any array length
// and either direction. OddEvenMerge keeps the CUDA-samples design, the
// baseline: each block sorts S = 2 x block elements in shared memory, and
// every larger merge step is one global pass.
//
// Packing as in the CPU networks (cpu/networks.cpp): every array is padded to
// P = next power of two and each element becomes one unsigned word that sorts
// ascending (rank(key), or rank << 32 | value for pairs; padding all ones).
// u32 keys only, ascending, P = length needs no packing: the keys are sorted
// in place.
//
// Bitonic differs from the samples where Hopper rewards it, to cut the
// passes over global memory (a 2^24 sort moves 64 MB, or 128 MB as pairs,
// each pass, both ways) and the instructions of each:
//  - a block sorts, and later merges, a tile of E = 32 KB of words (8,192
//    keys, 4,096 pairs) held in registers, 16 a thread. The 4 tile-index
//    bits a thread's registers span (its layout) change between runs of
//    steps: a step on one of them is 8 compare-exchanges within the thread,
//    a change of layout one pass through shared memory (swizzled, free of
//    bank conflicts), and in the layout where a thread holds 16 consecutive
//    elements a step on index bits 4 to 7 is a warp shuffle. A tile merge
//    (13 steps for keys) is 12 steps in registers, 1 in shuffles and 2
//    changes of layout; the first tile sort 21 steps in shuffles and 11
//    changes. Arrays of at most 256 keys (padded length under 512) take the
//    samples' one-step-a-barrier kernel (min(block, E / 2) threads);
//  - a strided pass does up to 8 steps of a stage (strides j .. j / 128, all
//    at least E) on a block's E = 2^B elements: 2^(B - L) consecutive words
//    (whole lines) at each of the 2^L offsets the L strides span, in layouts
//    B - 1 and B - 5. A stage of s such steps reads and writes the data
//    ceil(s / 8) times, not s.
// For 2^24 u32 keys: 14 strided passes, 11 tile merges and the first tile
// sort (26 launches), where the samples' design at block 1024 makes 91, 13
// and 1 (at block 256: 120, 15 and 1). Measurements behind these choices:
// docs/perf/sort-networks.md.
//
// CUDA.BitonicMerge keeps the network within a tile (the same register tile
// sort on twice Bitonic's tile: 64 KB, 1,024 threads, every tile ascending)
// and merges the sorted tiles with merge path, one pass a doubling of the
// run: 10 merge passes at 2^24 keys where Bitonic makes 25, and the last one
// writes the unpacked result.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/early_launch.cuh"
#include "sort/cuda/copy_out.cuh"
#include "sort/cuda/odd_even_windows.hpp"
#include "sort/sort.hpp"

namespace pb::sort {
namespace {

int log2i(std::int64_t x) {
  int l = 0;
  while ((std::int64_t(1) << l) < x) ++l;
  return l;
}

// Keys (and values) into padded packed words. One thread per padded slot.
template <class T>
__global__ void pack(const std::uint32_t* __restrict__ keys, const std::uint32_t* __restrict__ vals,
                     T* __restrict__ w, std::int64_t L, std::int64_t P, std::int64_t total, Problem p) {
  for (std::int64_t s = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; s < total;
       s += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t a = s / P, i = s - a * P;
    T v = T(~T(0));
    if (i < L) {
      const std::int64_t src = a * L + i;
      const std::uint32_t r = rank(p, keys[src]);
      if constexpr (sizeof(T) == 8)
        v = (std::uint64_t(r) << 32) | vals[src];
      else
        v = r;
    }
    w[s] = v;
  }
}

template <class T>
__global__ void unpack(const T* __restrict__ w, std::uint32_t* __restrict__ keys,
                       std::uint32_t* __restrict__ vals, std::int64_t L, std::int64_t P, std::int64_t n,
                       Problem p) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < n;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t a = j / L;
    const T v = w[a * P + (j - a * L)];
    if constexpr (sizeof(T) == 8) {
      keys[j] = unrank(p, std::uint32_t(v >> 32));
      vals[j] = std::uint32_t(v);
    } else {
      keys[j] = unrank(p, v);
    }
  }
}

// The shared-memory kernels: each block's E elements from base, staged in
// dynamic shared memory and written back after the steps.
template <class T>
__device__ __forceinline__ T* load_block(const T* __restrict__ w, std::int64_t base, int E) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  for (int i = threadIdx.x; i < E; i += blockDim.x) s[i] = w[base + i];
  return s;
}
template <class T>
__device__ __forceinline__ void store_block(T* __restrict__ w, std::int64_t base, const T* s, int E) {
  __syncthreads();
  for (int i = threadIdx.x; i < E; i += blockDim.x) w[base + i] = s[i];
}

// ---- bitonic ----------------------------------------------------------------
// Stages k = 2 .. E of each block's E elements (E <= P, a power of two).
template <class T>
__global__ void bitonic_sort_shared(T* __restrict__ w, std::int64_t P, int E) {
  const std::int64_t base = std::int64_t(blockIdx.x) * E;
  T* s = load_block(w, base, E);
  for (int k = 2; k <= E; k <<= 1)
    for (int j = k / 2; j > 0; j >>= 1) {
      __syncthreads();
      for (int c = threadIdx.x; c < E / 2; c += blockDim.x) {
        const int i = 2 * c - (c & (j - 1));
        cmpx(s[i], s[i + j], (((base + i) & (P - 1)) & k) == 0);
      }
    }
  store_block(w, base, s, E);
}

// Tiles of E = 2^B >= 512 elements (a power of two, E <= P) are held in
// registers, kRegs = 16 a thread (E / 16 threads). Which 4 bits of a tile
// index a thread's registers span is its layout H (3 <= H < B): v[c] holds
// index idx0<H> | c << (H - 3), the thread index filling the other bits in
// order. A compare-exchange step on one of those 4 bits stays within the
// thread; a step on another bit either moves the tile to the layout that
// owns it (one pass through shared memory, two barriers) or, in layout 3,
// where the lanes own bits 4 to 8, is a warp shuffle. Layouts H >= 8 put
// bits 0 to 4 on the lanes (consecutive words), layout 3 gives a thread 16
// consecutive elements, read and written as 16-byte vectors; the shared
// copy is swizzled in 16-byte chunks so both are free of bank conflicts.
// Every layout and step is a compile-time constant: addresses are a
// thread's base and immediate offsets.
//
// Every step sorts ascending. A run whose elements go descending (bit
// `stage` of their index set, or the tile's direction in a merge) is
// complemented first and after: ~x orders unsigned words in reverse, and
// partners always share a direction, so 2 instructions a compare-exchange.
constexpr int kRegs = 16;
// Bitonic's tile: 32 KB of words (8,192 keys, 4,096 pairs), E / 16 threads.
// Merges and strided passes fit 40 registers a thread (keys), so three
// blocks share an SM; the first sort needs 61, two blocks. (A strided pass of
// 4 steps holds 16 addresses from its loads to its stores: at 40 registers
// it spills, so it runs two blocks an SM.)
constexpr std::int64_t kBitonicTile = 32 * 1024;
template <class T>
__host__ __device__ constexpr int tile_bits() {  // log2 of the elements a tile
  int b = 0;
  while ((std::int64_t(1) << (b + 1)) * std::int64_t(sizeof(T)) <= kBitonicTile) ++b;
  return b;
}
static_assert(tile_bits<std::uint32_t>() == 13 && tile_bits<std::uint64_t>() == 12,
              "8,192 keys, 4,096 pairs");
template <class T>
__host__ __device__ constexpr int tile_threads() {
  return int(kBitonicTile / std::int64_t(sizeof(T)) / kRegs);
}

template <int H>
__device__ __forceinline__ unsigned layout_idx0(unsigned tid) {
  constexpr int low = H - 3;
  return (tid & ((1u << low) - 1)) | ((tid >> low) << (H + 1));
}

// A tile index's place in shared memory: 16-byte chunk q moves to
// q ^ ((q / 8) mod (chunks a layout-3 thread owns)). The map is linear in the
// bits (swizzle(a ^ b) = swizzle(a) ^ swizzle(b)).
template <class T>
__host__ __device__ constexpr unsigned swizzle(unsigned idx) {
  constexpr int sh = sizeof(T) == 4 ? 2 : 1;  // log2(elements a chunk)
  constexpr unsigned chunks = kRegs >> sh;
  return idx ^ (((idx >> (sh + 3)) & (chunks - 1)) << sh);
}

__device__ __forceinline__ uint4 to_vec(const std::uint32_t* v) { return make_uint4(v[0], v[1], v[2], v[3]); }
__device__ __forceinline__ uint4 to_vec(const std::uint64_t* v) {
  return make_uint4(unsigned(v[0]), unsigned(v[0] >> 32), unsigned(v[1]), unsigned(v[1] >> 32));
}
__device__ __forceinline__ void from_vec(uint4 u, std::uint32_t* v) {
  v[0] = u.x, v[1] = u.y, v[2] = u.z, v[3] = u.w;
}
__device__ __forceinline__ void from_vec(uint4 u, std::uint64_t* v) {
  v[0] = u.x | std::uint64_t(u.y) << 32, v[1] = u.z | std::uint64_t(u.w) << 32;
}

// A layout-3 thread's 16 consecutive elements at p (16-byte aligned), as vectors.
template <class T>
__device__ __forceinline__ void load_vec(T (&v)[kRegs], const T* p) {
  constexpr int per = 16 / sizeof(T);
#pragma unroll
  for (int r = 0; r < kRegs / per; ++r) from_vec(reinterpret_cast<const uint4*>(p)[r], v + r * per);
}
template <class T>
__device__ __forceinline__ void store_vec(T* p, const T (&v)[kRegs]) {
  constexpr int per = 16 / sizeof(T);
#pragma unroll
  for (int r = 0; r < kRegs / per; ++r) reinterpret_cast<uint4*>(p)[r] = to_vec(v + r * per);
}

template <class T>
__device__ __forceinline__ void flip(T (&v)[kRegs], T mask) {
#pragma unroll
  for (int c = 0; c < kRegs; ++c) v[c] ^= mask;
}

// From layout FROM to layout TO through the shared tile s.
template <class T, int FROM, int TO>
__device__ __forceinline__ void relayout(T (&v)[kRegs], T* s, unsigned tid) {
  constexpr int per = 16 / sizeof(T);
  __syncthreads();  // the last reads of s are done
  if constexpr (FROM == 3) {
    // The row's chunk r is at swizzle(16 tid) ^ r per: the swizzle permutes a row's chunks.
    const unsigned row = swizzle<T>(16 * tid);
#pragma unroll
    for (int r = 0; r < kRegs / per; ++r)
      *reinterpret_cast<uint4*>(s + (row ^ unsigned(r * per))) = to_vec(v + r * per);
  } else {
    const unsigned b = swizzle<T>(layout_idx0<FROM>(tid));
#pragma unroll
    for (int c = 0; c < kRegs; ++c) s[b ^ swizzle<T>(unsigned(c) << (FROM - 3))] = v[c];
  }
  __syncthreads();
  if constexpr (TO == 3) {
    const unsigned row = swizzle<T>(16 * tid);
#pragma unroll
    for (int r = 0; r < kRegs / per; ++r)
      from_vec(*reinterpret_cast<const uint4*>(s + (row ^ unsigned(r * per))), v + r * per);
  } else {
    const unsigned b = swizzle<T>(layout_idx0<TO>(tid));
#pragma unroll
    for (int c = 0; c < kRegs; ++c) v[c] = s[b ^ swizzle<T>(unsigned(c) << (TO - 3))];
  }
}

// One ascending step on register bit R: v[c] with v[c + 2^R].
template <int R, class T>
__device__ __forceinline__ void reg_step(T (&v)[kRegs]) {
#pragma unroll
  for (int c = 0; c < kRegs; ++c)
    if (!(c & (1 << R))) {
      const T a = v[c], b = v[c | 1 << R];
      v[c] = a < b ? a : b;
      v[c | 1 << R] = a < b ? b : a;
    }
}

// Ascending steps on layout-3 index bits B0, B0 - 1, .., 4: lane bits B0 - 4 .. 0.
template <int B0, class T>
__device__ __forceinline__ void shuffle_steps(T (&v)[kRegs], unsigned tid) {
#pragma unroll
  for (int b = B0; b >= 4; --b) {
    const unsigned lane_bit = 1u << (b - 4);
    const bool lower = (tid & lane_bit) == 0;
#pragma unroll
    for (int c = 0; c < kRegs; ++c) {
      const T o = __shfl_xor_sync(0xffffffffu, v[c], lane_bit);
      v[c] = lower ? (v[c] < o ? v[c] : o) : (v[c] < o ? o : v[c]);
    }
  }
}

// Ascending steps on tile-index bits H, H - 1, .., 0, from layout CUR to
// layout 3: layouts H, H - 4, .. while they are at least RegFrom (8 unless
// a kernel asks for fewer shuffles), then shuffles for the bits down to 4
// and the last 4 within the thread.
template <class T, int H, int CUR, int RegFrom = 8>
__device__ __forceinline__ void merge_bits(T (&v)[kRegs], T* s, unsigned tid) {
  if constexpr (H >= RegFrom) {
    if constexpr (CUR != H) relayout<T, CUR, H>(v, s, tid);
    reg_step<3>(v);
    reg_step<2>(v);
    reg_step<1>(v);
    reg_step<0>(v);
    merge_bits<T, H - 4, H, RegFrom>(v, s, tid);
  } else {
    if constexpr (CUR != 3) relayout<T, CUR, 3>(v, s, tid);
    shuffle_steps<H>(v, tid);
    if constexpr (H >= 3) reg_step<3>(v);
    if constexpr (H >= 2) reg_step<2>(v);
    if constexpr (H >= 1) reg_step<1>(v);
    reg_step<0>(v);
  }
}

// Stages STAGE .. B of the tile sort, in layout 3; `mask` is the complement
// the registers hold (that of stage STAGE - 1).
template <class T, int B, int STAGE, int RegFrom = 8>
__device__ __forceinline__ void sort_stages(T (&v)[kRegs], T* s, unsigned tid, T mask, bool tile_desc) {
  if constexpr (STAGE <= B) {
    // Descending: bit STAGE of the index (layout 3: thread bit STAGE - 4),
    // or, for STAGE = B, the tile's place in its run of 2E.
    const bool desc = STAGE < B ? ((tid >> (STAGE - 4)) & 1) != 0 : tile_desc;
    const T m = desc ? T(~T(0)) : T(0);
    flip(v, T(mask ^ m));
    merge_bits<T, STAGE - 1, 3, RegFrom>(v, s, tid);
    sort_stages<T, B, STAGE + 1, RegFrom>(v, s, tid, m, tile_desc);
  } else {
    flip(v, mask);
  }
}

// Stages k = 2 .. E of each tile (E = 2^B): the first sort, read from src
// (w itself for CUDA.Bitonic, so src is not restrict) and written to w,
// through the block's shared tile s.
template <class T, int B, int RegFrom = 8>
__device__ __forceinline__ void tile_sort(const T* src, T* __restrict__ w, std::int64_t P, T* s) {
  const unsigned tid = threadIdx.x;
  const std::int64_t base = std::int64_t(blockIdx.x) << B;
  T v[kRegs];
  load_vec(v, src + base + 16 * tid);
  // Stages 1 to 3 lie within a thread's 16 consecutive elements: the
  // direction is bit `stage` of the register, a constant.
#pragma unroll
  for (int stage = 1; stage <= 3; ++stage)
#pragma unroll
    for (int R = stage - 1; R >= 0; --R)
#pragma unroll
      for (int c = 0; c < kRegs; ++c)
        if (!(c & (1 << R))) cmpx(v[c], v[c | 1 << R], ((c >> stage) & 1) == 0);
  sort_stages<T, B, 4, RegFrom>(v, s, tid, T(0), ((base & (P - 1)) >> B) & 1);
  store_vec(w + base + 16 * tid, v);
}
template <class T, int B>
__global__ void __launch_bounds__(tile_threads<T>(), 2)
    bitonic_tile_sort(const T* src, T* __restrict__ w, std::int64_t P) {
  __shared__ __align__(16) T s[std::size_t(1) << B];
  tile_sort<T, B>(src, w, P, s);
}
// Merge path's tile sort: twice Bitonic's tile (64 KB of words), 1,024
// threads, one block an SM, the tile in dynamic shared memory.
template <class T>
__host__ __device__ constexpr int big_tile_bits() {
  return tile_bits<T>() + 1;
}
// Pairs take their steps on tile bits 6 and 7 in registers (layouts 6 and
// 7) rather than in shuffles: 3% faster for pairs, slower for keys.
template <class T>
__global__ void __launch_bounds__(1024, 1)
    bitonic_big_tile_sort(const T* src, T* __restrict__ w, std::int64_t P) {
  extern __shared__ __align__(16) unsigned char smem[];
  grid_release();
  tile_sort<T, big_tile_bits<T>(), sizeof(T) == 4 ? 8 : 6>(src, w, P, reinterpret_cast<T*>(smem));
}

// Steps E / 2 .. 1 of stage k > E, tile by tile: one direction a tile.
template <class T>
__global__ void __launch_bounds__(tile_threads<T>(), 3)
    bitonic_tile_merge(T* __restrict__ w, std::int64_t P, std::int64_t k) {
  constexpr int B = tile_bits<T>(), H = B - 1;
  __shared__ __align__(16) T s[std::size_t(1) << B];
  const unsigned tid = threadIdx.x;
  const std::int64_t base = std::int64_t(blockIdx.x) << B;
  const T* in = w + base + layout_idx0<H>(tid);
  T v[kRegs];
#pragma unroll
  for (int c = 0; c < kRegs; ++c) v[c] = in[c << (H - 3)];
  const T m = ((base & (P - 1)) & k) ? T(~T(0)) : T(0);
  flip(v, m);
  merge_bits<T, H, H>(v, s, tid);
  flip(v, m);
  store_vec(w + base + 16 * tid, v);
}

// L <= 8 steps of stage k with strides 2^lm .. 2^(lm + L - 1), all >= E, in
// one pass over the data. A block takes E elements: 2^(B - L) consecutive
// ones (the tile's low bits: whole 128-byte lines to a warp) at each of the
// 2^L offsets those strides span (the tile's high bits, the bits the steps
// compare on), in layout B - 1 (4 steps), then B - 5 (keys: the tile
// merge's second layout; pairs: layout 7, lane bit 4 on tile bit 8).
template <class T, int L>
__global__ void __launch_bounds__(tile_threads<T>(), L == 4 ? 2 : 3)
    bitonic_strided(T* __restrict__ w, std::int64_t P, std::int64_t k, int lm) {
  constexpr int B = tile_bits<T>(), CB = B - L;  // CB: bits of consecutive elements
  __shared__ __align__(16) T s[std::size_t(1) << B];
  const unsigned tid = threadIdx.x;
  const std::int64_t b = blockIdx.x;
  const int low_blocks = lm - CB;
  const std::int64_t start =
      ((b & ((std::int64_t(1) << low_blocks) - 1)) << CB) | ((b >> low_blocks) << (lm + L));
  // Tile index x at start + (x mod 2^CB) + (x / 2^CB) 2^lm; c's part a constant times 2^lm or less.
  auto offset = [lm](unsigned x) {
    return std::int64_t(x & ((1u << CB) - 1)) + (std::int64_t(x >> CB) << lm);
  };
  const T m = ((start & (P - 1)) & k) ? T(~T(0)) : T(0);
  T v[kRegs];
  {
    constexpr int H = B - 1;
    const T* in = w + start + offset(layout_idx0<H>(tid));
#pragma unroll
    for (int c = 0; c < kRegs; ++c) v[c] = in[offset(unsigned(c) << (H - 3))];
  }
  flip(v, m);
  // Register bit r is tile bit H - 3 + r; the steps are on tile bits B - 1 .. B - L.
  reg_step<3>(v);
  if constexpr (L >= 2) reg_step<2>(v);
  if constexpr (L >= 3) reg_step<1>(v);
  if constexpr (L >= 4) reg_step<0>(v);
  constexpr int H = L > 4 ? B - 5 : B - 1;
  if constexpr (L > 4) {
    relayout<T, B - 1, H>(v, s, tid);
    reg_step<3>(v);
    if constexpr (L >= 6) reg_step<2>(v);
    if constexpr (L >= 7) reg_step<1>(v);
    if constexpr (L >= 8) reg_step<0>(v);
  }
  flip(v, m);
  T* out = w + start + offset(layout_idx0<H>(tid));
#pragma unroll
  for (int c = 0; c < kRegs; ++c) out[offset(unsigned(c) << (H - 3))] = v[c];
}

// ---- odd-even merge ---------------------------------------------------------
// Merges of size 2p <= min(S, P), every step, in shared memory.
template <class T>
__global__ void odd_even_sort_shared(T* __restrict__ w, std::int64_t P) {
  const int S = 2 * blockDim.x;
  const std::int64_t base = std::int64_t(blockIdx.x) * S;
  T* s = load_block(w, base, S);
  const int lim = int(min(std::int64_t(S), P));
  const int t = threadIdx.x;
  for (int p = 1; p < lim; p <<= 1)
    for (int k = p; k >= 1; k >>= 1) {
      __syncthreads();
      int i = 2 * t - (t & (k - 1));
      bool on = true;
      if (k < p) {
        i += k;
        on = (i & (2 * p - 1)) + k < 2 * p;
      }
      if (on) cmpx(s[i], s[i + k], true);
    }
  store_block(w, base, s, S);
}

// One step (stride k) of the merges of size 2p, over the whole input.
template <class T>
__global__ void odd_even_global(T* __restrict__ w, std::int64_t total, std::int64_t p, std::int64_t k) {
  for (std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; t < total / 2;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t i = 2 * t - (t & (k - 1));
    if (k < p) {
      i += k;
      if ((i & (2 * p - 1)) + k >= 2 * p) continue;
    }
    T a = w[i], b = w[i + k];
    if (a > b) w[i] = b, w[i + k] = a;
  }
}

// ---- odd-even merge in windows (CUDA.OddEvenMerge.Windows) -----------------
// The plan and the step: sort/cuda/odd_even_windows.hpp. 64 KB windows, 512
// threads: three blocks an SM. For 2^24 keys that is 24 passes over the
// data (the samples' design at block 1024: 235).
constexpr int kWinThreads = 512;
constexpr int kWinBytes = 64 * 1024;
static_assert(kWinThreads % 32 == 0, "a thread of a window keeps one of its 32 residues");

template <class T>
__host__ __device__ constexpr int win_words() {
  return kWinBytes / int(sizeof(T));
}

// Merges of size 2p <= min(S, P), every step, on each tile of S words (of
// several short arrays where P < S; the last tile may be short), from in to
// out (which may be the same).
template <class T>
__global__ void __launch_bounds__(kWinThreads, 3)
    odd_even_tile_sort(const T* in, T* out, std::int64_t total, std::int64_t P, int S) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  const std::int64_t base = std::int64_t(blockIdx.x) * S;
  const int n = total - base < S ? int(total - base) : S;
  for (int i = threadIdx.x; i < n; i += kWinThreads) s[i] = in[base + i];
  for (std::int64_t p = 1; p < S && p < P; p <<= 1)
    for (std::int64_t k = p; k >= 1; k >>= 1) {
      __syncthreads();
      windows::step<T, 1>(s, S, base, total, p, int(k), int(threadIdx.x), kWinThreads);
    }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += kWinThreads) out[base + i] = s[i];
}

// Steps k = khi, khi / 2, ..., q (absolute strides) of the merges of size
// 2p on class-local windows [b J - H, (b + 1) J + H) of the residues
// [g C, (g + 1) C) mod q, read from in; the centre J rows are written to
// out. Block x is window b = x / (q / C), residues g = x % (q / C): one grid
// axis, as q / C passes 65,535 (the y axis's limit) from 2^29 pairs. J and H
// are multiples of 2 khi / q. With a halo, out is another buffer: a block's
// halo is its neighbours' centre, which they may write before this block
// reads it.
template <class T, int C>
__global__ void __launch_bounds__(kWinThreads, 3)
    odd_even_windows(const T* in, T* out, std::int64_t total, std::int64_t p, std::int64_t khi,
                     std::int64_t q, int J, int H) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  const int rows = J + 2 * H;
  const std::int64_t groups = q / C, b = std::int64_t(blockIdx.x) / groups;
  const std::int64_t N = total / q, j0 = b * J - H;
  const std::int64_t r0 = (std::int64_t(blockIdx.x) - b * groups) * C;
  // A thread keeps one residue c (kWinThreads, the block, is a multiple of C)
  // and walks rows r; rows [rlo, rhi) lie in the array (a halo may not).
  constexpr int dr = kWinThreads / C;
  const int c = int(threadIdx.x % C);
  const std::int64_t left = N - j0;
  const int rlo = j0 < 0 ? (-j0 < rows ? int(-j0) : rows) : 0;
  const int rhi = left < rows ? (left > 0 ? int(left) : 0) : rows;
  const std::int64_t dat = q * dr;
  const std::int64_t pl = p / q;
  std::int64_t at = r0 + c + q * (j0 + int(threadIdx.x) / C);
  int k = int(khi / q);
  bool loaded = false;
  if constexpr (C == 32) {
    // An aligned pass of whole windows: its steps of class-local stride dr
    // and up in registers, read straight from global memory.
    constexpr int R = win_words<T>() / kWinThreads;
    if (H == 0 && rows == dr * R && k == rows / 2 && rlo == 0 && rhi == rows) {
      const int w = int(threadIdx.x) / C;
      T v[R];
#pragma unroll
      for (int n = 0; n < R; ++n) v[n] = in[at + n * dat];
      windows::merge_in_registers<T, R>(v);
#pragma unroll
      for (int n = 0; n < R; ++n) s[(w + dr * n) * C + c] = v[n];
      k = dr / 2;
      loaded = true;
    }
  }
  if (!loaded)
    for (int r = int(threadIdx.x) / C; r < rows; r += dr, at += dat)
      if (r >= rlo && r < rhi) s[r * C + c] = in[at];
  for (; k >= 1; k >>= 1) {
    __syncthreads();
    windows::step<T, C>(s, rows, j0, N, pl, k, int(threadIdx.x), kWinThreads);
  }
  __syncthreads();
  at = r0 + c + q * (j0 + H + int(threadIdx.x) / C);
  for (int r = H + int(threadIdx.x) / C; r < H + J && r < rhi; r += dr, at += dat) out[at] = s[r * C + c];
}

unsigned grid_for(std::int64_t work, int block) {
  return unsigned(std::min<std::int64_t>((work + block - 1) / block, std::int64_t(1) << 30));
}

// ---- merge path (CUDA.BitonicMerge) ----------------------------------------
// After the bitonic tile sort (every tile ascending), runs of R words are
// merged in pairs into runs of 2R, one pass over the data each, until a run
// is the padded array. Each block makes kMergeTile consecutive words of a
// merged run: where its first word lies on the merge path (how many of the
// words before it come from the pair's first run) is found beforehand, one
// thread a block (merge_partition), so a merge block loads exactly its
// words, and each thread finds its own kMergeItems in shared memory. The
// partitions and merges launch early (core/cuda/early_launch.cuh): each is
// resident and waiting as the kernel before it drains, instead of starting
// after it.

// A merge block: threads, and words a thread merges. 256 x 8 measured
// fastest on an H100 against 512 x 8, 256 x 16 and 128 x 16, and against
// shared memory padded free of bank conflicts (docs/perf/sort-networks.md).
template <int Threads, int Items>
struct MergeConfig {
  static constexpr int kThreads = Threads, kItems = Items, kTile = Threads * Items;
};
using MergeBlock = MergeConfig<256, 8>;
// Blocks an SM the merge asks registers for: all 2,048 threads for words,
// three quarters for pairs (their eight 8-byte words need 40 registers).
template <class T, class C>
constexpr int merge_min_blocks() {
  return (sizeof(T) == 4 ? 2048 : 1536) / C::kThreads;
}

// How many of the first d words of merge(a, b) come from a (equal words: a's first).
template <class T>
__device__ __forceinline__ std::int64_t path_split(const T* a, std::int64_t na, const T* b, std::int64_t nb,
                                                   std::int64_t d) {
  std::int64_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) >> 1;
    if (a[mid] <= b[d - 1 - mid])
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// One thread a split, a binary search: a 32-way search by a warp (5 rounds
// at 2^23 instead of 23 loads) measured slower, its 32 probes a round
// scattered over DRAM, and so did each merge block searching its own two
// splits (docs/perf/sort-networks.md).
template <class T>
__global__ void merge_partition(const T* __restrict__ w, std::int64_t R, std::int64_t tiles, int tile_words,
                                std::int64_t* __restrict__ split) {
  grid_release();
  grid_wait();
  const std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (t >= tiles) return;
  const std::int64_t first = t * tile_words, base = first / (2 * R) * (2 * R);
  split[t] = path_split(w + base, R, w + base + R, R, first - base);
}

// One tile of a merged run. Last: the final pass, which writes the keys
// (and values) unpacked into place instead of words (P = 2^logP).
template <class T, class C, bool Last>
__global__ void __launch_bounds__(C::kThreads, merge_min_blocks<T, C>())
    merge_runs(const T* __restrict__ in, T* __restrict__ out, std::int64_t R,
               const std::int64_t* __restrict__ split, std::uint32_t* __restrict__ keys,
               std::uint32_t* __restrict__ vals, std::int64_t L, int logP, Problem p) {
  constexpr int kMergeTile = C::kTile, kMergeThreads = C::kThreads, kMergeItems = C::kItems;
  __shared__ __align__(16) T s[kMergeTile];
  grid_release();
  const std::int64_t tile = blockIdx.x, first = tile * kMergeTile;
  const std::int64_t base = first / (2 * R) * (2 * R), d0 = first - base, d1 = d0 + kMergeTile;
  grid_wait();
  const std::int64_t a0 = split[tile], a1 = d1 == 2 * R ? R : split[tile + 1];
  const int na = int(a1 - a0);
  const T* A = in + base + a0;
  const T* B = in + base + R + (d0 - a0);
  // Word by word: 16-byte loads of the chunks covering each range (its words
  // start anywhere) measured slower.
  for (int k = threadIdx.x; k < kMergeTile; k += kMergeThreads) s[k] = k < na ? A[k] : B[k - na];
  __syncthreads();
  // This thread's kMergeItems: its own split of the tile's path, then a
  // sequential merge. s holds the a-words at [0, na), the b-words after.
  const int diag = int(threadIdx.x) * kMergeItems, nb = kMergeTile - na;
  int lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (s[mid] <= s[na + diag - 1 - mid])
      lo = mid + 1;
    else
      hi = mid;
  }
  int ia = lo, ib = na + diag - lo;
  // The two heads in registers: one shared read a word. A head past its run
  // is never taken; its read is clamped into the tile.
  T r[kMergeItems];
  T va = s[min(ia, kMergeTile - 1)], vb = s[min(ib, kMergeTile - 1)];
#pragma unroll
  for (int k = 0; k < kMergeItems; ++k) {
    const bool take_a = ib >= kMergeTile || (ia < na && va <= vb);
    r[k] = take_a ? va : vb;
    const int next = take_a ? ++ia : ++ib;
    const T nv = s[min(next, kMergeTile - 1)];
    va = take_a ? nv : va;
    vb = take_a ? vb : nv;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kMergeItems; ++k) s[diag + k] = r[k];
  __syncthreads();
  if constexpr (!Last) {
    // 16-byte stores: a tile starts on a multiple of kMergeTile words.
    constexpr int kVecs = kMergeTile * int(sizeof(T)) / 16;
    for (int k = threadIdx.x; k < kVecs; k += kMergeThreads)
      reinterpret_cast<uint4*>(out + first)[k] = reinterpret_cast<const uint4*>(s)[k];
    return;
  }
  const std::int64_t P = std::int64_t(1) << logP;
  if constexpr (sizeof(T) == 4) {
    // Unpadded arrays of keys: the tile is keys[first, first + tile), 16-byte stores.
    if (L == P) {
      for (int k = threadIdx.x; k < kMergeTile / 4; k += kMergeThreads) {
        const uint4 u = reinterpret_cast<const uint4*>(s)[k];
        reinterpret_cast<uint4*>(keys + first)[k] =
            make_uint4(unrank(p, u.x), unrank(p, u.y), unrank(p, u.z), unrank(p, u.w));
      }
      return;
    }
  }
  for (int k = threadIdx.x; k < kMergeTile; k += kMergeThreads) {
    const T v = s[k];
    const std::int64_t pos = first + k, a = pos >> logP, i = pos & (P - 1);
    if (i < L) {
      if constexpr (sizeof(T) == 8) {
        keys[a * L + i] = unrank(p, std::uint32_t(v >> 32));
        vals[a * L + i] = std::uint32_t(v);
      } else {
        keys[a * L + i] = unrank(p, v);
      }
    }
  }
}

class CudaNetwork final : public Variant {
 public:
  // path: bitonic tiles merged by merge path above the tile (CUDA.BitonicMerge);
  // windows: the odd-even merge in windows (CUDA.OddEvenMerge.Windows).
  CudaNetwork(int block, Merge merge, bool path = false, bool windows = false)
      : block_(block), merge_(merge), path_(path), windows_(windows) {}
  Support supports(const Problem& p) const override {
    if (block_ < 32 || block_ > 1024 || (block_ & (block_ - 1)))
      return Support::no("block must be a power of two in [32, 1024]");
    if (next_pow2(p.length) * p.batch() > (std::int64_t(1) << 32))
      return Support::no("padded input above 2^32 elements");
    return Support::yes();
  }
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p;
    P_ = next_pow2(p.length);
    total_ = P_ * p.batch();
    // u32 ascending keys of a power-of-two length need no packing: the network
    // sorts them in place, as Thrust does, and reset() restores the unsorted
    // keys untimed; merge path's tile sort reads them where they are (tiles
    // of 512 or more, the register kernel's smallest). Every other case packs
    // (orders, pads, pairs) inside the timed run: that is part of this sort's
    // work.
    const bool identity = !p.pairs() && p.key == Key::U32 && p.order == Order::Asc && P_ == p.length;
    in_place_ = !path_ && identity;
    read_keys_ = path_ && identity && P_ >= 512;
    keys_in_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    PB_CUDA(cudaMemcpy(keys_in_.get(), in.keys.data(), keys_in_.bytes(), cudaMemcpyHostToDevice));
    if (p.pairs()) {
      vals_in_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
      PB_CUDA(cudaMemcpy(vals_in_.get(), in.values.data(), vals_in_.bytes(), cudaMemcpyHostToDevice));
      vals_out_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
      w64_ = DeviceBuffer<std::uint64_t>(std::size_t(total_));
      if (path_ || windows_) w64b_ = DeviceBuffer<std::uint64_t>(std::size_t(total_));
    } else {
      w32_ = DeviceBuffer<std::uint32_t>(std::size_t(total_));
      if (path_ || windows_) w32b_ = DeviceBuffer<std::uint32_t>(std::size_t(total_));
    }
    if (path_) split_ = DeviceBuffer<std::int64_t>(std::size_t(total_ / MergeBlock::kTile + 1));
    if (path_) {
      if (p.pairs())
        allow_big_tile<std::uint64_t>();
      else
        allow_big_tile<std::uint32_t>();
    }
    if (windows_) {
      if (p.pairs())
        allow_windows<std::uint64_t>();
      else
        allow_windows<std::uint32_t>();
      plan_ = windows::plan(p.pairs() ? win_words<std::uint64_t>() : win_words<std::uint32_t>(), P_);
    }
    if (!in_place_) keys_out_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    // A copy from pageable memory may return before the data has landed, and
    // the variant's non-blocking stream is not ordered after it: wait here.
    PB_CUDA(cudaDeviceSynchronize());
  }
  void reset() override {
    if (in_place_)
      PB_CUDA(cudaMemcpyAsync(w32_.get(), keys_in_.get(), keys_in_.bytes(), cudaMemcpyDeviceToDevice,
                              stream_.get()));
  }
  void run() override {
    if (p_.pairs())
      go(w64_.get(), w64b_.get());
    else
      go(w32_.get(), w32b_.get());
  }
  void result(Output& out) override {
    copy_out(p_, stream_.get(), in_place_ ? w32_.get() : keys_out_.get(), vals_out_.get(), out);
  }
  void* stream() override { return stream_.get(); }

 private:
  template <class T>
  void strided(int L, unsigned tiles, T* w, std::int64_t P, std::int64_t k, int lm) {
    const unsigned threads = unsigned(tile_threads<T>());
    const cudaStream_t st = stream_.get();
    switch (L) {
      case 1: bitonic_strided<T, 1><<<tiles, threads, 0, st>>>(w, P, k, lm); break;
      case 2: bitonic_strided<T, 2><<<tiles, threads, 0, st>>>(w, P, k, lm); break;
      case 3: bitonic_strided<T, 3><<<tiles, threads, 0, st>>>(w, P, k, lm); break;
      case 4: bitonic_strided<T, 4><<<tiles, threads, 0, st>>>(w, P, k, lm); break;
      case 5: bitonic_strided<T, 5><<<tiles, threads, 0, st>>>(w, P, k, lm); break;
      case 6: bitonic_strided<T, 6><<<tiles, threads, 0, st>>>(w, P, k, lm); break;
      case 7: bitonic_strided<T, 7><<<tiles, threads, 0, st>>>(w, P, k, lm); break;
      default: bitonic_strided<T, 8><<<tiles, threads, 0, st>>>(w, P, k, lm);
    }
    PB_CUDA_LAUNCHED();
  }
  template <class T>
  static constexpr std::size_t big_tile_bytes() {
    return (std::size_t(1) << big_tile_bits<T>()) * sizeof(T);
  }
  template <class T>
  static void allow_big_tile() {
    PB_CUDA(cudaFuncSetAttribute(bitonic_big_tile_sort<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(big_tile_bytes<T>())));
  }
  template <class T>
  static void allow_windows() {
    PB_CUDA(
        cudaFuncSetAttribute(odd_even_tile_sort<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, kWinBytes));
    PB_CUDA(
        cudaFuncSetAttribute(odd_even_windows<T, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, kWinBytes));
    PB_CUDA(cudaFuncSetAttribute(odd_even_windows<T, 32>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 kWinBytes));
  }
  // CUDA.OddEvenMerge.Windows: the tile sort, then windows::plan's passes. A
  // haloed pass goes from one buffer to the other; the tile sort goes across
  // too where their count is odd, so the words end in w.
  template <class T>
  void odd_even_in_windows(T* w, T* w2) {
    const cudaStream_t st = stream_.get();
    const std::int64_t total = total_, S = std::min<std::int64_t>(win_words<T>(), next_pow2(total));
    const auto haloed =
        std::count_if(plan_.begin(), plan_.end(), [](const windows::Pass& x) { return x.H > 0; });
    T* cur = w;
    T* other = w2;
    T* first = haloed % 2 ? other : cur;
    odd_even_tile_sort<T><<<unsigned((total + S - 1) / S), kWinThreads, std::size_t(S) * sizeof(T), st>>>(
        cur, first, total, P_, int(S));
    PB_CUDA_LAUNCHED();
    if (first != cur) std::swap(cur, other);
    for (const windows::Pass& x : plan_) {
      T* out = x.H > 0 ? other : cur;
      const unsigned blocks = unsigned((total / x.q + x.J - 1) / x.J * (x.q / x.C));
      if (x.C == 1)
        odd_even_windows<T, 1>
            <<<blocks, kWinThreads, kWinBytes, st>>>(cur, out, total, x.p, x.khi, x.q, x.J, x.H);
      else
        odd_even_windows<T, 32>
            <<<blocks, kWinThreads, kWinBytes, st>>>(cur, out, total, x.p, x.khi, x.q, x.J, x.H);
      PB_CUDA_LAUNCHED();
      if (out != cur) std::swap(cur, other);
    }
  }
  // One merge pass: runs of R words in w merged in pairs into w2, or, the
  // last pass (2R = P), unpacked into the output.
  template <class T, class C>
  void merge_pass(const T* w, T* w2, std::int64_t R) {
    const cudaStream_t st = stream_.get();
    const std::int64_t tiles = total_ / C::kTile;
    const int logP = log2i(P_);
    const std::int64_t* split = split_.get();
    launch_early(merge_partition<T>, grid_for(tiles, 256), 256, 0, st, w, R, tiles, C::kTile, split_.get());
    if (2 * R == P_)
      launch_early(merge_runs<T, C, true>, unsigned(tiles), C::kThreads, 0, st, w, static_cast<T*>(nullptr),
                   R, split, keys_out_.get(), vals_out_.get(), p_.length, logP, p_);
    else
      launch_early(merge_runs<T, C, false>, unsigned(tiles), C::kThreads, 0, st, w, w2, R, split,
                   static_cast<std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), p_.length,
                   logP, p_);
  }
  // CUDA.BitonicMerge: the tile sort of 2E words (E words when the array is
  // not longer), then merge path above the tile, runs of 2E, 4E, ... merged
  // in pairs, one pass each, between w and w2, the last one unpacking;
  // without a merge (P at most 2E) the words still to unpack are in w.
  template <class T>
  void path_sort(const T* src, T* w, T* w2, int E) {
    const cudaStream_t st = stream_.get();
    std::int64_t run = E;
    if (P_ >= 2 * std::int64_t(E)) {
      run = 2 * std::int64_t(E);
      // Every tile ascending: the tile's length as the direction's period.
      bitonic_big_tile_sort<T>
          <<<unsigned(total_ / run), unsigned(run / kRegs), big_tile_bytes<T>(), st>>>(src, w, run);
      PB_CUDA_LAUNCHED();
    } else {
      tile_sort_any<T>(src, w, E, E);
    }
    if (run >= P_) {
      unpack_words(w);
      return;
    }
    for (std::int64_t R = run; R < P_; R <<= 1) {
      merge_pass<T, MergeBlock>(w, w2, R);
      std::swap(w, w2);
    }
  }
  template <class T>
  void unpack_words(const T* w) {
    unpack<T><<<grid_for(p_.n, 256), 256, 0, stream_.get()>>>(w, keys_out_.get(), vals_out_.get(), p_.length,
                                                              P_, p_.n, p_);
    PB_CUDA_LAUNCHED();
  }
  // The first sort of tiles of E words, E a power of two up to Bitonic's
  // tile (and at most P), directions of period Pt.
  template <class T>
  void tile_sort_any(const T* src, T* w, int E, std::int64_t Pt) {
    const cudaStream_t st = stream_.get();
    const unsigned tiles = unsigned(total_ / E), threads = unsigned(E / kRegs);
    // Tiles of 512 or more elements in registers (E / 16 threads), smaller
    // ones (short arrays, so no merges follow) one step a barrier in shared
    // memory.
    switch (log2i(E)) {
      case 9: bitonic_tile_sort<T, 9><<<tiles, threads, 0, st>>>(src, w, Pt); break;
      case 10: bitonic_tile_sort<T, 10><<<tiles, threads, 0, st>>>(src, w, Pt); break;
      case 11: bitonic_tile_sort<T, 11><<<tiles, threads, 0, st>>>(src, w, Pt); break;
      case 12: bitonic_tile_sort<T, 12><<<tiles, threads, 0, st>>>(src, w, Pt); break;
      case 13:
        if constexpr (tile_bits<T>() >= 13) bitonic_tile_sort<T, 13><<<tiles, threads, 0, st>>>(src, w, Pt);
        break;
      default:
        bitonic_sort_shared<T>
            <<<tiles, unsigned(std::min(block_, E / 2)), std::size_t(E) * sizeof(T), st>>>(w, Pt, E);
    }
    PB_CUDA_LAUNCHED();
  }
  template <class T>
  void go(T* w, T* w2) {
    const cudaStream_t st = stream_.get();
    const std::int64_t P = P_, total = total_;
    const T* src = w;
    if (read_keys_)
      src = reinterpret_cast<const T*>(keys_in_.get());
    else if (!in_place_) {
      pack<T>
          <<<grid_for(total, 256), 256, 0, st>>>(keys_in_.get(), vals_in_.get(), w, p_.length, P, total, p_);
      PB_CUDA_LAUNCHED();
    }
    if (P > 1) {
      const std::int64_t S = std::min<std::int64_t>(2 * block_, P);
      const unsigned blocks = unsigned(total / S), threads = unsigned(S / 2);
      const std::size_t shm = std::size_t(S) * sizeof(T);
      if (merge_ == Merge::Bitonic) {
        const int E = int(std::min<std::int64_t>(kBitonicTile / std::int64_t(sizeof(T)), P)), B = log2i(E);
        const unsigned tiles = unsigned(total / E), threads = unsigned(E / kRegs);
        if (path_) {
          path_sort(src, w, w2, E);
          return;
        }
        tile_sort_any<T>(src, w, E, P);
        // Stages k > E (E is then the whole 32 KB tile): the strides k / 2 .. E
        // in passes of up to 8 steps, then the tile merge.
        for (std::int64_t k = 2 * std::int64_t(E); k <= P; k <<= 1) {
          int top = log2i(k) - 1;
          for (int left = log2i(k) - B; left > 0;) {
            const int L = std::min(8, left), lm = top - L + 1;
            strided<T>(L, tiles, w, P, k, lm);
            top -= L;
            left -= L;
          }
          bitonic_tile_merge<T><<<tiles, threads, 0, st>>>(w, P, k);
          PB_CUDA_LAUNCHED();
        }
      } else if (windows_) {
        odd_even_in_windows(w, w2);
      } else {
        odd_even_sort_shared<T><<<blocks, threads, shm, st>>>(w, P);
        PB_CUDA_LAUNCHED();
        for (std::int64_t p = S; p < P; p <<= 1)
          for (std::int64_t k = p; k >= 1; k >>= 1) {
            odd_even_global<T><<<grid_for(total / 2, 256), 256, 0, st>>>(w, total, p, k);
            PB_CUDA_LAUNCHED();
          }
      }
    }
    if (!in_place_) unpack_words(w);
  }

  int block_;
  Merge merge_;
  bool path_ = false;
  bool windows_ = false;
  std::vector<windows::Pass> plan_;  // CUDA.OddEvenMerge.Windows's passes after the tile sort
  Problem p_;
  std::int64_t P_ = 1, total_ = 0;
  bool in_place_ = false, read_keys_ = false;
  Stream stream_;
  DeviceBuffer<std::uint32_t> keys_in_, vals_in_, keys_out_, vals_out_, w32_, w32b_;
  DeviceBuffer<std::uint64_t> w64_, w64b_;
  DeviceBuffer<std::int64_t> split_;  // merge path: each merge tile's start on the path
};

}  // namespace

std::unique_ptr<Variant> make_cuda_bitonic(int block) {
  return std::make_unique<CudaNetwork>(block, Merge::Bitonic);
}
std::unique_ptr<Variant> make_cuda_bitonic_merge() {
  return std::make_unique<CudaNetwork>(256, Merge::Bitonic, true);
}
std::unique_ptr<Variant> make_cuda_odd_even(int block) {
  return std::make_unique<CudaNetwork>(block, Merge::OddEven);
}
std::unique_ptr<Variant> make_cuda_odd_even_windows() {
  return std::make_unique<CudaNetwork>(256, Merge::OddEven, false, true);
}

}  // namespace pb::sort
