#pragma once
// Shared machinery of the CUDA k-means variants.
//
// DeviceKMeans owns the device state (points in the layouts the variant asks
// for, centroids in both layouts, assignment, per-point best distance) and the
// two loop skeletons of the seeds:
//  - host update (seed 000's Naive, Transpose, Shared): per iteration the
//    centroids go up, the assignment kernel runs, the memberships come back
//    and the host computes sums, centroids and the exit test;
//  - device update (AllGPU, Tiled, GEMM, DMMA): assignment, accumulation of
//    sums and counts, new centroids and the exit test all run on the GPU,
//    the last two in one launch (update_step) that also zeroes the sums,
//    counts and changed-point count for the next iteration (a variant with
//    delta sums keeps its sums and counts between refreshes); the host
//    reads back a 32-byte flag per iteration of a converging run, once a
//    run of fixed loops, and nothing else.
// Each phase is bracketed by events on the variant's stream, giving seed
// 000's split: host-to-device, kernel, device-to-host, host compute.
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/early_launch.cuh"
#include "core/gpu.hpp"
#include "kmeans/kmeans.hpp"

namespace pb::kmeans {

// Written by the exit-test kernel each iteration; the only thing a
// device-update variant copies back per iteration. In a fixed run
// update_step leaves move NaN (a fixed run stops on the count alone).
struct Flag {
  unsigned long long changed;
  double move;
  int iterations;
  int stop;
  double pad;
};

struct Layouts {
  bool aos = false;  // points N x D (point-major)
  bool soa = false;  // points D x N (coordinate-major)
};

class DeviceKMeans : public Variant {
 public:
  void prepare(const Problem& p, const Inputs& in) override;
  void reset() override;
  void run() override;
  void result(Result& out) override;
  Breakdown breakdown() const override { return last_; }
  void* stream() override { return stream_->get(); }

  // One iteration of the device update in two pieces, for a driver that runs
  // one instance a GPU on slices of the points and sums their partials
  // between the pieces (CUDA.NCCL's step for wide points, dmma.cu): the
  // assignment with its sums and counts, then the update from sums and counts
  // every GPU then holds summed; `total_n` is the whole problem's N (the exit
  // test's changed fraction). Only for variants without delta sums.
  void launch_partials();
  void launch_update_of(std::int64_t total_n);
  // What the driver sums, on stream(): the sums and counts (every replica)
  // and the changed-point count; and the update's flag.
  double* partial_sums() { return sums_.get(); }
  std::size_t partial_sums_count() const { return sums_.size(); }
  unsigned long long* partial_counts() { return counts_.get(); }
  std::size_t partial_counts_count() const { return counts_.size(); }
  unsigned long long* changed_count() { return changed_.get(); }
  const Flag* device_flag() const { return flag_.get(); }
  // The last result, downloaded: assignment and squared distances of this
  // instance's points, and the centroids.
  void download(int* assign, double* best, double* centroids);

