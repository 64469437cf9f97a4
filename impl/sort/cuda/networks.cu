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
// each pass, both ways):
//  - a block sorts, and later merges, a tile of E = 32 KB of words (8,192
//    keys, 4,096 pairs; the samples' S is at most 2,048) held in registers,
//    16 a thread: steps of stride below 32 are warp shuffles, 32 to 256 stay
//    within a thread, and only strides of 512 and more exchange through
//    shared memory (two barriers a step, where the samples take one a step
//    of every stride); so a 2^24 sort has 11 merge stages beyond the tile,
//    not 13, and only 10 of the first tile sort's 91 steps wait at a
//    barrier (the samples' 2,048-key block sort waits at each of its 66).
//    Arrays of at most 256 keys (padded length under 512) take the
//    samples' one-step-a-barrier kernels (min(block, E / 2) threads); the
//    global passes run 256 threads a block (the pairs' four-step pass needs
//    72 registers a thread, too many for 1024);
//  - a global pass does up to four steps of a stage (strides j .. j/8) with
//    the 16 elements of each comparator group held in registers, so a stage
//    of s global steps reads and writes the data ceil(s/4) times, not s.
// For 2^24 u32 keys: 21 global passes, 11 tile merges and the first tile
// sort (33 launches), where the samples' design at block 1024 makes 91, 13 and 1 (at
// block 256: 120, 15 and 1).
#include <algorithm>
#include <memory>
#include <type_traits>

#include "core/cuda/buffer.cuh"
#include "sort/cuda/copy_out.cuh"
#include "sort/sort.hpp"

