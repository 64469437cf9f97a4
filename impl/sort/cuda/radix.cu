// CUDA.Radix: an LSD radix sort written here, one array of u32 or f32 keys
// (and u32 values), stable, both orders; the single-pass-per-digit design
// with decoupled look-back (Merrill and Garland's "Onesweep").
//
// Keys are sorted on t(key): u32 as is, f32 through ord_f32 (IEEE order, -0.0
// and +0.0 one key), complemented for descending, 8 bits a digit, 4 digits;
// one kernel per key type and order, so t costs nothing for u32 ascending.
//  1. histogram (one kernel): every key once (16-byte loads), all 4 digits'
//     256-bin counts at once (shared-memory counters, a copy a lane so a
//     warp's atomics never share a bank; then one global add a bin a
//     block); reads 4n bytes. A 4 x 256 exclusive scan turns them into each
//     digit value's first output position.
//  2. one scatter kernel a digit: a block takes the next tile of 7680 keys
//     (20 a thread, 384 threads) from an atomic counter, so tiles start in
//     order, and
//     - counts its keys by the digit (a shared histogram a warp) and
//       publishes the 256 counts for later tiles' look-back before it ranks,
//       so a later tile's walk finds them instead of waiting;
//     - ranks its keys by the digit, stable: warp by warp, 32 keys a round
//       in input order; 8 ballots (one a digit bit) give each lane its
//       peers, the lowest of them adds their count to the warp's running
//       place of the digit and shuffles the old place to them; that place
//       plus the lower peers is the key's place in the tile, where it goes
//       at once (shared memory, in digit order);
//     - looks back over earlier tiles' words (a tile that has its inclusive
//       prefix ends the walk) for its exclusive prefix a digit, then
//       publishes its own inclusive prefix;
//     - writes the tile out in digit order, so each digit's run (about 30
//       keys) goes to consecutive addresses, not one scattered word a key.
//     Reads 4n bytes and writes 4n (pairs: 8n and 8n); the look-back words
//     are 1 KB a tile (about 0.13 bytes a key), zeroed once a sort.
// So a sort moves 4n + 4 x 8n = 36n bytes (keys only; pairs 68n) against
// the 8n of reading and writing the keys once: the floor of an LSD sort
// with 8-bit digits is those 36n.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "core/cuda/buffer.cuh"
#include "core/gpu.hpp"
#include "sort/cuda/copy_out.cuh"
#include "sort/sort.hpp"

