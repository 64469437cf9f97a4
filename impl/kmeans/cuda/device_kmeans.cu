// The device k-means lifecycle every CUDA variant shares (DeviceKMeans in
// device_kmeans.cuh: prepare, reset, the Lloyd loop with the update on the
// host or on the device, result) and the device-side update kernels: the
// accumulations (for Tiled and GEMM, whose assignment leaves the sums to
// them), update_step (every device-update variant), finalize and decide
// (CUDA.NCCL). Kernels here are deliberately plain: they move O(N*D) data
// once per iteration, against the O(N*K*D) of the assignment.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/gpu.hpp"
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {

unsigned grid_for(std::int64_t n, int block) {
  const std::int64_t want = (n + block - 1) / block;
  const std::int64_t cap = std::int64_t(std::max(gpu_status().sm_count, 1)) * 32;
  return unsigned(std::max<std::int64_t>(1, std::min(want, cap)));
}

namespace {

// AoS: a warp per point, lanes over coordinates: coalesced reads, and the
// atomics of one warp hit one contiguous row of sums.
__global__ void accumulate_aos(const double* __restrict__ x, const int* __restrict__ assign, double* sums,
                               unsigned long long* counts, std::int64_t n, std::int64_t d) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    const int c = assign[i];
    for (std::int64_t t = lane; t < d; t += 32) atomicAdd(&sums[c * d + t], x[i * d + t]);
    if (lane == 0) atomicAdd(&counts[c], 1ull);
  }
}

// SoA: a thread per point, coordinate by coordinate: coalesced reads.
__global__ void accumulate_soa(const double* __restrict__ xs, const int* __restrict__ assign, double* sums,
                               unsigned long long* counts, std::int64_t n, std::int64_t d) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int c = assign[i];
    for (std::int64_t t = 0; t < d; ++t) atomicAdd(&sums[c * d + t], xs[t * n + i]);
    atomicAdd(&counts[c], 1ull);
  }
}

// A warp per row: squared norms of the rows of an R x D row-major matrix.
__global__ void row_norms(const double* __restrict__ m, double* out, std::int64_t rows, std::int64_t d) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t r = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
    double s = 0;
    for (std::int64_t t = lane; t < d; t += 32) s += m[r * d + t] * m[r * d + t];
    for (int off = 16; off; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) out[r] = s;
  }
}

// A warp per cluster: new centroid (an empty cluster keeps its own), both
// layouts, and the squared move.
__global__ void finalize(const double* __restrict__ sums, const unsigned long long* __restrict__ counts,
                         double* C, double* Ct, double* move2, std::int64_t k, std::int64_t d) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t c = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; c < k; c += warps) {
    const unsigned long long cnt = counts[c];
    double m = 0;
    for (std::int64_t t = lane; t < d; t += 32) {
      const double old = C[c * d + t];
      const double v = cnt ? sums[c * d + t] / double(cnt) : old;
      m += (v - old) * (v - old);
      C[c * d + t] = v;
      Ct[t * k + c] = v;
    }
    for (int off = 16; off; off >>= 1) m += __shfl_down_sync(0xffffffffu, m, off);
    if (lane == 0) move2[c] = m;
  }
}

// The iteration's flag from its changed-point count and largest squared
// move: decide's and update_step's exit test.
__device__ void write_flag(Flag* flag, unsigned long long changed, double max_move2, std::int64_t n,
                           const Criteria& crit) {
  Flag f = *flag;
  f.iterations += 1;
  f.changed = changed;
  f.move = sqrt(max_move2);
  f.stop = crit.stop(f.iterations, (std::int64_t)f.changed, f.move, n) ? 1 : 0;
  *flag = f;
}

// One block: the largest move, the exit test, and the flag.
__global__ void decide(const double* __restrict__ move2, const unsigned long long* __restrict__ changed,
                       Flag* flag, std::int64_t k, std::int64_t n, Criteria crit) {
  __shared__ double warp_max[32];
  double m = 0;
  for (std::int64_t c = threadIdx.x; c < k; c += blockDim.x) m = fmax(m, move2[c]);
  for (int off = 16; off; off >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x / 32); ++w) m = fmax(m, warp_max[w]);
    write_flag(flag, *changed, m, n, crit);
  }
}

