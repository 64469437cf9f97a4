// CUDA.OneRead: an iteration that reads the points once, for the narrow
// shapes (D <= 32) where k-means is bound by memory, not by distances.
//
// Relative to CUDA.AllGPU:
//  - One pass over the points does the assignment and the partial sums. A
//    thread holds its point's coordinates in registers (up to 32 of them, the
//    kernel instantiated for 4, 8, 16 and 32), so each coordinate is read
//    from memory once and used for every distance and for the sums. AllGPU
//    staged a tile in shared memory and had each sum element scan the tile,
//    K*D predicated adds a point.
//  - Distances in the expanded form |c|^2 - 2 x.c (|x|^2 is added only for
//    the inertia): one FMA a coordinate and centroid instead of a subtract
//    and an FMA. Like CUDA.GEMM, the rounding differs from the direct form's
//    only for near-ties.
//  - Partial sums without atomics: the lanes of a warp that chose the same
//    cluster find each other (__match_any_sync), the lowest of them gathers
//    their coordinates by shuffles and adds them to its warp's own K x (D+1)
//    table in shared memory (counts in the last column). Each warp's table is
//    its own, so the adds are plain; only when K*D leaves no room for a table
//    a warp do warps share tables, with shared-memory atomics.
//  - Each block writes its summed tables to its own slot of a partials
//    buffer (no global atomics at all), its changed-point count and inertia
//    beside them. A second kernel, a block per cluster, sums that cluster's
//    slots over the blocks in a fixed order, forms the new centroid and its
//    move; the last of its blocks to finish (a ticket counter) takes the
//    largest move, the changed count and the inertia, runs the exit test and
//    writes the run's state on the device.
//  - No host round trip an iteration: both kernels begin by reading that
//    state and return at once once the run has stopped, so the host queues
//    iterations ahead (a fixed-loop run all at once; a converging run 4, then
//    8, ... at a time) and reads the 40-byte state once a batch.
// With a table a warp (every shape the issue measures), the sums are formed
// in a fixed order, so a run's centroids and inertia are the same from run to
// run (AllGPU's global atomics are not); shared tables add in any order.
//
// Bytes an iteration: the points once (N*D*8), the assignment read and, for
// points that move, written (4 to 8 a point), and grid * K * (D+1) * 8 of
// partials written and read (under a megabyte at N = 4,000,000, D = K = 16).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {
namespace {

// The run's state, written by the last block of each update.
struct State {
  unsigned long long changed;
  double move;
  double inertia;
  int iterations;
  int stop;
  unsigned done;  // update blocks finished this iteration; the last one resets it
  unsigned pad;
};

constexpr int kMaxD = 32;
constexpr int kUpdateThreads = 512;
constexpr unsigned kFull = 0xffffffffu;

// A centroid's row in shared memory: D rounded up to even (the pad is 0), so
// the distance loop reads two coordinates with one 16-byte load.
__host__ __device__ inline std::int64_t padded(std::int64_t d) { return (d + 1) & ~std::int64_t(1); }

// Shared memory of the pass: centroids K x padded(D), their squared norms,
// `copies` sum tables K x (D+1), and two slots a warp for the block's reductions.
std::size_t pass_bytes(std::int64_t k, std::int64_t d, std::int64_t copies, int warps) {
  return std::size_t(k * padded(d) + k + copies * k * (d + 1) + 2 * std::int64_t(warps)) * sizeof(double);
}

__device__ __forceinline__ double warp_sum(double v) {
  for (int off = 16; off; off >>= 1) v += __shfl_down_sync(kFull, v, off);
  return v;
}

// Assignment and partial sums of every point, a warp taking 32 consecutive
// points at a time (coordinate-major points xs, D x N, so each coordinate's
// load is coalesced). Writes this block's K x (D+1) sums and counts, its
// changed-point count and its inertia to its slots.
template <int DMAX>
__global__ void one_pass(const double* __restrict__ xs, const double* __restrict__ C,
                         int* __restrict__ assign, double* __restrict__ part,
                         unsigned long long* __restrict__ changed_part, double* __restrict__ inertia_part,
                         const State* __restrict__ st, std::int64_t n, int d, int k, int copies) {
  if (st->stop) return;
  extern __shared__ __align__(16) double sm[];
  const int P = blockDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = P >> 5;
  const int row = d + 1, dp = int(padded(d));
  const std::int64_t table = std::int64_t(k) * row;
  double* cs = sm;                    // K x dp centroids, the pad 0
  double* cn = cs + k * dp;           // K squared norms
  double* ws = cn + k;                // copies x K x (D+1) sums and counts
  double* red = ws + copies * table;  // 2 x warps
  for (int j = tid; j < k * dp; j += P) {
    const int c = j / dp, t = j - c * dp;
    cs[j] = t < d ? C[std::int64_t(c) * d + t] : 0.0;
  }
  for (std::int64_t j = tid; j < copies * table; j += P) ws[j] = 0;
  __syncthreads();
  for (int c = tid; c < k; c += P) {
    double s = 0;
    for (int t = 0; t < d; ++t) s = fma(cs[c * dp + t], cs[c * dp + t], s);
    cn[c] = s;
  }
  __syncthreads();

  double* mine = ws + std::int64_t(warp % copies) * table;
  const bool own_table = copies == warps;
  unsigned changed = 0;
  double inertia = 0;
  const std::int64_t stride = std::int64_t(gridDim.x) * P;
  // base is the same for the whole warp, so the loop and the *_sync calls in it are warp-uniform.
  for (std::int64_t base = std::int64_t(blockIdx.x) * P + warp * 32; base < n; base += stride) {
    const std::int64_t i = base + lane;
    const bool valid = i < n;
    double x[DMAX];
    double xx = 0;
#pragma unroll
    for (int t = 0; t < DMAX; ++t) {
      x[t] = (valid && t < d) ? __ldg(xs + std::int64_t(t) * n + i) : 0.0;
      xx = fma(x[t], x[t], xx);
    }
    int b = -1;
    if (valid) {
      double bd = 0;
      for (int c = 0; c < k; ++c) {
        const double2* cc = reinterpret_cast<const double2*>(cs + c * dp);
        double even = 0, odd = 0;  // two chains of FMAs, not one
#pragma unroll
        for (int t = 0; t < DMAX; t += 2)
          if (t < dp) {
            const double2 v = cc[t / 2];  // broadcast: every lane reads the same centroid
            even = fma(x[t], v.x, even);
            odd = fma(x[t + 1], v.y, odd);
          }
        const double v = fma(-2.0, even + odd, cn[c]);  // the squared distance less |x|^2
        if (b < 0 || v < bd) bd = v, b = c;             // ties to the lowest index
      }
      inertia += xx + bd;
      if (assign[i] != b) assign[i] = b, ++changed;
    }
    // The lanes with the same cluster (invalid lanes: cluster -1) and their
    // lowest lane, which gathers the others' coordinates in lane order.
    const unsigned peers = __match_any_sync(kFull, b);
    const int leader = __ffs(peers) - 1;
    if (peers == kFull) {
      // The whole warp in one cluster (K = 1, or clustered data in order): a
      // butterfly sum, 5 rounds, not 31.
#pragma unroll
      for (int t = 0; t < DMAX; ++t)
        if (t < d)
          for (int off = 16; off; off >>= 1) x[t] += __shfl_xor_sync(kFull, x[t], off);
    } else {
      unsigned rest = peers & (peers - 1);
      const int rounds = int(__reduce_max_sync(kFull, unsigned(__popc(peers)))) - 1;
      for (int r = 0; r < rounds; ++r) {
        const int src = rest ? __ffs(rest) - 1 : lane;
        rest &= rest - 1;
#pragma unroll
        for (int t = 0; t < DMAX; ++t)
          if (t < d) {  // d is the same for the whole warp
            const double v = __shfl_sync(kFull, x[t], src);
            if (lane == leader && src != lane) x[t] += v;
          }
      }
    }
    if (lane == leader && b >= 0) {
      double* w = mine + std::int64_t(b) * row;
      const double cnt = double(__popc(peers));
      if (own_table) {
#pragma unroll
        for (int t = 0; t < DMAX; ++t)
          if (t < d) w[t] += x[t];
        w[d] += cnt;
      } else {
#pragma unroll
        for (int t = 0; t < DMAX; ++t)
          if (t < d) atomicAdd(w + t, x[t]);
        atomicAdd(w + d, cnt);
      }
    }
    __syncwarp();  // the leaders' table writes, before the next round's leaders read them
  }

  const double wi = warp_sum(inertia);
  const unsigned wc = __reduce_add_sync(kFull, changed);
  if (lane == 0) red[warp] = wi, red[warps + warp] = double(wc);
  __syncthreads();
  double* out = part + std::int64_t(blockIdx.x) * table;
  for (std::int64_t j = tid; j < table; j += P) {
    double s = 0;
    for (int q = 0; q < copies; ++q) s += ws[q * table + j];
    out[j] = s;
  }
  if (tid == 0) {
    double a = 0, ch = 0;
    for (int w = 0; w < warps; ++w) a += red[w], ch += red[warps + w];
    inertia_part[blockIdx.x] = a;
    changed_part[blockIdx.x] = (unsigned long long)ch;
  }
}

// A block per cluster: its sums and count over the pass's blocks, the new
// centroid (an empty cluster keeps its own) and its squared move; the last
// block to finish runs the exit test.
__global__ void __launch_bounds__(kUpdateThreads)
    one_update(const double* __restrict__ part, const unsigned long long* __restrict__ changed_part,
               const double* __restrict__ inertia_part, double* __restrict__ C, double* __restrict__ move2,
               State* st, int grid, int d, int k, std::int64_t n, Criteria crit) {
  if (st->stop) return;
  extern __shared__ double col[];  // d + 1: the cluster's sums and its count
  constexpr int W = kUpdateThreads / 32;
  __shared__ double red[W][33];
  __shared__ unsigned long long redc[W];
  __shared__ bool last;
  const int c = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int row = d + 1;
  const std::int64_t table = std::int64_t(k) * row;
  for (int t0 = 0; t0 < row; t0 += 32) {
    const int t = t0 + lane;
    double s = 0;
    if (t < row) {
      const double* p = part + std::int64_t(c) * row + t;
#pragma unroll 4
      for (int b = warp; b < grid; b += W) s += p[std::int64_t(b) * table];
    }
    red[warp][lane] = s;
    __syncthreads();
    if (warp == 0 && t < row) {
      double tot = 0;
      for (int w = 0; w < W; ++w) tot += red[w][lane];
      col[t] = tot;
    }
    __syncthreads();
  }
  const double cnt = col[d];
  double m = 0;
  if (cnt > 0)
    for (int t = tid; t < d; t += kUpdateThreads) {
      const double old = C[std::int64_t(c) * d + t];
      const double v = col[t] / cnt;
      m += (v - old) * (v - old);
      C[std::int64_t(c) * d + t] = v;
    }
  m = warp_sum(m);
  if (lane == 0) red[warp][32] = m;
  __syncthreads();
  if (tid == 0) {
    double mm = 0;
    for (int w = 0; w < W; ++w) mm += red[w][32];
    move2[c] = mm;
    __threadfence();  // the move is visible before the ticket says so
    last = atomicAdd(&st->done, 1u) == unsigned(k - 1);
  }
  __syncthreads();
  if (!last) return;

  // The last block: every cluster's move is written.
  __threadfence();
  double mx = 0, in = 0;
  unsigned long long ch = 0;
  for (int q = tid; q < k; q += kUpdateThreads) mx = fmax(mx, __ldcg(move2 + q));
  for (int b = tid; b < grid; b += kUpdateThreads) ch += changed_part[b], in += inertia_part[b];
  for (int off = 16; off; off >>= 1) {
    mx = fmax(mx, __shfl_down_sync(kFull, mx, off));
    in += __shfl_down_sync(kFull, in, off);
    ch += __shfl_down_sync(kFull, ch, off);
  }
  if (lane == 0) red[warp][0] = mx, red[warp][1] = in, redc[warp] = ch;
  __syncthreads();
  if (tid == 0) {
    mx = 0, in = 0, ch = 0;
    for (int w = 0; w < W; ++w) mx = fmax(mx, red[w][0]), in += red[w][1], ch += redc[w];
    State s = *st;
    s.iterations += 1;
    s.changed = ch;
    s.move = sqrt(mx);
    s.inertia = in;
    s.stop = crit.stop(s.iterations, (std::int64_t)ch, s.move, n) ? 1 : 0;
    s.done = 0;
    *st = s;
  }
}

using PassKernel = void (*)(const double*, const double*, int*, double*, unsigned long long*, double*,
                            const State*, std::int64_t, int, int, int);

PassKernel pass_kernel(std::int64_t d) {
  if (d <= 4) return one_pass<4>;
  if (d <= 8) return one_pass<8>;
  if (d <= 16) return one_pass<16>;
  return one_pass<32>;
}

// Sum tables for the block: one a warp where that leaves room for two blocks
// an SM, else as many as fit in one block's shared memory (at least one).
int choose_copies(std::int64_t k, std::int64_t d, int block) {
  const int warps = block / 32;
  const std::size_t optin = shared_optin_bytes();
  for (int c = warps; c >= 1; --c)
    if (pass_bytes(k, d, c, warps) <= optin / 2) return c;
  return pass_bytes(k, d, 1, warps) <= optin ? 1 : 0;
}

class OneRead final : public Variant {
 public:
  explicit OneRead(int block) : block_(block) {}
  ~OneRead() override {
    for (auto& e : ev_)
      if (e) cudaEventDestroy(e);
    if (h_state_) cudaFreeHost(h_state_);
  }

