// Our three GPU scans, each over any associative operator: a sum, or the
// segmented sum over (value, head) pairs, (a, b) -> (b.head ? b.v : a.v +
// b.v, a.head | b.head), which restarts at every head and is associative,
// so every scan below runs segmented unchanged.
//
// CUDA.HillisSteele and CUDA.Blelloch: the textbook scan-then-propagate
// hierarchy. A kernel scans tiles in shared memory and writes each tile's
// total; the totals are scanned the same way (recursively); a last pass adds
// each tile's prefix to its elements. Within a tile HillisSteele runs the
// step-efficient scan (log2 B steps, each adding the element `offset` back:
// n log n additions), Blelloch the work-efficient up-sweep / down-sweep
// (2n additions, padded against bank conflicts). Both move the data about
// twice (scan, then propagate).
//
// CUDA.LookBack: a single pass with decoupled look-back. Block b scans tile
// b (blocks start in index order, so every earlier tile has started, as CUB
// also assumes; an atomic tile counter measured no faster) in registers with
// warp shuffles (each lane's elements loaded as 16-byte vectors, coalesced),
// publishes its total, then finds its prefix
// by reading its predecessors' published words, 32 at a time, until one
// carries an inclusive prefix, and publishes its own. Each element is read
// and written once. A published word packs the value, the head bit, the
// state (total / prefix) and the run's epoch, so one 64-bit store publishes
// it and no reset pass is needed between runs: a word of another epoch reads
// as not yet published.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/host_device.hpp"
#include "scan/cuda/device_scan.cuh"