// The device update in one launch, which also leaves the accumulators zero
// for the next iteration (with `zero`; else, for delta sums, as they are). A
// warp a cluster: the new centroid (an empty cluster keeps its own) in both
// layouts, its squared move, with cn its new squared norm (summed in
// row_norms' order, so the same bits); the cluster's sums and count (reps
// copies of each, added in order; a copy of a count may have wrapped below
// zero, their sum has not) are read, then zeroed with `zero`. A fixed run
// stops on the iteration count alone, so one thread writes the flag (its
// move NaN: not computed) and zeroes *changed. Else a block's largest move
// goes to state[0] by atomicMax on its bits (a non-negative double orders as
// its bits; fmax drops a NaN, as decide does);
// the last block to take a ticket (state[1]) runs decide's exit test, then
// zeroes *changed and the state. The fixed run's short tail skips the
// ticket and the exit test, which it does not need. Measurements behind
// these choices: docs/perf/kmeans-dmma.md.
__global__ void update_step(double* __restrict__ sums, unsigned long long* __restrict__ counts,
                            double* __restrict__ C, double* __restrict__ Ct, double* __restrict__ cn,
                            unsigned long long* __restrict__ changed, unsigned long long* __restrict__ state,
                            Flag* __restrict__ flag, std::int64_t k, std::int64_t d, std::int64_t n, int reps,
                            Criteria crit, bool zero) {
  __shared__ double warp_max[32];
  __shared__ bool last;
  grid_release();  // the next assignment may start its copies of the points
  grid_wait();     // the sums and counts are complete
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  double mx = 0;
  for (std::int64_t c = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; c < k; c += warps) {
    unsigned long long cnt = 0;
    for (int r = 0; r < reps; ++r) cnt += counts[r * k + c];
    double m = 0, nn = 0;
#pragma unroll 4
    for (std::int64_t t = lane; t < d; t += 32) {
      const double old = C[c * d + t];
      double sum = sums[c * d + t];
      if (zero) sums[c * d + t] = 0;
      for (int r = 1; r < reps; ++r) {
        sum += sums[(r * k + c) * d + t];
        if (zero) sums[(r * k + c) * d + t] = 0;
      }
      const double v = cnt ? sum / double(cnt) : old;
      m += (v - old) * (v - old);
      nn += v * v;
      C[c * d + t] = v;
      Ct[t * k + c] = v;
    }
    for (int off = 16; off; off >>= 1) {
      m += __shfl_down_sync(0xffffffffu, m, off);
      nn += __shfl_down_sync(0xffffffffu, nn, off);
    }
    if (lane == 0) {
      if (cn) cn[c] = nn;
      if (zero)
        for (int r = 0; r < reps; ++r) counts[r * k + c] = 0;  // every lane read them before the shuffles
      mx = fmax(mx, m);
    }
  }
  if (crit.fixed) {
    // No largest move, so no block waits on another; *changed is final (the
    // assignment that added to it has finished: grid_wait).
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      write_flag(flag, *changed, nan(""), n, crit);
      *changed = 0;
    }
    return;
  }
  if (lane == 0) warp_max[threadIdx.x / 32] = mx;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x / 32); ++w) mx = fmax(mx, warp_max[w]);
    atomicMax(&state[0], (unsigned long long)__double_as_longlong(mx));
    __threadfence();  // this block's move and writes before its ticket
    last = atomicAdd(&state[1], 1ull) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    const double m = __longlong_as_double((long long)atomicAdd(&state[0], 0ull));
    write_flag(flag, atomicAdd(changed, 0ull), m, n, crit);
    *changed = 0, state[0] = 0, state[1] = 0;
  }
}

}  // namespace