  Support supports(const Problem& p) const override {
    if (p.d > kMaxD)
      return Support::no("D = " + std::to_string(p.d) +
                         ": OneRead keeps a point's coordinates in registers, at most " +
                         std::to_string(kMaxD) + " (CUDA.GEMM and CUDA.Tiled run wider points)");
    if (p.k > 2147483647 / (p.d + 1) || p.n > (std::int64_t(1) << 40))
      return Support::no("K x (D+1) or N too large for the kernel's indices");
    if (Support b = check_block(block_, pass_kernel(p.d)); !b.ok()) return b;
    if (choose_copies(p.k, p.d, block_) == 0)
      return Support::no("K x (D+1) sums and the centroids need " +
                         std::to_string(pass_bytes(p.k, p.d, 1, block_ / 32)) +
                         " bytes of shared memory, more than the " + std::to_string(shared_optin_bytes()) +
                         " a block can have");
    return Support::yes();
  }

  void prepare(const Problem& p, const Inputs& in) override {
    p_ = p, in_ = &in;
    stream_ = std::make_unique<Stream>();
    const auto N = p.n, D = p.d, K = p.k;
    xs_ = upload_coordinate_major(in.points, N, D, s());

    kernel_ = pass_kernel(D);
    copies_ = choose_copies(K, D, block_);
    bytes_ = pass_bytes(K, D, copies_, block_ / 32);
    PB_CUDA(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes_)));
    int per_sm = 0, dev = 0, sms = 0;
    PB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, block_, bytes_));
    PB_CUDA(cudaGetDevice(&dev));
    PB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Persistent grid: each block sums many points before writing its one slot.
    const std::int64_t full = std::int64_t(std::max(1, per_sm)) * std::max(1, sms);
    grid_ = int(std::max<std::int64_t>(1, std::min<std::int64_t>(full, (N + block_ - 1) / block_)));
    update_bytes_ = std::size_t(D + 1) * sizeof(double);
    if (update_bytes_ > 48 * 1024)
      PB_CUDA(
          cudaFuncSetAttribute(one_update, cudaFuncAttributeMaxDynamicSharedMemorySize, int(update_bytes_)));

    C_ = DeviceBuffer<double>(K * D);
    assign_ = DeviceBuffer<int>(N);
    part_ = DeviceBuffer<double>(std::size_t(grid_) * K * (D + 1));
    changed_part_ = DeviceBuffer<unsigned long long>(grid_);
    inertia_part_ = DeviceBuffer<double>(grid_);
    move2_ = DeviceBuffer<double>(K);
    state_ = DeviceBuffer<State>(1);
    for (auto& e : ev_)
      if (!e) PB_CUDA(cudaEventCreate(&e));
    if (!h_state_) PB_CUDA(cudaMallocHost(&h_state_, sizeof(State)));
    PB_CUDA(cudaStreamSynchronize(s()));
  }

  void reset() override {
    PB_CUDA(cudaMemcpyAsync(C_.get(), in_->init.data(), C_.bytes(), cudaMemcpyHostToDevice, s()));
    PB_CUDA(cudaMemsetAsync(assign_.get(), 0xFF, assign_.bytes(), s()));  // -1: no cluster yet
    PB_CUDA(cudaMemsetAsync(state_.get(), 0, sizeof(State), s()));
    PB_CUDA(cudaStreamSynchronize(s()));
  }

  void run() override {
    last_ = Breakdown{};
    const int cap = p_.crit.fixed ? p_.crit.loops : p_.crit.max_iter;
    int queued = 0, batch = p_.crit.fixed ? cap : 4;
    for (;;) {
      const int now = std::min(batch, cap - queued);
      PB_CUDA(cudaEventRecord(ev_[0], s()));
      for (int it = 0; it < now; ++it) {
        kernel_<<<grid_, block_, bytes_, s()>>>(xs_.get(), C_.get(), assign_.get(), part_.get(),
                                                changed_part_.get(), inertia_part_.get(), state_.get(), p_.n,
                                                int(p_.d), int(p_.k), copies_);
        PB_CUDA_LAUNCHED();
        one_update<<<unsigned(p_.k), kUpdateThreads, update_bytes_, s()>>>(
            part_.get(), changed_part_.get(), inertia_part_.get(), C_.get(), move2_.get(), state_.get(),
            grid_, int(p_.d), int(p_.k), p_.n, p_.crit);
        PB_CUDA_LAUNCHED();
      }
      queued += now;
      read_back_timed(ev_, h_state_, state_.get(), sizeof(State), s(), last_);
      if (h_state_->stop) break;
      if (queued >= cap)  // the exit test stops at the cap itself: reaching here is a bug
        throw std::logic_error("CUDA.OneRead: " + std::to_string(queued) +
                               " iterations queued and the device's exit test has not stopped");
      batch = std::min(2 * batch, 64);
    }
  }

  void result(Result& out) override {
    out.assign.resize(p_.n);
    out.centroids.resize(p_.k * p_.d);
    PB_CUDA(cudaMemcpyAsync(out.assign.data(), assign_.get(), assign_.bytes(), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaMemcpyAsync(out.centroids.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaMemcpyAsync(h_state_, state_.get(), sizeof(State), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaStreamSynchronize(s()));
    out.iterations = h_state_->iterations;
    out.inertia = h_state_->inertia;
  }

  Breakdown breakdown() const override { return last_; }
  void* stream() override { return stream_->get(); }

 private:
  cudaStream_t s() const { return stream_->get(); }
  int block_;
  Problem p_;
  const Inputs* in_ = nullptr;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer<double> xs_, C_, part_, inertia_part_, move2_;
  DeviceBuffer<int> assign_;
  DeviceBuffer<unsigned long long> changed_part_;
  DeviceBuffer<State> state_;
  PassKernel kernel_ = nullptr;
  int copies_ = 1, grid_ = 1;
  std::size_t bytes_ = 0, update_bytes_ = 0;
  cudaEvent_t ev_[3] = {};
  State* h_state_ = nullptr;  // pinned
  Breakdown last_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_one_read(int block) { return std::make_unique<OneRead>(block); }

}  // namespace pb::kmeans