 protected:
  virtual Layouts layouts() const = 0;
  virtual bool device_update() const = 0;
  // Assignment of every point against the current centroids (C_ and Ct_):
  // writes assign_ and best_, and adds the number of changed points to
  // *changed_. Device-update variants may also accumulate sums_ / counts_
  // themselves and then return true ("fused").
  virtual bool launch_assign() = 0;
  virtual void after_prepare() {}
  // A device-update variant that keeps the centroids' squared norms (K) gets
  // them computed at reset and rewritten by each iteration's update.
  virtual double* centroid_norms() { return nullptr; }
  // Copies of the K x D sums (sums_ holds them one after another) that a
  // device-update variant's atomics spread over, so fewer pile onto one
  // address; the update adds them. The K counts come in as many copies
  // (counts_ holds them one after another), so a big cluster's count
  // atomics spread as its sums' do (measured: docs/perf/kmeans-dmma.md).
  virtual int sum_replicas() const { return 1; }
  // Delta sums: a variant whose assignment, in most iterations, adds only
  // the points that changed cluster (each to its new cluster's sums and
  // count, minus itself to its old one's) returns true. Its sums and counts
  // then carry over from one iteration to the next, and every
  // kDeltaRefresh-th iteration (the first included) they start from zero
  // and every point adds itself (full_sums()), so what rounding the adds
  // and subtractions leave cannot grow past kDeltaRefresh iterations' worth:
  // a sum takes at most N adds at a refresh and N in each iteration after
  // (a point moves in or out of a cluster once an iteration at most), so at
  // most 16 times the N of a sum over every point, and its rounding bound is
  // at most 16 times theirs, relative to the largest rows it took (a
  // cluster that shrank since the refresh keeps error of the size of the
  // rows that left it until the next one). Lloyd's algorithm is unchanged:
  // the same sums, but for rounding.
  virtual bool delta_sums() const { return false; }
  static constexpr int kDeltaRefresh = 16;
  // Whether the assignment of iteration step_ adds every point: always
  // without delta sums, else on the refresh iterations (and then the update
  // before it has zeroed the sums and counts).
  bool full_sums() const { return !delta_sums() || step_ % kDeltaRefresh == 0; }

  cudaStream_t s() const { return stream_->get(); }
  Problem p_;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer<double> xa_, xs_;  // points AoS / SoA
  DeviceBuffer<double> C_, Ct_;   // centroids K x D and D x K
  DeviceBuffer<int> assign_;
  DeviceBuffer<double> best_;  // per-point squared distance of the last assignment
  DeviceBuffer<double> sums_;
  DeviceBuffer<unsigned long long> counts_, changed_;
  DeviceBuffer<Flag> flag_;
  int block_ = 256;