namespace pb::scan {
namespace {

// ---- the operators ---------------------------------------------------------
template <class T>
struct Sum {
  using V = T;
  static constexpr bool kSegmented = false;
  __device__ static V id() { return T(0); }
  __device__ static V op(V a, V b) { return a + b; }
  __device__ static V make(T x, bool) { return x; }
  __device__ static T value(V v) { return v; }
  __device__ static bool head(V) { return false; }
  __device__ static V shfl_up(V v, int d) { return __shfl_up_sync(0xffffffffu, v, d); }
  __device__ static V shfl_down(V v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
  __device__ static V shfl(V v, int lane) { return __shfl_sync(0xffffffffu, v, lane); }
};

template <class T>
struct SegV {
  T v;
  unsigned h;
};

template <class T>
struct Seg {
  using V = SegV<T>;
  static constexpr bool kSegmented = true;
  __device__ static V id() { return {T(0), 0u}; }
  __device__ static V op(V a, V b) { return {b.h ? b.v : a.v + b.v, a.h | b.h}; }
  __device__ static V make(T x, bool h) { return {x, h ? 1u : 0u}; }
  __device__ static T value(V v) { return v.v; }
  __device__ static bool head(V v) { return v.h != 0; }
  __device__ static V shfl_up(V v, int d) {
    return {__shfl_up_sync(0xffffffffu, v.v, d), __shfl_up_sync(0xffffffffu, v.h, d)};
  }
  __device__ static V shfl_down(V v, int d) {
    return {__shfl_down_sync(0xffffffffu, v.v, d), __shfl_down_sync(0xffffffffu, v.h, d)};
  }
  __device__ static V shfl(V v, int lane) {
    return {__shfl_sync(0xffffffffu, v.v, lane), __shfl_sync(0xffffffffu, v.h, lane)};
  }
};

// The scan's input: values and, segmented, keys.
template <class T>
struct Src {
  const T* x;
  const std::uint32_t* keys;  // nullptr: one segment
  std::int64_t n;
};

template <class Op, class T>
__device__ typename Op::V fetch(const Src<T>& s, std::int64_t i) {
  if (i >= s.n) return Op::id();
  const bool h = s.keys && (i == 0 || s.keys[i] != s.keys[i - 1]);
  return Op::make(s.x[i], h);
}

// ---- the hierarchy (HillisSteele, Blelloch) --------------------------------
constexpr int kHierThreads = 512;

enum class Method { HillisSteele, Blelloch };

template <Method M>
__host__ __device__ constexpr int tile_of() {
  return M == Method::HillisSteele ? kHierThreads : 2 * kHierThreads;
}

// Blelloch's padding: one slot every 32, so the tree's strided accesses fall
// in different banks.
__device__ inline int padded(int i) { return i + (i >> 5); }

// Scans one tile of `load(i)` (i in [0, n)) into `store(i, v)`, the tile's
// total into sums[block] and, for the first level, the first head's index
// in the tile into first_head[block] (the propagation needs it: the stored
// values no longer carry their head bits).
template <Method M, class Op, class Load, class Store>
__global__ void __launch_bounds__(kHierThreads)
    tile_scan(Load load, Store store, std::int64_t n, typename Op::V* sums, std::int64_t* first_head) {
  using V = typename Op::V;
  constexpr int kTile = tile_of<M>();
  __shared__ V buf[M == Method::HillisSteele ? 2 * kTile : kTile + kTile / 32 + 1];
  const int t = threadIdx.x;
  const std::int64_t base = std::int64_t(blockIdx.x) * kTile;
  if (M == Method::HillisSteele) {
    V v = load(base + t);
    int in = 0;
    buf[t] = v;
    for (int off = 1; off < kTile; off <<= 1) {
      __syncthreads();
      if (t >= off) v = Op::op(buf[in * kTile + t - off], v);
      in ^= 1;
      buf[in * kTile + t] = v;
    }
    if (base + t < n) store(base + t, v);
    if (t == kTile - 1) sums[blockIdx.x] = v;
  } else {
    const int a = t, b = t + kTile / 2;
    const V va = load(base + a), vb = load(base + b);
    buf[padded(a)] = va;
    buf[padded(b)] = vb;
    // Up-sweep: each pair's right slot takes the pair's total.
    int off = 1;
    for (int d = kTile >> 1; d > 0; d >>= 1, off <<= 1) {
      __syncthreads();
      if (t < d) {
        const int l = off * (2 * t + 1) - 1, r = off * (2 * t + 2) - 1;
        buf[padded(r)] = Op::op(buf[padded(l)], buf[padded(r)]);
      }
    }
    __syncthreads();
    if (t == 0) {
      sums[blockIdx.x] = buf[padded(kTile - 1)];
      buf[padded(kTile - 1)] = Op::id();
    }
    // Down-sweep: the left child takes its parent's prefix, the right child
    // the parent's prefix and the left subtree's total.
    for (int d = 1; d < kTile; d <<= 1) {
      off >>= 1;
      __syncthreads();
      if (t < d) {
        const int l = off * (2 * t + 1) - 1, r = off * (2 * t + 2) - 1;
        const V left = buf[padded(l)];
        buf[padded(l)] = buf[padded(r)];
        buf[padded(r)] = Op::op(buf[padded(r)], left);
      }
    }
    __syncthreads();
    // Exclusive to inclusive.
    if (base + a < n) store(base + a, Op::op(buf[padded(a)], va));
    if (base + b < n) store(base + b, Op::op(buf[padded(b)], vb));
  }
  if (first_head && Op::kSegmented) {
    __shared__ int first;
    if (t == 0) first = kTile;
    __syncthreads();
    for (int i = t; i < kTile; i += blockDim.x)
      if (base + i < n && Op::head(load(base + i))) atomicMin(&first, i);
    __syncthreads();
    if (t == 0) first_head[blockIdx.x] = base + first;
  }
}

// Adds the scanned tile totals to every tile but the first.
template <int kTile, class Op, class Load, class Store>
__global__ void propagate(Load load, Store store, std::int64_t n, const typename Op::V* prefix,
                          const std::int64_t* first_head) {
  const std::int64_t tile = std::int64_t(blockIdx.x) + 1;
  const typename Op::V before = prefix[tile - 1];
  for (int k = threadIdx.x; k < kTile; k += blockDim.x) {
    const std::int64_t i = tile * kTile + k;
    if (i >= n) return;
    if (first_head && Op::kSegmented && i >= first_head[tile]) continue;  // a head since the tile began
    store(i, Op::op(before, load(i)));
  }
}

// Loads and stores of the first level (the input's values, the output's) and
// of the levels above (the tiles' totals, in place).
template <class Op, class T>
struct FromInput {
  Src<T> s;
  __device__ typename Op::V operator()(std::int64_t i) const { return fetch<Op>(s, i); }
};
template <class Op, class T>
struct ToOutput {
  T* out;
  __device__ void operator()(std::int64_t i, typename Op::V v) const { out[i] = Op::value(v); }
};
template <class Op, class T>
struct FromOutput {  // the first level's propagation: a stored sum, its head bit ignored there
  const T* out;
  __device__ typename Op::V operator()(std::int64_t i) const { return Op::make(out[i], false); }
};
template <class Op>
struct Totals {
  typename Op::V* p;
  std::int64_t n;
  __device__ typename Op::V operator()(std::int64_t i) const { return i < n ? p[i] : Op::id(); }
  __device__ void operator()(std::int64_t i, typename Op::V v) const { p[i] = v; }
};

std::int64_t tiles(std::int64_t n, int tile) { return (n + tile - 1) / tile; }

template <Method M, class Op>
class Hierarchy {
 public:
  using V = typename Op::V;
  static constexpr int kTile = tile_of<M>();
  explicit Hierarchy(std::int64_t n) {
    for (std::int64_t m = tiles(n, kTile);; m = tiles(m, kTile)) {
      levels_.emplace_back(std::size_t(m));
      if (m == 1) break;
    }
  }
  template <class T>
  void run(const Src<T>& src, T* out, std::int64_t* first_head, cudaStream_t st) {
    const std::int64_t n = src.n, nt = tiles(n, kTile);
    tile_scan<M, Op><<<unsigned(nt), kHierThreads, 0, st>>>(FromInput<Op, T>{src}, ToOutput<Op, T>{out}, n,
                                                            levels_[0].get(), first_head);
    PB_CUDA_LAUNCHED();
    if (nt == 1) return;
    scan_totals(0, nt, st);
    propagate<kTile, Op><<<unsigned(nt - 1), 256, 0, st>>>(FromOutput<Op, T>{out}, ToOutput<Op, T>{out}, n,
                                                           levels_[0].get(), first_head);
    PB_CUDA_LAUNCHED();
  }

