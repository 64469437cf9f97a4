// CUDA.NCCL: k-means across GPUs, running the fastest single-GPU step of the
// shape: where CUDA.OneRead runs it (D <= 32), OneRead's pass and update with
// the pass's partials all-reduced (one_read.cu, OneReadNccl); for wider points
// CUDA.DMMA.Full's, one slice a GPU, its sums and counts all-reduced
// (dmma.cu, DmmaTeam); where neither runs (several parts a GPU, as the tests
// split one GPU), CUDA.AllGPU's step, below. There the points are split into
// parts, part q on GPU q % gpus, each in its own coordinate-major slice;
// every GPU keeps the centroids, K x D sums, K counts and the changed-point
// count.
//
// One iteration of the AllGPU step:
//  - every part runs CUDA.AllGPU's fused step on its slice (allgpu.cu):
//    assignment, and its points added into its GPU's sums and counts (parts
//    that share a GPU add into the same buffers);
//  - one NCCL all-reduce (a group of two: the sums as doubles, the counts
//    with the changed count as 64-bit integers) sums them over the GPUs;
//  - every GPU computes the same new centroids and exit test from the same
//    reduced sums (NCCL gives every rank the same bits), so no broadcast;
//  - the host reads GPU 0's 32-byte flag.
// The benchmark's `gpus` axis runs it with parts = gpus; the tests also split
// one GPU into 2-4 parts, so the slicing is checked on any machine with a GPU.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/buffer.cuh"
#include "core/cuda/nccl.cuh"
#include "core/cuda/team.cuh"
#include "core/family.hpp"
#include "kmeans/cuda/device_kmeans.cuh"

namespace pb::kmeans {

std::unique_ptr<Variant> make_cuda_one_read_nccl(int gpus, int parts, int block,
                                                 bool over_ranks);                   // one_read.cu
std::unique_ptr<Variant> make_cuda_dmma_nccl(int gpus, int parts, bool over_ranks);  // dmma.cu

// OneRead's block in CUDA.NCCL: the middle of OneRead's own block axis (64,
// 256, 1024), which its tensor-core pass takes at K <= 32.
constexpr int kOneReadBlock = 256;

namespace {

class Nccl final : public Variant {
 public:
  Nccl(int gpus, int parts, int block, bool over_ranks)
      : gpus_(gpus), parts_(parts), block_(block), team_(gpus, over_ranks) {}
  ~Nccl() override { release(); }

  Support supports(const Problem& p) const override {
    if (Support s = team_.supports(parts_); !s.ok()) return s;
    return fused_supports(p, block_);
  }

  void prepare(const Problem& p, const Inputs& in) override {
    const DeviceGuard guard;
    release();
    p_ = p, in_ = &in;
    const auto N = p.n, D = p.d, K = p.k;
    team_.connect();  // first: a rank that fails later fails with every rank past this collective
    PB_CUDA(cudaSetDevice(team_.device(0)));
    fan_ =
        std::make_unique<StreamFan>(team_.devices(), false);  // this process's GPU 0's stream is the timer's
    for (int g = 0; g < team_.local(); ++g) {
      PB_CUDA(cudaSetDevice(team_.device(g)));
      auto dev = std::make_unique<Gpu>();
      dev->stream = fan_->stream(std::size_t(g));
      dev->C = DeviceBuffer<double>(K * D);
      dev->Ct = DeviceBuffer<double>(K * D);
      dev->sums = DeviceBuffer<double>(K * D);
      dev->counts = DeviceBuffer<unsigned long long>(K + 1);  // K counts, then the changed points
      dev->move2 = DeviceBuffer<double>(K);
      dev->flag = DeviceBuffer<Flag>(1);
      gpus_v_.push_back(std::move(dev));
    }
    // Each part holds a point or more (a GPU may then hold none: it adds
    // zeros to the all-reduce).
    const std::int64_t parts = std::min<std::int64_t>(parts_, N);
    for (std::int64_t q = 0; q < parts; ++q) {
      if (team_.holder(q) < 0) continue;  // another rank's
      Part part;
      part.dev = team_.holder(q);
      part.lo = N * q / parts;
      part.hi = N * (q + 1) / parts;
      const std::int64_t n = part.hi - part.lo;
      std::vector<double> slice(std::size_t(n * D));
      for (std::int64_t t = 0; t < D; ++t)
        for (std::int64_t i = 0; i < n; ++i)
          slice[std::size_t(t * n + i)] = in.points[std::size_t((part.lo + i) * D + t)];
      PB_CUDA(cudaSetDevice(team_.device(part.dev)));
      part.xs = DeviceBuffer<double>(n * D);
      part.assign = DeviceBuffer<int>(n);
      part.best = DeviceBuffer<double>(n);
      PB_CUDA(cudaMemcpy(part.xs.get(), slice.data(), part.xs.bytes(), cudaMemcpyHostToDevice));
      part.launch = fused_configure(p, n, block_);
      parts_v_.push_back(std::move(part));
    }
    // Copies from pageable memory may return before the data has landed, and
    // the GPUs' non-blocking streams are not ordered after them: wait here.
    team_.sync();
    PB_CUDA(cudaSetDevice(team_.device(0)));
    PB_CUDA(cudaMallocHost(&h_flag_, sizeof(Flag)));
  }