void launch_accumulate_aos(const double* x, const int* assign, double* sums, unsigned long long* counts,
                           std::int64_t n, std::int64_t d, cudaStream_t s) {
  accumulate_aos<<<grid_for(n * 32, 256), 256, 0, s>>>(x, assign, sums, counts, n, d);
  PB_CUDA_LAUNCHED();
}
void launch_accumulate_soa(const double* xs, const int* assign, double* sums, unsigned long long* counts,
                           std::int64_t n, std::int64_t d, cudaStream_t s) {
  accumulate_soa<<<grid_for(n, 256), 256, 0, s>>>(xs, assign, sums, counts, n, d);
  PB_CUDA_LAUNCHED();
}
void launch_row_norms(const double* m, double* out, std::int64_t rows, std::int64_t d, cudaStream_t s) {
  row_norms<<<grid_for(rows * 32, 256), 256, 0, s>>>(m, out, rows, d);
  PB_CUDA_LAUNCHED();
}
void launch_finalize(const double* sums, const unsigned long long* counts, double* C, double* Ct,
                     double* move2, std::int64_t k, std::int64_t d, cudaStream_t s) {
  finalize<<<grid_for(k * 32, 256), 256, 0, s>>>(sums, counts, C, Ct, move2, k, d);
  PB_CUDA_LAUNCHED();
}
void launch_decide(const double* move2, const unsigned long long* changed, Flag* flag, std::int64_t k,
                   std::int64_t n, const Criteria& crit, cudaStream_t s) {
  decide<<<1, 1024, 0, s>>>(move2, changed, flag, k, n, crit);
  PB_CUDA_LAUNCHED();
}
void launch_update(double* sums, int reps, unsigned long long* counts, double* C, double* Ct, double* cn,
                   unsigned long long* changed, unsigned long long* state, Flag* flag, std::int64_t k,
                   std::int64_t d, std::int64_t n, const Criteria& crit, bool zero, cudaStream_t s) {
  // Blocks of 2 warps (2 clusters), so K = 316 spreads over more SMs than
  // 256-thread blocks would (40).
  launch_early(update_step, grid_for(k * 32, 64), 64, 0, s, sums, counts, C, Ct, cn, changed, state, flag, k,
               d, n, reps, crit, zero);
  PB_CUDA_LAUNCHED();
}

DeviceBuffer<double> upload_coordinate_major(const std::vector<double>& points, std::int64_t n,
                                             std::int64_t d, cudaStream_t s) {
  std::vector<double> t(n * d);
#pragma omp parallel for schedule(static)
  for (std::int64_t dd = 0; dd < d; ++dd)
    for (std::int64_t i = 0; i < n; ++i) t[dd * n + i] = points[i * d + dd];
  DeviceBuffer<double> out(n * d);
  PB_CUDA(cudaMemcpyAsync(out.get(), t.data(), out.bytes(), cudaMemcpyHostToDevice, s));
  PB_CUDA(cudaStreamSynchronize(s));  // before t goes
  return out;
}