 private:
  // Scans level `l`'s m totals in place.
  void scan_totals(std::size_t l, std::int64_t m, cudaStream_t st) {
    const std::int64_t nt = tiles(m, kTile);
    Totals<Op> t{levels_[l].get(), m};
    tile_scan<M, Op><<<unsigned(nt), kHierThreads, 0, st>>>(t, t, m, levels_[l + 1].get(), nullptr);
    PB_CUDA_LAUNCHED();
    if (nt == 1) return;
    scan_totals(l + 1, nt, st);
    propagate<kTile, Op><<<unsigned(nt - 1), 256, 0, st>>>(t, t, m, levels_[l + 1].get(), nullptr);
    PB_CUDA_LAUNCHED();
  }
  std::vector<DeviceBuffer<V>> levels_;
};

// ---- the single pass (LookBack) --------------------------------------------
// A configuration: threads a block, 16-byte vectors a lane loads, whether
// loads and stores are marked as touched once (evict first), and the blocks
// an SM must hold (0: as the registers fall). Each operator runs the one
// measured fastest on an H100 (docs/perf/scan.md): whole scans 128 threads
// x 12 vectors, streaming; segmented ones, which also read keys, 256 x 8,
// streaming values, three blocks an SM (the float pair's 100 registers held
// two).
template <int Threads, int Chunks, bool Streaming, int MinBlocks = 0>
struct LbConfig {
  static constexpr int kThreads = Threads, kWarps = Threads / 32, kChunks = Chunks, kMinBlocks = MinBlocks;
  static constexpr int kTile = Threads * 4 * Chunks;
  static constexpr bool kStreaming = Streaming;
  static_assert(Chunks <= 16, "a lane's head bits are one 64-bit word");
};
template <class Op>
using LbConfigOf = std::conditional_t<Op::kSegmented, LbConfig<256, 8, true, 3>, LbConfig<128, 12, true>>;

// A published word: value bits 0-31, head bit 32, state bits 33-34 (1: the
// tile's total, 2: its inclusive prefix), the run's epoch above.
constexpr unsigned long long kTotal = 1ull << 33, kPrefix = 2ull << 33;
constexpr int kEpochShift = 35;

template <class T>
__device__ std::uint32_t bits_of(T v) {
  std::uint32_t b;
  memcpy(&b, &v, 4);
  return b;
}
template <class T>
__device__ T from_bits(std::uint32_t b) {
  T v;
  memcpy(&v, &b, 4);
  return v;
}

template <class Op, class T>
__device__ unsigned long long pack(typename Op::V v, unsigned long long state, unsigned long long epoch) {
  return (epoch << kEpochShift) | state | (Op::head(v) ? 1ull << 32 : 0ull) | bits_of(Op::value(v));
}

template <class Op, class T>
__device__ typename Op::V unpack(unsigned long long w) {
  return Op::make(from_bits<T>(std::uint32_t(w)), (w >> 32) & 1ull);
}

// A lane's chunks of src: chunk c's 4 words at wbase + c*128 + lane*4, 0
// past n. With `full` (a whole tile) there is no bounds test, so the
// compiler issues every load before any is used; otherwise each chunk tests
// its bounds, which keeps whole scans at the registers that hold 7 blocks
// an SM for f32 (docs/perf/scan.md).
template <bool kStreaming>
__device__ __forceinline__ void load4(const std::uint32_t* __restrict__ at, std::uint32_t (&r)[4]) {
  const uint4* p = reinterpret_cast<const uint4*>(at);
  const uint4 q = kStreaming ? __ldcs(p) : __ldg(p);
  r[0] = q.x, r[1] = q.y, r[2] = q.z, r[3] = q.w;
}
template <bool kStreaming, int kChunks>
__device__ __forceinline__ void load_lane(const std::uint32_t* __restrict__ src, std::int64_t wbase, int lane,
                                          std::int64_t n, bool full, std::uint32_t (&r)[kChunks][4]) {
  if (full) {
    PB_UNROLL
    for (int c = 0; c < kChunks; ++c) load4<kStreaming>(src + wbase + c * 128 + lane * 4, r[c]);
  } else {
    PB_UNROLL
    for (int c = 0; c < kChunks; ++c) {
      const std::int64_t i = wbase + c * 128 + lane * 4;
      if (i + 3 < n) {
        load4<kStreaming>(src + i, r[c]);
      } else {
        PB_UNROLL
        for (int j = 0; j < 4; ++j) r[c][j] = i + j < n ? src[i + j] : 0u;
      }
    }
  }
}

// Warp-wide inclusive scan over lanes.
template <class Op>
__device__ typename Op::V warp_scan(typename Op::V v, int lane) {
  for (int d = 1; d < 32; d <<= 1) {
    const typename Op::V o = Op::shfl_up(v, d);
    if (lane >= d) v = Op::op(o, v);
  }
  return v;
}

template <class Op, class T, class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    look_back(const T* __restrict__ x, const std::uint32_t* __restrict__ keys, T* __restrict__ out,
              std::int64_t n, unsigned long long* __restrict__ status, unsigned long long epoch) {
  using V = typename Op::V;
  constexpr int kLbWarps = C::kWarps, kLbChunks = C::kChunks, kLbTile = C::kTile;
  __shared__ V warp_total[kLbWarps];
  __shared__ V tile_prefix;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::int64_t tile = blockIdx.x;
  const std::int64_t wbase = tile * kLbTile + std::int64_t(warp) * (32 * 4 * kLbChunks);

  // Load: lane's chunk c covers [wbase + c*128 + lane*4, +4). A segmented
  // scan issues every load of a whole tile before the first is used: the
  // heads need the lane before's last key (a shuffle), and a shuffle or a
  // bounds test between a chunk's loads and the next's would wait out one
  // memory latency a chunk.
  const bool full = Op::kSegmented && (tile + 1) * kLbTile <= n;
  std::uint32_t v[kLbChunks][4];
  load_lane<C::kStreaming>(reinterpret_cast<const std::uint32_t*>(x), wbase, lane, n, full, v);
  std::uint64_t heads = 0;  // bit 4c+j: element (c, j) starts a segment
  if (Op::kSegmented) {
    std::uint32_t k[kLbChunks][4];
    load_lane<false>(keys, wbase, lane, n, full, k);
    // The key before the warp's first element (none before element 0).
    const std::uint32_t first_before = lane == 0 && wbase > 0 && wbase <= n ? __ldg(keys + wbase - 1) : 0u;
    PB_UNROLL
    for (int c = 0; c < kLbChunks; ++c) {
      const std::int64_t i = wbase + c * 128 + lane * 4;
      // The key before each lane's first: the lane before's last; lane 0's,
      // the chunk before's last lane's, or the one before the warp's.
      const std::uint32_t up = __shfl_up_sync(0xffffffffu, k[c][3], 1);
      const std::uint32_t last = __shfl_sync(0xffffffffu, k[c > 0 ? c - 1 : 0][3], 31);
      const std::uint32_t before = lane > 0 ? up : c > 0 ? last : first_before;
      PB_UNROLL
      for (int j = 0; j < 4; ++j) {
        const std::uint32_t p = j == 0 ? before : k[c][j - 1];
        if (i + j < n && (i + j == 0 || k[c][j] != p)) heads |= 1ull << (4 * c + j);
      }
    }
  }

  // Scan within the warp, chunk by chunk, carrying each chunk's total on.
  V carry = Op::id();
  std::uint64_t since_start = 0;  // bit 4c+j: a head between the warp's start and (c, j)
  for (int c = 0; c < kLbChunks; ++c) {
    V e[4];
    V acc = Op::id();
    for (int j = 0; j < 4; ++j) {
      e[j] = Op::op(acc, Op::make(from_bits<T>(v[c][j]), (heads >> (4 * c + j)) & 1ull));
      acc = e[j];
    }
    const V incl = warp_scan<Op>(acc, lane);
    V before = Op::shfl_up(incl, 1);
    before = lane == 0 ? carry : Op::op(carry, before);
    for (int j = 0; j < 4; ++j) {
      const V s = Op::op(before, e[j]);
      v[c][j] = bits_of(Op::value(s));
      if (Op::head(s)) since_start |= 1ull << (4 * c + j);
    }
    carry = Op::op(carry, Op::shfl(incl, 31));
  }
  if (lane == 0) warp_total[warp] = carry;
  __syncthreads();

  // Warp 0: the warps' prefixes, the tile's total, the look-back.
  if (warp == 0) {
    V w = lane < kLbWarps ? warp_total[lane] : Op::id();
    const V incl = warp_scan<Op>(w, lane);
    const V excl = Op::shfl_up(incl, 1);
    if (lane < kLbWarps) warp_total[lane] = lane == 0 ? Op::id() : excl;  // each warp's prefix in the tile
    const V total = Op::shfl(incl, kLbWarps - 1);
    volatile unsigned long long* vs = status;
    if (tile == 0) {
      if (lane == 0) vs[0] = pack<Op, T>(total, kPrefix, epoch);
      if (lane == 0) tile_prefix = Op::id();
    } else {
      if (lane == 0) vs[tile] = pack<Op, T>(total, kTotal, epoch);
      V prefix = Op::id();
      for (std::int64_t last = tile - 1;; last -= 32) {
        const std::int64_t j = last - lane;
        unsigned long long word = 0;
        bool ready;
        do {
          word = j >= 0 ? vs[j] : ((epoch << kEpochShift) | kPrefix);
          ready = (word >> kEpochShift) == epoch && (word & (kTotal | kPrefix));
        } while (!__all_sync(0xffffffffu, ready));
        const V got = j >= 0 ? unpack<Op, T>(word) : Op::id();
        // The nearest lane that ends the look-back: a prefix, or a total with a head in it.
        const unsigned stop_mask = __ballot_sync(0xffffffffu, (word & kPrefix) || Op::head(got));
        const int stop = stop_mask ? __ffs(stop_mask) - 1 : 31;
        // Lanes stop..0 in order, the farthest first: reduce toward lane 0.
        V r = lane <= stop ? got : Op::id();
        for (int d = 1; d < 32; d <<= 1) {
          const V o = Op::shfl_down(r, d);
          if (lane + d < 32) r = Op::op(o, r);
        }
        prefix = Op::op(Op::shfl(r, 0), prefix);
        if (stop_mask) break;
      }
      if (lane == 0) {
        vs[tile] = pack<Op, T>(Op::op(prefix, total), kPrefix, epoch);
        tile_prefix = prefix;
      }
    }
  }
  __syncthreads();

  // Each element: the tile's and the warp's prefixes, unless a head came first.
  const V before = Op::op(tile_prefix, warp_total[warp]);
  for (int c = 0; c < kLbChunks; ++c) {
    const std::int64_t i = wbase + c * 128 + lane * 4;
    std::uint32_t r[4];
    for (int j = 0; j < 4; ++j) {
      const bool restarted = (since_start >> (4 * c + j)) & 1ull;
      const T s = from_bits<T>(v[c][j]);
      r[j] = restarted ? v[c][j] : bits_of(Op::value(Op::op(before, Op::make(s, false))));
    }
    std::uint32_t* o = reinterpret_cast<std::uint32_t*>(out);
    if (i + 3 < n) {
      uint4* dst = reinterpret_cast<uint4*>(o + i);
      if (C::kStreaming)
        __stcs(dst, make_uint4(r[0], r[1], r[2], r[3]));
      else
        *dst = make_uint4(r[0], r[1], r[2], r[3]);
    } else {
      for (int j = 0; j < 4; ++j)
        if (i + j < n) o[i + j] = r[j];
    }
  }
}

// ---- the variants ------------------------------------------------------------
class GpuScan : public DeviceScan {
 public:
  void run() override {
    const std::uint32_t* keys = p_.segmented() ? keys_.get() : nullptr;
    if (p_.type == Type::U32)
      scan(Src<std::uint32_t>{in_.get(), keys, p_.n}, out_.get());
    else
      scan(Src<float>{reinterpret_cast<const float*>(in_.get()), keys, p_.n},
           reinterpret_cast<float*>(out_.get()));
  }