  void reset() override {
    const DeviceGuard guard;
    const auto D = p_.d, K = p_.k;
    std::vector<double> ct(std::size_t(K * D));
    for (std::int64_t c = 0; c < K; ++c)
      for (std::int64_t t = 0; t < D; ++t) ct[std::size_t(t * K + c)] = in_->init[std::size_t(c * D + t)];
    for (int g = 0; g < team_.local(); ++g) {
      PB_CUDA(cudaSetDevice(team_.device(g)));
      Gpu& dev = *gpus_v_[std::size_t(g)];
      PB_CUDA(cudaMemcpy(dev.C.get(), in_->init.data(), dev.C.bytes(), cudaMemcpyHostToDevice));
      PB_CUDA(cudaMemcpy(dev.Ct.get(), ct.data(), dev.Ct.bytes(), cudaMemcpyHostToDevice));
      PB_CUDA(cudaMemset(dev.flag.get(), 0, sizeof(Flag)));
    }
    for (auto& part : parts_v_) {
      PB_CUDA(cudaSetDevice(team_.device(part.dev)));
      PB_CUDA(cudaMemset(part.assign.get(), 0xFF, part.assign.bytes()));  // -1: no cluster yet
      PB_CUDA(cudaMemset(part.best.get(), 0xFF, part.best.bytes()));      // NaN until written
    }
    // The copies and sets above ran on each GPU's default stream, which the
    // non-blocking streams of run() are not ordered after.
    team_.sync();
    iterations_ = 0;
  }

  void run() override {
    const DeviceGuard guard;
    failed_ = true;  // until run() returns normally
    const auto N = p_.n, D = p_.d, K = p_.k;
    fan_->start();  // every GPU's stream after what the timer recorded on GPU 0's
    for (;;) {
      for (int g = 0; g < team_.local(); ++g) {
        PB_CUDA(cudaSetDevice(team_.device(g)));
        Gpu& dev = *gpus_v_[std::size_t(g)];
        PB_CUDA(cudaMemsetAsync(dev.sums.get(), 0, dev.sums.bytes(), dev.stream));
        PB_CUDA(cudaMemsetAsync(dev.counts.get(), 0, dev.counts.bytes(), dev.stream));
      }
      for (auto& part : parts_v_) {
        PB_CUDA(cudaSetDevice(team_.device(part.dev)));
        Gpu& dev = *gpus_v_[std::size_t(part.dev)];
        launch_fused(part.launch, part.xs.get(), dev.C.get(), part.assign.get(), part.best.get(),
                     dev.counts.get() + K, dev.sums.get(), dev.counts.get(), part.hi - part.lo, D, K,
                     dev.stream);
      }
      {
        NcclGroup group;
        for (int g = 0; g < team_.local(); ++g) {
          Gpu& dev = *gpus_v_[std::size_t(g)];
          PB_NCCL(ncclAllReduce(dev.sums.get(), dev.sums.get(), std::size_t(K * D), ncclDouble, ncclSum,
                                team_.comm(g), dev.stream));
          PB_NCCL(ncclAllReduce(dev.counts.get(), dev.counts.get(), std::size_t(K + 1), ncclUint64, ncclSum,
                                team_.comm(g), dev.stream));
        }
        group.end();
      }
      for (int g = 0; g < team_.local(); ++g) {
        PB_CUDA(cudaSetDevice(team_.device(g)));
        Gpu& dev = *gpus_v_[std::size_t(g)];
        launch_finalize(dev.sums.get(), dev.counts.get(), dev.C.get(), dev.Ct.get(), dev.move2.get(), K, D,
                        dev.stream);
        launch_decide(dev.move2.get(), dev.counts.get() + K, dev.flag.get(), K, N, p_.crit, dev.stream);
      }
      PB_CUDA(cudaSetDevice(team_.device(0)));
      PB_CUDA(cudaMemcpyAsync(h_flag_, gpus_v_[0]->flag.get(), sizeof(Flag), cudaMemcpyDeviceToHost, s0()));
      PB_CUDA(cudaStreamSynchronize(s0()));
      iterations_ = h_flag_->iterations;
      if (h_flag_->stop) break;
    }
    fan_->join();  // the timer's stream (GPU 0's) ends after every GPU's last work
    failed_ = false;
  }