 private:
  void run_host_update();
  void run_device_update();
  const Inputs* in_ = nullptr;
  std::vector<int> h_assign_;
  std::vector<double> h_centroids_, h_centroids_t_, h_sums_;
  std::vector<std::int64_t> h_counts_;
  int iterations_ = 0;
  std::int64_t step_ = 0;  // the iteration being launched, from 0 at reset()
  Breakdown last_;
  cudaEvent_t ev_[4] = {};
  Flag* h_flag_ = nullptr;                         // pinned
  DeviceBuffer<unsigned long long> update_state_;  // update_step's largest move (bits) and ticket
 public:
  ~DeviceKMeans() override;
};

// Launchers of the shared kernels (device_kmeans.cu).
void launch_accumulate_aos(const double* x, const int* assign, double* sums, unsigned long long* counts,
                           std::int64_t n, std::int64_t d, cudaStream_t s);
void launch_accumulate_soa(const double* xs, const int* assign, double* sums, unsigned long long* counts,
                           std::int64_t n, std::int64_t d, cudaStream_t s);
// The N x D point-major points as D x N on the device (transposed on the
// host, untimed; returns once the copy is done).
DeviceBuffer<double> upload_coordinate_major(const std::vector<double>& points, std::int64_t n,
                                             std::int64_t d, cudaStream_t s);

// Ends a batch of work queued on s after ev[0]: records ev[1], copies
// `bytes` of device state to pinned `host`, records ev[2] and waits; adds
// ev[0]..ev[1] to b.kernel and ev[1]..ev[2] to b.d2h.
void read_back_timed(const cudaEvent_t* ev, void* host, const void* dev, std::size_t bytes, cudaStream_t s,
                     Breakdown& b);

// Squared norms of the rows of an R x D row-major matrix, a warp a row.
void launch_row_norms(const double* m, double* out, std::int64_t rows, std::int64_t d, cudaStream_t s);
void launch_finalize(const double* sums, const unsigned long long* counts, double* C, double* Ct,
                     double* move2, std::int64_t k, std::int64_t d, cudaStream_t s);
void launch_decide(const double* move2, const unsigned long long* changed, Flag* flag, std::int64_t k,
                   std::int64_t n, const Criteria& crit, cudaStream_t s);
// finalize and decide in one launch, for the device-update loop: new
// centroids (and with cn their squared norms), the exit test into *flag;
// leaves *changed and state (2 words) zero for the next iteration, and the
// sums and counts too with `zero` (else it keeps them: delta sums); all must
// be zero before the first. sums holds
// reps copies of K x D and counts reps copies of K, added in order.
void launch_update(double* sums, int reps, unsigned long long* counts, double* C, double* Ct, double* cn,
                   unsigned long long* changed, unsigned long long* state, Flag* flag, std::int64_t k,
                   std::int64_t d, std::int64_t n, const Criteria& crit, bool zero, cudaStream_t s);

// CUDA.AllGPU's fused step (allgpu.cu), also run on slices of the points by
// CUDA.NCCL: assignment of the n points xs (D x n) against C (K x D), adding
// the changed points to *changed and each point to sums (K x D) and counts
// (K). fused_configure sets the kernel up for the current device (dynamic
// shared memory, a persistent grid for n points).
struct FusedLaunch {
  std::size_t bytes = 0;
  unsigned grid = 1;
  int block = 256;
};
Support fused_supports(const Problem& p, int block);
FusedLaunch fused_configure(const Problem& p, std::int64_t n, int block);
void launch_fused(const FusedLaunch& f, const double* xs, const double* C, int* assign, double* best,
                  unsigned long long* changed, double* sums, unsigned long long* counts, std::int64_t n,
                  std::int64_t d, std::int64_t k, cudaStream_t s);

// Adds each thread's count of changed points to *total: one atomic per warp.
// Every thread of the block must call it (after its grid-stride loop).
__device__ __forceinline__ void add_changed(unsigned local, unsigned long long* total) {
  unsigned warp = __reduce_add_sync(0xffffffffu, local);
  if ((threadIdx.x & 31) == 0 && warp) atomicAdd(total, (unsigned long long)warp);
}

// The assignment step over coordinate-major points xs (D x N) and centroids
// Ct (D x K), wherever Ct lives (global memory for Transpose, shared memory
// for Shared): each thread takes points in a grid-stride loop and adds its
// count of changed points. Ties go to the lowest index.
__device__ __forceinline__ void assign_soa(const double* __restrict__ xs, const double* __restrict__ Ct,
                                           int* assign, double* best, unsigned long long* changed,
                                           std::int64_t n, std::int64_t d, std::int64_t k) {
  unsigned local = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    int b = 0;
    double bd = 0;
    for (std::int64_t c = 0; c < k; ++c) {
      double s = 0;
      for (std::int64_t t = 0; t < d; ++t) {
        const double diff = xs[t * n + i] - Ct[t * k + c];
        s += diff * diff;
      }
      if (c == 0 || s < bd) bd = s, b = int(c);
    }
    best[i] = bd;
    if (assign[i] != b) assign[i] = b, ++local;
  }
  add_changed(local, changed);
}

// Grid for a grid-stride loop over n items: enough blocks to fill the GPU
// several times over, never more than the items need.
unsigned grid_for(std::int64_t n, int block);

// Block sizes a k-means kernel accepts: a multiple of 32 in [32, 1024] that
// the kernel's registers allow (a kernel with many registers a thread does
// not launch with the largest blocks: cudaErrorLaunchOutOfResources).
template <class Kernel>
Support check_block(int block, Kernel* kernel) {
  if (block % 32 != 0 || block < 32 || block > 1024)
    return Support::no("block must be a multiple of 32 in [32, 1024]");
  cudaFuncAttributes a{};
  if (gpu_status().available && cudaFuncGetAttributes(&a, kernel) == cudaSuccess &&
      block > a.maxThreadsPerBlock)
    return Support::no("the kernel uses " + std::to_string(a.numRegs) + " registers a thread: at most " +
                       std::to_string(a.maxThreadsPerBlock) + " threads a block");
  return Support::yes();
}

}  // namespace pb::kmeans