 protected:
  // The variant's scan of one element type, segmented where s.keys is set.
  virtual void scan(const Src<std::uint32_t>& s, std::uint32_t* y) = 0;
  virtual void scan(const Src<float>& s, float* y) = 0;
};

template <Method M>
class HierScan final : public GpuScan {
  void setup() override {
    first_head_ = DeviceBuffer<std::int64_t>(std::size_t(tiles(p_.n, tile_of<M>())));
    u32_.reset(), f32_.reset(), su32_.reset(), sf32_.reset();
    if (p_.type == Type::U32)
      p_.segmented() ? su32_.reset(new Hierarchy<M, Seg<std::uint32_t>>(p_.n))
                     : u32_.reset(new Hierarchy<M, Sum<std::uint32_t>>(p_.n));
    else
      p_.segmented() ? sf32_.reset(new Hierarchy<M, Seg<float>>(p_.n))
                     : f32_.reset(new Hierarchy<M, Sum<float>>(p_.n));
  }
  void scan(const Src<std::uint32_t>& s, std::uint32_t* y) override {
    s.keys ? su32_->run(s, y, first_head_.get(), stream_.get()) : u32_->run(s, y, nullptr, stream_.get());
  }
  void scan(const Src<float>& s, float* y) override {
    s.keys ? sf32_->run(s, y, first_head_.get(), stream_.get()) : f32_->run(s, y, nullptr, stream_.get());
  }
  DeviceBuffer<std::int64_t> first_head_;
  std::unique_ptr<Hierarchy<M, Sum<std::uint32_t>>> u32_;
  std::unique_ptr<Hierarchy<M, Sum<float>>> f32_;
  std::unique_ptr<Hierarchy<M, Seg<std::uint32_t>>> su32_;
  std::unique_ptr<Hierarchy<M, Seg<float>>> sf32_;
};

class LookBackScan final : public GpuScan {
  void setup() override {
    const int tile = p_.segmented() ? LbConfigOf<Seg<float>>::kTile : LbConfigOf<Sum<float>>::kTile;
    tiles_ = tiles(p_.n, tile);
    status_ = DeviceBuffer<unsigned long long>(std::size_t(tiles_));
    PB_CUDA(cudaMemset(status_.get(), 0, status_.bytes()));
    runs_ = 0;
  }
  template <class Op, class T>
  void launch(const Src<T>& s, T* y) {
    using C = LbConfigOf<Op>;
    // Epochs start at 1: the zeroed words read as another epoch's.
    const unsigned long long epoch = (runs_ % ((1ull << (64 - kEpochShift)) - 1)) + 1;
    look_back<Op, T, C>
        <<<unsigned(tiles_), C::kThreads, 0, stream_.get()>>>(s.x, s.keys, y, s.n, status_.get(), epoch);
    PB_CUDA_LAUNCHED();
    ++runs_;
  }
  void scan(const Src<std::uint32_t>& s, std::uint32_t* y) override {
    s.keys ? launch<Seg<std::uint32_t>>(s, y) : launch<Sum<std::uint32_t>>(s, y);
  }
  void scan(const Src<float>& s, float* y) override {
    s.keys ? launch<Seg<float>>(s, y) : launch<Sum<float>>(s, y);
  }
  std::int64_t tiles_ = 0;
  unsigned long long runs_ = 0;
  DeviceBuffer<unsigned long long> status_;
};

}  // namespace

std::unique_ptr<Variant> make_hillis_steele() { return std::make_unique<HierScan<Method::HillisSteele>>(); }
std::unique_ptr<Variant> make_blelloch() { return std::make_unique<HierScan<Method::Blelloch>>(); }
std::unique_ptr<Variant> make_look_back() { return std::make_unique<LookBackScan>(); }

}  // namespace pb::scan