  void result(Result& out) override {
    const DeviceGuard guard;
    const auto N = p_.n, D = p_.d, K = p_.k;
    out.assign.resize(std::size_t(N));
    out.centroids.resize(std::size_t(K * D));
    std::vector<double> best(static_cast<std::size_t>(N));
    team_.sync();
    for (auto& part : parts_v_) {
      PB_CUDA(cudaSetDevice(team_.device(part.dev)));
      PB_CUDA(cudaMemcpy(out.assign.data() + part.lo, part.assign.get(), part.assign.bytes(),
                         cudaMemcpyDeviceToHost));
      PB_CUDA(cudaMemcpy(best.data() + part.lo, part.best.get(), part.best.bytes(), cudaMemcpyDeviceToHost));
    }
    // Every rank holds the same centroids; rank 0 the whole assignment.
    const std::int64_t lo = parts_v_.empty() ? 0 : parts_v_.front().lo,
                       hi = parts_v_.empty() ? 0 : parts_v_.back().hi;
    team_.gather(out.assign, lo, hi);
    team_.gather(best, lo, hi);
    PB_CUDA(cudaSetDevice(team_.device(0)));
    PB_CUDA(
        cudaMemcpy(out.centroids.data(), gpus_v_[0]->C.get(), gpus_v_[0]->C.bytes(), cudaMemcpyDeviceToHost));
    out.iterations = iterations_;
    out.inertia = 0;
    for (double v : best) out.inertia += v;
  }

  void* stream() override { return gpus_v_.empty() ? nullptr : gpus_v_[0]->stream; }

 private:
  struct Gpu {
    cudaStream_t stream = nullptr;  // fan_'s stream of this GPU
    DeviceBuffer<double> C, Ct, sums, move2;
    DeviceBuffer<unsigned long long> counts;
    DeviceBuffer<Flag> flag;
  };
  struct Part {
    int dev = 0;
    std::int64_t lo = 0, hi = 0;  // points lo <= i < hi
    DeviceBuffer<double> xs;      // D x (hi - lo)
    DeviceBuffer<int> assign;
    DeviceBuffer<double> best;
    FusedLaunch launch;
  };
  cudaStream_t s0() const { return gpus_v_[0]->stream; }
  void release() {
    team_.release(failed_);
    failed_ = false;
    parts_v_.clear();
    gpus_v_.clear();
    fan_.reset();
    if (h_flag_) cudaFreeHost(h_flag_);
    h_flag_ = nullptr;
  }

  int gpus_, parts_, block_;
  Problem p_;
  const Inputs* in_ = nullptr;
  std::vector<std::unique_ptr<Gpu>> gpus_v_;
  std::vector<Part> parts_v_;
  GpuTeam team_;
  std::unique_ptr<StreamFan> fan_;
  Flag* h_flag_ = nullptr;  // pinned
  int iterations_ = 0;
  bool failed_ = false;  // a run() threw: the communicators are aborted, not destroyed
};

}  // namespace

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

namespace {

// CUDA.NCCL runs the fastest single-GPU step of the shape across the GPUs:
// OneRead's where OneRead runs it (D <= 32, one_read.cu), else DMMA's
// (dmma.cu: one slice a GPU), else AllGPU's (a GPU split into several parts,
// as the tests split one).
class Choose final : public Variant {
 public:
  Choose(int gpus, int parts, int block, bool over_ranks)
      : gpus_(gpus), parts_(parts), block_(block), over_ranks_(over_ranks) {}
  Support supports(const Problem& p) const override { return pick(p)->supports(p); }
  void prepare(const Problem& p, const Inputs& in) override {
    impl_ = pick(p);
    impl_->prepare(p, in);
  }
  void reset() override { impl_->reset(); }
  void run() override { impl_->run(); }
  void result(Result& out) override { impl_->result(out); }
  Breakdown breakdown() const override { return impl_ ? impl_->breakdown() : Breakdown{}; }
  void* stream() override { return impl_ ? impl_->stream() : nullptr; }
  CommProfile communication() override { return impl_ ? impl_->communication() : CommProfile{}; }

 private:
  std::unique_ptr<Variant> pick(const Problem& p) const {
    auto one_read = make_cuda_one_read_nccl(gpus_, parts_, kOneReadBlock, over_ranks_);
    if (one_read->supports(p).ok()) return one_read;
    auto dmma = make_cuda_dmma_nccl(gpus_, parts_, over_ranks_);
    if (dmma->supports(p).ok()) return dmma;
    return std::make_unique<Nccl>(gpus_, parts_, block_, over_ranks_);
  }
  int gpus_, parts_, block_;
  bool over_ranks_;
  std::unique_ptr<Variant> impl_;
};

}  // namespace

std::unique_ptr<Variant> make_cuda_nccl(int gpus, int parts, int block, Spread spread) {
  return std::make_unique<Choose>(gpus, parts, block, spread == Spread::OverRanks);
}

}  // namespace pb::kmeans