namespace pb::sort {
namespace {

constexpr int BITS = 8, RADIX = 256, PASSES = 4;
// The scatter kernel's shape: 384 threads a block, 20 keys a thread, three
// blocks an SM (56 registers; 43 KiB of shared memory a block with its
// static arrays, pairs 73 KiB).
// The ranking takes its peers from ballots and its running place from one
// atomic of a digit's leader, not from shared-memory masks: the shared-memory
// pipe is what bounds it, and this leaves it about half the accesses. 20
// keys a thread is the most with no spill in any keys-only kernel (u32 or
// f32). The counts taken before the ranking let the look-back start from
// published counts.
// Measurements behind these choices: docs/perf/sort-radix.md.
constexpr int THREADS = 384, ITEMS = 20, MIN_BLOCKS = 3, WARPS = THREADS / 32, TILE = THREADS * ITEMS;
static_assert(THREADS >= RADIX, "a thread a digit in the look-back and the scan");
// Look-back words: 0 = nothing yet; bit 31 set = inclusive prefix (the
// count in bits 0-30, up to 2^31 - 1); else the tile's own count + 1.
constexpr std::uint32_t kPrefix = 0x80000000u;

// The order keys sort on, fixed at compile time (one kernel a key type and
// order, so the per-key work of u32 ascending is a shift and a mask).
template <bool F32, bool DESC>
struct Ordered {
  __device__ __forceinline__ static std::uint32_t of(std::uint32_t bits) {
    const std::uint32_t t = F32 ? ord_f32(bits) : bits;  // -0.0 is +0.0
    return DESC ? ~t : t;
  }
};

// The histogram's shared counters: a copy a lane (h[p][bin][lane]), so the
// 32 atomics of a warp always hit 32 banks (one counter a pass and bin had
// random keys collide about 3.5-way); 128 KB, one 1024-thread block an SM.
constexpr int HIST_THREADS = 1024;
constexpr std::size_t hist_shared() { return std::size_t(PASSES) * RADIX * 32 * sizeof(std::uint32_t); }

template <class Ord>
__global__ void __launch_bounds__(HIST_THREADS, 1)
    histogram_kernel(const std::uint32_t* __restrict__ keys, std::int64_t n,
                     std::uint32_t* __restrict__ hist /* PASSES x RADIX */) {
  extern __shared__ std::uint32_t h[];  // [PASSES][RADIX][32]
  for (int i = threadIdx.x; i < PASSES * RADIX * 32; i += blockDim.x) h[i] = 0;
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  auto count = [&](std::uint32_t key) {
    const std::uint32_t t = Ord::of(key);
#pragma unroll
    for (int p = 0; p < PASSES; ++p)
      atomicAdd(&h[(p * RADIX + ((t >> (BITS * p)) & (RADIX - 1))) * 32 + lane], 1u);
  };
  // 16-byte loads (a device allocation is aligned), two in flight a thread,
  // then the last n % 4 keys.
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x,
                     first = std::int64_t(blockIdx.x) * blockDim.x;
  const uint4* keys4 = reinterpret_cast<const uint4*>(keys);
  const std::int64_t n4 = n / 4;
  std::int64_t i = first + threadIdx.x;
  for (; i + stride < n4; i += 2 * stride) {
    const uint4 a = keys4[i], b = keys4[i + stride];
    count(a.x), count(a.y), count(a.z), count(a.w);
    count(b.x), count(b.y), count(b.z), count(b.w);
  }
  if (i < n4) {
    const uint4 a = keys4[i];
    count(a.x), count(a.y), count(a.z), count(a.w);
  }
  for (std::int64_t j = n4 * 4 + first + threadIdx.x; j < n; j += stride) count(keys[j]);
  __syncthreads();
  // A (pass, bin) a thread: its 32 copies, read from a rotating start so the
  // warp's reads hit 32 banks.
  for (int pb = threadIdx.x; pb < PASSES * RADIX; pb += blockDim.x) {
    std::uint32_t sum = 0;
    for (int c = 0; c < 32; ++c) sum += h[pb * 32 + ((c + lane) & 31)];
    if (sum) atomicAdd(hist + pb, sum);
  }
}

// hist[p][d] -> the first output position of digit value d in pass p.
__global__ void scan_kernel(std::uint32_t* hist) {
  __shared__ std::uint32_t s[RADIX];
  std::uint32_t* h = hist + blockIdx.x * RADIX;
  const int d = threadIdx.x;
  s[d] = h[d];
  __syncthreads();
  for (int off = 1; off < RADIX; off <<= 1) {  // inclusive Hillis-Steele scan
    const std::uint32_t v = d >= off ? s[d - off] : 0;
    __syncthreads();
    s[d] += v;
    __syncthreads();
  }
  h[d] = d ? s[d - 1] : 0;
}

// Decoupled look-back, in two halves. publish: the tile's own count of
// digit d, for later tiles' walks (tile 0 has its inclusive prefix at once).
__device__ __forceinline__ void publish_count(std::uint32_t* status, std::uint32_t tile, int d,
                                              std::uint32_t count) {
  atomicExch(status + std::size_t(tile) * RADIX + d, tile == 0 ? (kPrefix | count) : count + 1);
}
// walk: the sum of the counts of digit d in tiles before `tile`, back to the
// first that has its inclusive prefix; then `tile` publishes its own.
__device__ __forceinline__ std::uint32_t look_back(std::uint32_t* status, std::uint32_t tile, int d,
                                                   std::uint32_t count) {
  if (tile == 0) return 0;
  std::uint32_t prefix = 0;
  for (std::int64_t j = std::int64_t(tile) - 1;; --j) {
    const std::uint32_t* theirs = status + std::size_t(j) * RADIX + d;
    std::uint32_t v;
    do {
      v = *reinterpret_cast<const volatile std::uint32_t*>(theirs);
    } while (v == 0);
    if (v & kPrefix) {
      prefix += v & ~kPrefix;
      break;
    }
    prefix += v - 1;
  }
  atomicExch(status + std::size_t(tile) * RADIX + d, kPrefix | (prefix + count));
  return prefix;
}

// Inclusive scan of v over a warp's lanes.
__device__ __forceinline__ std::uint32_t warp_inclusive_scan(std::uint32_t v, int lane) {
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const std::uint32_t u = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off) v += u;
  }
  return v;
}