void read_back_timed(const cudaEvent_t* ev, void* host, const void* dev, std::size_t bytes, cudaStream_t s,
                     Breakdown& b) {
  PB_CUDA(cudaEventRecord(ev[1], s));
  PB_CUDA(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
  PB_CUDA(cudaEventRecord(ev[2], s));
  PB_CUDA(cudaEventSynchronize(ev[2]));
  float ms[2];
  for (int t = 0; t < 2; ++t) PB_CUDA(cudaEventElapsedTime(&ms[t], ev[t], ev[t + 1]));
  b.kernel += ms[0] * 1e-3, b.d2h += ms[1] * 1e-3;
}

// ---- the base class -------------------------------------------------------

DeviceKMeans::~DeviceKMeans() {
  for (auto& e : ev_)
    if (e) cudaEventDestroy(e);
  if (h_flag_) cudaFreeHost(h_flag_);
}

void DeviceKMeans::prepare(const Problem& p, const Inputs& in) {
  p_ = p, in_ = &in;
  stream_ = std::make_unique<Stream>();
  const auto L = layouts();
  const auto N = p.n, D = p.d, K = p.k;
  if (L.aos) {
    xa_ = DeviceBuffer<double>(N * D);
    PB_CUDA(cudaMemcpyAsync(xa_.get(), in.points.data(), xa_.bytes(), cudaMemcpyHostToDevice, s()));
  }
  if (L.soa) xs_ = upload_coordinate_major(in.points, N, D, s());
  C_ = DeviceBuffer<double>(K * D);
  Ct_ = DeviceBuffer<double>(K * D);
  assign_ = DeviceBuffer<int>(N);
  best_ = DeviceBuffer<double>(N);
  sums_ = DeviceBuffer<double>(K * D * sum_replicas());
  counts_ = DeviceBuffer<unsigned long long>(K * sum_replicas());
  changed_ = DeviceBuffer<unsigned long long>(1);
  flag_ = DeviceBuffer<Flag>(1);
  update_state_ = DeviceBuffer<unsigned long long>(2);
  for (auto& e : ev_) PB_CUDA(cudaEventCreate(&e));
  PB_CUDA(cudaMallocHost(&h_flag_, sizeof(Flag)));
  h_sums_.resize(K * D);
  h_counts_.resize(K);
  after_prepare();
  PB_CUDA(cudaStreamSynchronize(s()));
}

void DeviceKMeans::reset() {
  const auto D = p_.d, K = p_.k;
  h_centroids_ = in_->init;
  h_centroids_t_.resize(K * D);
  for (std::int64_t c = 0; c < K; ++c)
    for (std::int64_t t = 0; t < D; ++t) h_centroids_t_[t * K + c] = h_centroids_[c * D + t];
  h_assign_.assign(p_.n, -1);
  PB_CUDA(cudaMemcpyAsync(C_.get(), h_centroids_.data(), C_.bytes(), cudaMemcpyHostToDevice, s()));
  PB_CUDA(cudaMemcpyAsync(Ct_.get(), h_centroids_t_.data(), Ct_.bytes(), cudaMemcpyHostToDevice, s()));
  PB_CUDA(cudaMemsetAsync(assign_.get(), 0xFF, assign_.bytes(), s()));  // -1: no cluster yet
  PB_CUDA(cudaMemsetAsync(best_.get(), 0xFF, best_.bytes(), s()));      // NaN until written
  PB_CUDA(cudaMemsetAsync(flag_.get(), 0, sizeof(Flag), s()));
  if (device_update()) {  // zero at the start; update_step leaves them zero (delta sums: before a refresh)
    PB_CUDA(cudaMemsetAsync(sums_.get(), 0, sums_.bytes(), s()));
    PB_CUDA(cudaMemsetAsync(counts_.get(), 0, counts_.bytes(), s()));
    PB_CUDA(cudaMemsetAsync(changed_.get(), 0, changed_.bytes(), s()));
    PB_CUDA(cudaMemsetAsync(update_state_.get(), 0, update_state_.bytes(), s()));
    if (double* cn = centroid_norms()) launch_row_norms(C_.get(), cn, K, D, s());
  }
  PB_CUDA(cudaStreamSynchronize(s()));
  iterations_ = 0;
  step_ = 0;
}

void DeviceKMeans::run() {
  last_ = Breakdown{};
  if (device_update())
    run_device_update();
  else
    run_host_update();
}

void DeviceKMeans::run_host_update() {
  const auto N = p_.n, D = p_.d, K = p_.k;
  const bool soa = layouts().soa;
  for (;;) {
    PB_CUDA(cudaEventRecord(ev_[0], s()));
    if (soa)
      PB_CUDA(cudaMemcpyAsync(Ct_.get(), h_centroids_t_.data(), Ct_.bytes(), cudaMemcpyHostToDevice, s()));
    else
      PB_CUDA(cudaMemcpyAsync(C_.get(), h_centroids_.data(), C_.bytes(), cudaMemcpyHostToDevice, s()));
    PB_CUDA(cudaEventRecord(ev_[1], s()));
    PB_CUDA(cudaMemsetAsync(changed_.get(), 0, sizeof(unsigned long long), s()));
    launch_assign();
    PB_CUDA(cudaEventRecord(ev_[2], s()));
    PB_CUDA(cudaMemcpyAsync(h_assign_.data(), assign_.get(), assign_.bytes(), cudaMemcpyDeviceToHost, s()));
    PB_CUDA(cudaEventRecord(ev_[3], s()));
    PB_CUDA(cudaEventSynchronize(ev_[3]));
    float ms[3];
    for (int t = 0; t < 3; ++t) PB_CUDA(cudaEventElapsedTime(&ms[t], ev_[t], ev_[t + 1]));
    last_.h2d += ms[0] * 1e-3, last_.kernel += ms[1] * 1e-3, last_.d2h += ms[2] * 1e-3;

    auto t0 = std::chrono::steady_clock::now();
    unsigned long long changed = 0;
    PB_CUDA(cudaMemcpy(&changed, changed_.get(), sizeof changed, cudaMemcpyDeviceToHost));
    std::fill(h_sums_.begin(), h_sums_.end(), 0.0);
    std::fill(h_counts_.begin(), h_counts_.end(), 0);
    const double* X = in_->points.data();
    for (std::int64_t i = 0; i < N; ++i) {
      const int c = h_assign_[i];
      ++h_counts_[c];
      for (std::int64_t t = 0; t < D; ++t) h_sums_[c * D + t] += X[i * D + t];
    }
    double move = finish_update(h_sums_.data(), h_counts_.data(), h_centroids_.data(), K, D);
    for (std::int64_t c = 0; c < K; ++c)
      for (std::int64_t t = 0; t < D; ++t) h_centroids_t_[t * K + c] = h_centroids_[c * D + t];
    ++iterations_;
    const bool stop = p_.crit.stop(iterations_, std::int64_t(changed), move, N);
    last_.host += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (stop) break;
  }
}

void DeviceKMeans::run_device_update() {
  const auto N = p_.n;
  // A fixed-loop run (the large-data configuration) needs nothing from the
  // host between iterations: all of them are queued and the flag read once.
  // A converging run reads it after each iteration.
  const int per_read = p_.crit.fixed ? p_.crit.loops : 1;
  for (;;) {
    PB_CUDA(cudaEventRecord(ev_[0], s()));
    for (int it = 0; it < per_read; ++it) {
      launch_partials();
      launch_update_of(N);
    }
    read_back_timed(ev_, h_flag_, flag_.get(), sizeof(Flag), s(), last_);
    iterations_ = h_flag_->iterations;
    if (h_flag_->stop) break;
    if (p_.crit.fixed)  // the exit test stops a fixed run at `loops` itself: reaching here is a bug
      throw std::logic_error("k-means: " + std::to_string(iterations_) + " of " +
                             std::to_string(p_.crit.loops) +
                             " fixed iterations run and the device's exit test has not stopped");
  }
}

void DeviceKMeans::launch_partials() {
  if (launch_assign()) return;  // fused: the assignment added the sums
  if (xa_.size())
    launch_accumulate_aos(xa_.get(), assign_.get(), sums_.get(), counts_.get(), p_.n, p_.d, s());
  else
    launch_accumulate_soa(xs_.get(), assign_.get(), sums_.get(), counts_.get(), p_.n, p_.d, s());
}

void DeviceKMeans::launch_update_of(std::int64_t total_n) {
  // The update zeroes the sums and counts exactly when the next assignment
  // adds every point (always, without delta sums).
  ++step_;
  launch_update(sums_.get(), sum_replicas(), counts_.get(), C_.get(), Ct_.get(), centroid_norms(),
                changed_.get(), update_state_.get(), flag_.get(), p_.k, p_.d, total_n, p_.crit, full_sums(),
                s());
}

void DeviceKMeans::download(int* assign, double* best, double* centroids) {
  PB_CUDA(cudaMemcpyAsync(assign, assign_.get(), assign_.bytes(), cudaMemcpyDeviceToHost, s()));
  PB_CUDA(cudaMemcpyAsync(best, best_.get(), best_.bytes(), cudaMemcpyDeviceToHost, s()));
  PB_CUDA(cudaMemcpyAsync(centroids, C_.get(), C_.bytes(), cudaMemcpyDeviceToHost, s()));
  PB_CUDA(cudaStreamSynchronize(s()));
}

void DeviceKMeans::result(Result& out) {
  const auto N = p_.n, D = p_.d, K = p_.k;
  out.assign.resize(N);
  out.centroids.resize(K * D);
  std::vector<double> best(N);
  PB_CUDA(cudaMemcpyAsync(out.assign.data(), assign_.get(), assign_.bytes(), cudaMemcpyDeviceToHost, s()));
  PB_CUDA(cudaMemcpyAsync(best.data(), best_.get(), best_.bytes(), cudaMemcpyDeviceToHost, s()));
  if (!device_update()) {
    out.centroids = h_centroids_;
  } else {
    PB_CUDA(cudaMemcpyAsync(out.centroids.data(), C_.get(), C_.bytes(), cudaMemcpyDeviceToHost, s()));
  }
  PB_CUDA(cudaStreamSynchronize(s()));
  out.iterations = iterations_;
  out.inertia = 0;
  for (double v : best) out.inertia += v;
}

}  // namespace pb::kmeans