namespace pb::sort {
namespace {

int log2i(std::int64_t x) {
  int l = 0;
  while ((std::int64_t(1) << l) < x) ++l;
  return l;
}

template <class T>
__device__ __forceinline__ void cmpx(T& a, T& b, bool up) {
  if ((a > b) == up) {
    T t = a;
    a = b;
    b = t;
  }
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

// Steps j = E/2 .. 1 of stage k > E, block by block.
template <class T>
__global__ void bitonic_merge_shared(T* __restrict__ w, std::int64_t P, std::int64_t k, int E) {
  const std::int64_t base = std::int64_t(blockIdx.x) * E;
  T* s = load_block(w, base, E);
  const bool up = ((base & (P - 1)) & k) == 0;  // k > E: one direction per block
  for (int j = E / 2; j > 0; j >>= 1) {
    __syncthreads();
    for (int c = threadIdx.x; c < E / 2; c += blockDim.x) {
      const int i = 2 * c - (c & (j - 1));
      cmpx(s[i], s[i + j], up);
    }
  }
  store_block(w, base, s, E);
}

// Tiles of E >= 512 elements (a power of two, E <= P) are held in registers:
// E / 16 threads, 16 elements each; warp w owns the tile's elements
// [512 w, 512 (w + 1)), element 32 c + lane of them in its v[c]. So a step
// of stride j < 32 pairs a lane with lane ^ j (a shuffle), 32 <= j < 512
// pairs v[c] with v[c ^ j / 32] in the same thread (no communication), and
// only j >= 512 goes through shared memory (one exchange, two barriers).
constexpr int kRegs = 16, kWarpElems = 32 * kRegs;
// Bitonic's shared-memory tile: at most 64 KB of words (dynamic shared
// memory above the default 48 KB, opted into in prepare(); the kernels'
// launch bounds are for it); CUDA.Bitonic takes 32 KB, the same kernels at
// 512 threads (u32 keys), so two blocks share an SM and one tile's loads
// overlap the other's steps. At 2^24 u32 keys, block 256, the sort took
// 2.493 ms with 32 KB tiles, 2.495 with 16 KB and 2.728 with 64 KB (H100,
// results/nvidia-h100/issue20/radix-run1).
constexpr std::int64_t kTileBytes = 64 * 1024, kBitonicTile = 32 * 1024;

// Steps j0, j0 / 2, .. 1 of stage k on the tile's registers; gi0: the
// index, within its array, of the thread's element v[0].
template <class T>
__device__ __forceinline__ void register_steps(T (&v)[kRegs], T* s, std::int64_t gi0, std::int64_t k, int j0,
                                               int own0) {
  const int lane = threadIdx.x % 32;
  for (int j = j0; j >= kWarpElems; j >>= 1) {
    // Across warps: publish, read the partner, compute, wait before the
    // next step overwrites.
#pragma unroll
    for (int c = 0; c < kRegs; ++c) s[own0 + 32 * c] = v[c];
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kRegs; ++c) {
      const int i = own0 + 32 * c;
      const T other = s[i ^ j];
      const bool up = ((gi0 + 32 * c) & k) == 0, lower = (i & j) == 0;
      v[c] = (lower == up) ? (v[c] < other ? v[c] : other) : (v[c] < other ? other : v[c]);
    }
    __syncthreads();
  }
  // Within a thread: strides 256, 128, 64, 32 (those <= j0), v[c] with
  // v[c + J] for the c without bit J; J a constant, so v stays in registers.
  auto in_thread = [&](auto J) {
    constexpr int jc = decltype(J)::value;
#pragma unroll
    for (int c = 0; c < kRegs; ++c)
      if (!(c & jc)) cmpx(v[c], v[c | jc], ((gi0 + 32 * c) & k) == 0);
  };
  if (j0 >= 256) in_thread(std::integral_constant<int, 8>{});
  if (j0 >= 128) in_thread(std::integral_constant<int, 4>{});
  if (j0 >= 64) in_thread(std::integral_constant<int, 2>{});
  if (j0 >= 32) in_thread(std::integral_constant<int, 1>{});
  for (int j = j0 < 16 ? j0 : 16; j >= 1; j >>= 1) {
    const bool lower = (lane & j) == 0;
#pragma unroll
    for (int c = 0; c < kRegs; ++c) {
      const T other = __shfl_xor_sync(0xffffffffu, v[c], j);
      const bool up = ((gi0 + 32 * c) & k) == 0;
      v[c] = (lower == up) ? (v[c] < other ? v[c] : other) : (v[c] < other ? other : v[c]);
    }
  }
}

// MERGE false: stages k = 2 .. E of each tile (the first sort); true: steps
// E / 2 .. 1 of stage k > E.
template <class T, bool MERGE>
__global__ void __launch_bounds__(kTileBytes / sizeof(T) / kRegs)
    bitonic_tile(T* __restrict__ w, std::int64_t P, std::int64_t k, int E) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  const std::int64_t base = std::int64_t(blockIdx.x) * E;
  const int own0 = (threadIdx.x / 32) * kWarpElems + threadIdx.x % 32;  // tile index of v[0]
  const std::int64_t gi0 = (base & (P - 1)) + own0;
  T v[kRegs];
#pragma unroll
  for (int c = 0; c < kRegs; ++c) v[c] = w[base + own0 + 32 * c];
  if (MERGE) {
    register_steps(v, s, gi0, k, E / 2, own0);
  } else {
    for (std::int64_t kk = 2; kk <= E; kk <<= 1) register_steps(v, s, gi0, kk, int(kk / 2), own0);
  }
#pragma unroll
  for (int c = 0; c < kRegs; ++c) w[base + own0 + 32 * c] = v[c];
}

// LV steps (strides j, j/2, .. j/2^(LV-1)) of stage k in one pass: each thread
// owns the 2^LV elements those comparators connect.
template <class T, int LV>
__global__ void bitonic_global(T* __restrict__ w, std::int64_t total, std::int64_t P, std::int64_t k,
                               std::int64_t j) {
  constexpr int G = 1 << LV;
  const std::int64_t m = j >> (LV - 1);  // smallest stride
  const std::int64_t groups = total >> LV;
  for (std::int64_t g = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; g < groups;
       g += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t low = g & (m - 1), high = g / m;
    const std::int64_t base = high * (m << LV) + low;
    const bool up = ((base & (P - 1)) & k) == 0;
    T v[G];
#pragma unroll
    for (int c = 0; c < G; ++c) v[c] = w[base + c * m];
#pragma unroll
    for (int d = G / 2; d >= 1; d >>= 1)
#pragma unroll
      for (int c = 0; c < G; ++c)
        if (!(c & d)) cmpx(v[c], v[c + d], up);
#pragma unroll
    for (int c = 0; c < G; ++c) w[base + c * m] = v[c];
  }
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

unsigned grid_for(std::int64_t work, int block) {
  return unsigned(std::min<std::int64_t>((work + block - 1) / block, std::int64_t(1) << 30));
}

class CudaNetwork final : public Variant {
 public:
  CudaNetwork(int block, Merge merge) : block_(block), merge_(merge) {}
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
    // keys untimed. Every other case packs (orders, pads, pairs) inside the
    // timed run: that is part of this sort's work.
    in_place_ = !p.pairs() && p.key == Key::U32 && p.order == Order::Asc && P_ == p.length;
    keys_in_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    PB_CUDA(cudaMemcpy(keys_in_.get(), in.keys.data(), keys_in_.bytes(), cudaMemcpyHostToDevice));
    if (p.pairs()) {
      vals_in_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
      PB_CUDA(cudaMemcpy(vals_in_.get(), in.values.data(), vals_in_.bytes(), cudaMemcpyHostToDevice));
      vals_out_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
      w64_ = DeviceBuffer<std::uint64_t>(std::size_t(total_));
    } else {
      w32_ = DeviceBuffer<std::uint32_t>(std::size_t(total_));
    }
    if (!in_place_) keys_out_ = DeviceBuffer<std::uint32_t>(std::size_t(p.n));
    allow_tile(bitonic_sort_shared<std::uint32_t>);
    allow_tile(bitonic_sort_shared<std::uint64_t>);
    allow_tile(bitonic_merge_shared<std::uint32_t>);
    allow_tile(bitonic_merge_shared<std::uint64_t>);
    allow_tile(bitonic_tile<std::uint32_t, false>);
    allow_tile(bitonic_tile<std::uint64_t, false>);
    allow_tile(bitonic_tile<std::uint32_t, true>);
    allow_tile(bitonic_tile<std::uint64_t, true>);
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
      go(w64_.get());
    else
      go(w32_.get());
  }
  void result(Output& out) override {
    copy_out(p_, stream_.get(), in_place_ ? w32_.get() : keys_out_.get(), vals_out_.get(), out);
  }
  void* stream() override { return stream_.get(); }

 private:
  template <class Kernel>
  static void allow_tile(Kernel kernel) {
    PB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kTileBytes)));
  }
  template <class T>
  void go(T* w) {
    const cudaStream_t st = stream_.get();
    const std::int64_t P = P_, total = total_;
    if (!in_place_) {
      pack<T>
          <<<grid_for(total, 256), 256, 0, st>>>(keys_in_.get(), vals_in_.get(), w, p_.length, P, total, p_);
      PB_CUDA_LAUNCHED();
    }
    if (P > 1) {
      const std::int64_t S = std::min<std::int64_t>(2 * block_, P);
      const unsigned blocks = unsigned(total / S), threads = unsigned(S / 2);
      const std::size_t shm = std::size_t(S) * sizeof(T);
      if (merge_ == Merge::Bitonic) {
        const int E = int(std::min<std::int64_t>(kBitonicTile / std::int64_t(sizeof(T)), P));
        const unsigned tiles = unsigned(total / E);
        const std::size_t tile_shm = std::size_t(E) * sizeof(T);
        // Tiles of 512 or more elements in registers (E / 16 threads), smaller
        // ones (short arrays) one step a barrier in shared memory.
        const bool in_registers = E >= kWarpElems;
        const unsigned threads = unsigned(in_registers ? E / kRegs : std::min(block_, E / 2));
        if (in_registers)
          bitonic_tile<T, false><<<tiles, threads, tile_shm, st>>>(w, P, 0, E);
        else
          bitonic_sort_shared<T><<<tiles, threads, tile_shm, st>>>(w, P, E);
        PB_CUDA_LAUNCHED();
        for (std::int64_t k = 2 * std::int64_t(E); k <= P; k <<= 1) {
          for (std::int64_t j = k / 2; j >= E;) {
            const int lv = std::min(4, log2i(j) - log2i(E) + 1);
            if (lv == 4)
              bitonic_global<T, 4><<<grid_for(total >> 4, 256), 256, 0, st>>>(w, total, P, k, j);
            else if (lv == 3)
              bitonic_global<T, 3><<<grid_for(total >> 3, 256), 256, 0, st>>>(w, total, P, k, j);
            else if (lv == 2)
              bitonic_global<T, 2><<<grid_for(total >> 2, 256), 256, 0, st>>>(w, total, P, k, j);
            else
              bitonic_global<T, 1><<<grid_for(total >> 1, 256), 256, 0, st>>>(w, total, P, k, j);
            PB_CUDA_LAUNCHED();
            j >>= lv;
          }
          if (in_registers)
            bitonic_tile<T, true><<<tiles, threads, tile_shm, st>>>(w, P, k, E);
          else
            bitonic_merge_shared<T><<<tiles, threads, tile_shm, st>>>(w, P, k, E);
          PB_CUDA_LAUNCHED();
        }
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
    if (!in_place_) {
      unpack<T>
          <<<grid_for(p_.n, 256), 256, 0, st>>>(w, keys_out_.get(), vals_out_.get(), p_.length, P, p_.n, p_);
      PB_CUDA_LAUNCHED();
    }
  }

  int block_;
  Merge merge_;
  Problem p_;
  std::int64_t P_ = 1, total_ = 0;
  bool in_place_ = false;
  Stream stream_;
  DeviceBuffer<std::uint32_t> keys_in_, vals_in_, keys_out_, vals_out_, w32_;
  DeviceBuffer<std::uint64_t> w64_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_bitonic(int block) {
  return std::make_unique<CudaNetwork>(block, Merge::Bitonic);
}
std::unique_ptr<Variant> make_cuda_odd_even(int block) {
  return std::make_unique<CudaNetwork>(block, Merge::OddEven);
}

}  // namespace pb::sort