// The lanes of the warp whose digit d equals this lane's: the AND, over the
// digit's 8 bits, of the ballot of the lanes whose bit is set, inverted
// where this lane's bit is clear. Each bit is a vote and a predicated NOT
// (ptxas turns the 8 bit tests into one register-to-predicates move).
__device__ __forceinline__ unsigned peers_of(unsigned d) {
  unsigned peers = 0xffffffffu;
#pragma unroll
  for (int b = 0; b < BITS; ++b) {
    unsigned m;
    asm("{\n\t.reg .pred p;\n\t"
        "and.b32 %0, %1, %2;\n\t"
        "setp.ne.u32 p, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
        "@!p not.b32 %0, %0;\n\t}"
        : "=r"(m)
        : "r"(d), "r"(1u << b));
    peers &= m;
  }
  return peers;
}

// Dynamic shared memory of the scatter kernel: the warps' counts a digit,
// then their running places (WARPS x RADIX); the tile's keys in digit order
// (TILE); the values in digit order (pairs: TILE). Three blocks of pairs,
// with the static arrays and the 1 KB a block the driver keeps, take 222
// of an SM's 228 KB.
template <bool PAIRS>
constexpr std::size_t scatter_shared() {
  return std::size_t(WARPS * RADIX + TILE + (PAIRS ? TILE : 0)) * sizeof(std::uint32_t);
}

template <bool PAIRS, class Ord>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    scatter_kernel(const std::uint32_t* __restrict__ kin, std::uint32_t* __restrict__ kout,
                   const std::uint32_t* __restrict__ vin, std::uint32_t* __restrict__ vout, std::int64_t n,
                   int shift, const std::uint32_t* __restrict__ first /* RADIX */,
                   std::uint32_t* status /* tiles x RADIX */, std::uint32_t* counter) {
  extern __shared__ std::uint32_t shared[];
  std::uint32_t(*warp_count)[RADIX] = reinterpret_cast<std::uint32_t(*)[RADIX]>(shared);
  std::uint32_t* kstage = shared + WARPS * RADIX;  // the tile's keys in digit order
  std::uint32_t* vstage = kstage + TILE;           // pairs: the values in digit order
  __shared__ std::uint32_t out_base[RADIX];        // output position of the tile's place 0 of the digit
  __shared__ std::uint32_t warp_total[RADIX / 32];
  __shared__ std::uint32_t tile_s;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < WARPS * RADIX; i += THREADS) shared[i] = 0;
  if (threadIdx.x == 0) tile_s = atomicAdd(counter, 1u);
  __syncthreads();
  const std::uint32_t tile = tile_s;
  const std::int64_t tile0 = std::int64_t(tile) * TILE;
  const int tile_n = int(n - tile0 < TILE ? n - tile0 : TILE);
  const bool full = tile_n == TILE;  // every key of the tile in range (all tiles but the last)
  kin += tile0;
  if (PAIRS) vin += tile0;
  auto digit = [shift](std::uint32_t k) { return (Ord::of(k) >> shift) & (RADIX - 1); };

  // Warp w's keys are the tile's [w * 32 ITEMS, (w + 1) * 32 ITEMS), round
  // i lane l holding key i * 32 + l of them: input order is (round, lane).
  const int first_of_warp = warp * 32 * ITEMS + lane;
  std::uint32_t key[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int at = first_of_warp + i * 32;
    key[i] = at < tile_n ? kin[at] : 0u;
  }
  // The counts first, so the tile publishes them before it ranks: a later
  // tile's walk then finds them instead of waiting for this tile's ranking.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    if (full || first_of_warp + i * 32 < tile_n) atomicAdd(&warp_count[warp][digit(key[i])], 1u);
  __syncthreads();

  // A digit a thread: the tile's count, published; the scan of the counts
  // within each warp of digits (incl, warp_total); then the digit's first
  // place in the tile (dstart) and each warp's, which the ranking advances.
  std::uint32_t count = 0, incl = 0, dstart = 0;
  if (threadIdx.x < RADIX) {
    const int d = threadIdx.x;
    for (int w = 0; w < WARPS; ++w) count += warp_count[w][d];
    publish_count(status, tile, d, count);
    incl = warp_inclusive_scan(count, lane);
    if (lane == 31) warp_total[warp] = incl;
  }
  __syncthreads();
  if (threadIdx.x < RADIX) {
    const int d = threadIdx.x;
    std::uint32_t start = incl - count;
    for (int w = 0; w < warp; ++w) start += warp_total[w];
    dstart = start;
    for (int w = 0; w < WARPS; ++w) {
      const std::uint32_t c = warp_count[w][d];
      warp_count[w][d] = start;
      start += c;
    }
  }
  __syncthreads();

  // Ranks, stable, a round of 32 keys at a time: each lane finds its peers
  // (the lanes of the round holding its digit); the lowest peer (the leader)
  // adds their count to the warp's running place of the digit with a shared
  // atomic, and a shuffle hands the old place to the peers; a key's place in
  // the tile is that plus its lower peers, and the key goes there at once.
  // The shuffle waits for the atomic, so the next round's leader of the same
  // digit adds after this one: the places keep input order.
  const unsigned lower = (1u << lane) - 1u;
  std::uint32_t place[PAIRS ? ITEMS : 1];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const bool ok = full || first_of_warp + i * 32 < tile_n;
    const unsigned d = digit(key[i]);
    unsigned peers = peers_of(d);
    if (!full) peers &= __ballot_sync(0xffffffffu, ok);
    std::uint32_t before = 0;
    if (ok && (peers & lower) == 0) before = atomicAdd(&warp_count[warp][d], unsigned(__popc(peers)));
    before = __shfl_sync(0xffffffffu, before, __ffs(peers) - 1);
    const std::uint32_t at = before + __popc(peers & lower);
    if (ok) kstage[at] = key[i];
    if constexpr (PAIRS) place[i] = at;
  }
  if constexpr (PAIRS) {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int at = first_of_warp + i * 32;
      if (at < tile_n) vstage[place[i]] = vin[at];
    }
  }

  // The walk for the tile's prefix a digit, after the ranking, when earlier
  // tiles have mostly published theirs.
  if (threadIdx.x < RADIX) {
    const int d = threadIdx.x;
    out_base[d] = first[d] + look_back(status, tile, d, count) - dstart;  // + a place = the output position
  }
  __syncthreads();
  // Out in place order: runs of a digit (about TILE / RADIX keys) go to
  // consecutive addresses.
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int at = threadIdx.x + i * THREADS;
    if (at < tile_n) {
      const std::uint32_t k = kstage[at];
      const std::uint32_t pos = out_base[digit(k)] + at;
      kout[pos] = k;
      if (PAIRS) vout[pos] = vstage[at];
    }
  }
}

class CudaRadix final : public Variant {
 public:
  Support supports(const Problem& p) const override {
    if (p.batch() != 1)
      return Support::no("sorts one array (length = total); batches are the networks' axis");
    if (p.n >= (std::int64_t(1) << 31))
      return Support::no("look-back words hold a prefix in 31 bits: at most 2^31 - 1 keys");
    const GpuStatus& gpu = gpu_status();
    if (!gpu.available) return Support::no(gpu.reason);
    if (gpu.shared_optin_bytes < hist_shared())
      return Support::no("the histogram's counters need " + std::to_string(hist_shared()) +
                         " bytes of shared memory a block; this GPU allows " +
                         std::to_string(gpu.shared_optin_bytes));
    return Support::yes();
  }
  bool stable() const override { return true; }
  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p;
    const auto n = std::size_t(p.n);
    keys_in_ = DeviceBuffer<std::uint32_t>(n), keys_ = DeviceBuffer<std::uint32_t>(n);
    keys_tmp_ = DeviceBuffer<std::uint32_t>(n);
    PB_CUDA(cudaMemcpy(keys_in_.get(), in.keys.data(), keys_in_.bytes(), cudaMemcpyHostToDevice));
    if (p.pairs()) {
      vals_in_ = DeviceBuffer<std::uint32_t>(n), vals_ = DeviceBuffer<std::uint32_t>(n);
      vals_tmp_ = DeviceBuffer<std::uint32_t>(n);
      PB_CUDA(cudaMemcpy(vals_in_.get(), in.values.data(), vals_in_.bytes(), cudaMemcpyHostToDevice));
    }
    tiles_ = (p.n + TILE - 1) / TILE;
    // hist (PASSES x RADIX), tile counters (PASSES), look-back words (PASSES x tiles x RADIX)
    work_ = DeviceBuffer<std::uint32_t>(std::size_t(PASSES * RADIX + PASSES) +
                                        std::size_t(PASSES * tiles_ * RADIX));
    with_order([](auto ord) {
      using Ord = decltype(ord);
      PB_CUDA(cudaFuncSetAttribute(histogram_kernel<Ord>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(hist_shared())));
      PB_CUDA(cudaFuncSetAttribute(scatter_kernel<false, Ord>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(scatter_shared<false>())));
      PB_CUDA(cudaFuncSetAttribute(scatter_kernel<true, Ord>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(scatter_shared<true>())));
    });
    // A copy from pageable memory may return before its data lands; the
    // variant's non-blocking stream is not ordered after it.
    PB_CUDA(cudaDeviceSynchronize());
  }
  void reset() override {}
  void run() override {
    with_order([this](auto ord) { run_sort<decltype(ord)>(); });
  }
  void result(Output& out) override { copy_out(p_, stream_.get(), keys_.get(), vals_.get(), out); }
  void* stream() override { return stream_.get(); }

 private:
  // f(Ordered<F32, DESC>{}) for this problem's key type and order.
  template <class F>
  void with_order(F&& f) const {
    const bool f32 = p_.key == Key::F32, desc = p_.order == Order::Desc;
    if (f32)
      desc ? f(Ordered<true, true>{}) : f(Ordered<true, false>{});
    else
      desc ? f(Ordered<false, true>{}) : f(Ordered<false, false>{});
  }
  template <class Ord>
  void run_sort() {
    const auto st = stream_.get();
    std::uint32_t* hist = work_.get();
    std::uint32_t* counters = hist + PASSES * RADIX;
    std::uint32_t* status = counters + PASSES;
    PB_CUDA(cudaMemsetAsync(work_.get(), 0, work_.bytes(), st));
    const int blocks = int(std::min<std::int64_t>((p_.n + 8 * HIST_THREADS - 1) / (8 * HIST_THREADS),
                                                  std::max(gpu_status().sm_count, 1)));
    histogram_kernel<Ord><<<blocks, HIST_THREADS, hist_shared(), st>>>(keys_in_.get(), p_.n, hist);
    PB_CUDA_LAUNCHED();
    scan_kernel<<<PASSES, RADIX, 0, st>>>(hist);
    PB_CUDA_LAUNCHED();
    // in -> tmp -> out -> tmp -> out: the input stays for the next run.
    const std::uint32_t* kin = keys_in_.get();
    const std::uint32_t* vin = vals_in_.get();
    for (int pass = 0; pass < PASSES; ++pass) {
      std::uint32_t* kout = pass % 2 == 0 ? keys_tmp_.get() : keys_.get();
      std::uint32_t* vout = pass % 2 == 0 ? vals_tmp_.get() : vals_.get();
      auto* words = status + std::size_t(pass) * tiles_ * RADIX;
      if (p_.pairs())
        scatter_kernel<true, Ord><<<unsigned(tiles_), THREADS, scatter_shared<true>(), st>>>(
            kin, kout, vin, vout, p_.n, BITS * pass, hist + pass * RADIX, words, counters + pass);
      else
        scatter_kernel<false, Ord><<<unsigned(tiles_), THREADS, scatter_shared<false>(), st>>>(
            kin, kout, nullptr, nullptr, p_.n, BITS * pass, hist + pass * RADIX, words, counters + pass);
      PB_CUDA_LAUNCHED();
      kin = kout, vin = vout;
    }
  }

  Problem p_;
  Stream stream_;
  std::int64_t tiles_ = 0;
  DeviceBuffer<std::uint32_t> keys_in_, vals_in_, keys_, vals_, keys_tmp_, vals_tmp_, work_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_radix() { return std::make_unique<CudaRadix>(); }

}  // namespace pb::sort
