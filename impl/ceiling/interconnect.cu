// Interconnect ceilings: what the GPUs of one host move between them, the
// limits the multi-GPU variants' halo copies and all-reduces are read against.
//
//   CUDA.P2P         cudaMemcpyPeerAsync of `bytes` from GPU src to GPU dst,
//                    peer to peer where the pair allows it (p2p_access = 1),
//                    staged by the driver otherwise; GBps = bytes / time.
//   NCCL.AllReduce   ncclAllReduce (sum of floats, out of place) of `bytes` on
//                    each of `gpus` GPUs, one process, one communicator per GPU.
//   NCCL.SendRecv    every GPU sends `bytes` to the next and receives as many
//                    from the previous: a ring shift, every link busy at once.
//
// The NCCL entries follow nccl-tests' conventions: algbw_GBps = bytes / time;
// busbw_GBps = algbw x 2 (g - 1) / g for the all-reduce (the traffic a ring
// moves over each link, comparable across GPU counts) and = algbw for the
// send/receive. The CUDA timer brackets one stream of the device current when
// the job is made (core/job.hpp); every GPU's stream starts after what the
// timer recorded there, and that stream ends after every GPU's.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "ceiling/ceiling.hpp"
#include "core/cuda/buffer.cuh"
#ifdef PARBENCH_WITH_NCCL
#include "core/cuda/nccl.cuh"
#endif

namespace pb::ceiling {
namespace {

// Every element distinct from its neighbours', a whole number (sums of a few
// stay exact in float) and never zero: a copy or a reduction that misses an
// element shows.
float pattern(std::int64_t i, int gpu) { return float(1 + (i * 7 + gpu * 13) % 1021); }

std::string element_error(const char* what, int gpu, std::int64_t i, float got, float want) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s on GPU %d, element %lld: %.9g, expected %.9g", what, gpu, (long long)i,
                double(got), double(want));
  return buf;
}

// The GPUs an entry needs, or the reason it cannot run here.
Support need_gpus(int highest) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess) visible = 0;
  if (highest + 1 > visible)
    return Support::no("needs " + std::to_string(highest + 1) + " GPUs, " + std::to_string(visible) +
                       " visible");
  return Support::yes();
}

// Uploads pattern(i, gpu) into a new buffer of n floats on `dev`.
DeviceBuffer<float> upload_pattern(int dev, int gpu, std::int64_t n, cudaStream_t s) {
  PB_CUDA(cudaSetDevice(dev));
  std::vector<float> host(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) host[std::size_t(i)] = pattern(i, gpu);
  DeviceBuffer<float> buf(static_cast<std::size_t>(n));
  PB_CUDA(cudaMemcpyAsync(buf.get(), host.data(), buf.bytes(), cudaMemcpyHostToDevice, s));
  PB_CUDA(cudaStreamSynchronize(s));
  return buf;
}

std::vector<float> download(int dev, const DeviceBuffer<float>& buf, cudaStream_t s) {
  PB_CUDA(cudaSetDevice(dev));
  std::vector<float> host(buf.size());
  PB_CUDA(cudaMemcpyAsync(host.data(), buf.get(), buf.bytes(), cudaMemcpyDeviceToHost, s));
  PB_CUDA(cudaStreamSynchronize(s));
  return host;
}

class PeerCopy final : public Job {
 public:
  PeerCopy(int src, int dst, std::int64_t bytes) : src_(src), dst_(dst), n_(bytes / 4) {}
  Backend backend() const override { return Backend::Cuda; }
  Support supports() override { return need_gpus(std::max(src_, dst_)); }
  void prepare() override {
    const DeviceGuard guard;
    fan_ = std::make_unique<StreamFan>(std::vector<int>{src_, dst_}, true);
    peer_ = enable_peer_access(src_, dst_);
    from_ = upload_pattern(src_, 0, n_, fan_->stream(0));
    PB_CUDA(cudaSetDevice(dst_));
    to_ = DeviceBuffer<float>(std::size_t(n_));
    PB_CUDA(cudaMemsetAsync(to_.get(), 0, to_.bytes(), fan_->stream(1)));
    fan_->sync();
  }
  void run() override {
    const DeviceGuard guard;
    fan_->start();
    PB_CUDA(cudaSetDevice(src_));
    PB_CUDA(cudaMemcpyPeerAsync(to_.get(), dst_, from_.get(), src_, from_.bytes(), fan_->stream(0)));
    fan_->join();
  }
  void* cuda_stream() override { return fan_->home(); }
  Check check() override {
    const DeviceGuard guard;
    fan_->sync();
    const std::vector<float> got = download(dst_, to_, fan_->stream(1));
    for (std::int64_t i = 0; i < n_; ++i)
      if (!(got[std::size_t(i)] == pattern(i, 0)))
        return {false, element_error("peer copy", dst_, i, got[std::size_t(i)], pattern(i, 0)), "full"};
    return {true, "", "full"};
  }
  Work work() const override {
    Work w;
    w.bytes = 4.0 * double(n_);
    return w;
  }
  void report(Counters& out, double, std::int64_t) override {
    out.emplace_back("p2p_access", peer_ ? 1.0 : 0.0);
  }

 private:
  int src_, dst_;
  std::int64_t n_;
  bool peer_ = false;
  std::unique_ptr<StreamFan> fan_;
  DeviceBuffer<float> from_, to_;
};

#ifndef PARBENCH_WITH_NCCL
// A collective in a build without NCCL: an unsupported entry that says why.
class WithoutNccl final : public Job {
 public:
  Backend backend() const override { return Backend::Cuda; }
  Support supports() override {
    return Support::no("built without NCCL (nccl.h and libnccl were not found when configuring)");
  }
  void prepare() override {}
  void run() override {}
  Check check() override { return {false, "not run", ""}; }
};
#else
class Collective final : public Job {
 public:
  Collective(Link what, int gpus, std::int64_t bytes) : what_(what), gpus_(gpus), n_(bytes / 4) {}
  ~Collective() override { release(); }
  Backend backend() const override { return Backend::Cuda; }
  Support supports() override {
    if (gpus_ < 2) return Support::no("a collective needs 2 GPUs or more");
    return need_gpus(gpus_ - 1);
  }
  void prepare() override {
    const DeviceGuard guard;
    release();
    std::vector<int> devs;
    for (int g = 0; g < gpus_; ++g) devs.push_back(g);
    fan_ = std::make_unique<StreamFan>(devs, true);
    for (int g = 0; g < gpus_; ++g) {
      send_.push_back(upload_pattern(g, g, n_, fan_->stream(std::size_t(g))));
      recv_.emplace_back(std::size_t(n_));
      PB_CUDA(cudaMemsetAsync(recv_.back().get(), 0, recv_.back().bytes(), fan_->stream(std::size_t(g))));
    }
    comms_.assign(std::size_t(gpus_), nullptr);
    PB_NCCL(ncclCommInitAll(comms_.data(), gpus_, devs.data()));
    fan_->sync();
  }
  void run() override {
    const DeviceGuard guard;
    fan_->start();
    try {
      NcclGroup group;
      for (int g = 0; g < gpus_; ++g) {
        const std::size_t q = std::size_t(g);
        if (what_ == Link::AllReduce) {
          PB_NCCL(ncclAllReduce(send_[q].get(), recv_[q].get(), std::size_t(n_), ncclFloat, ncclSum,
                                comms_[q], fan_->stream(q)));
        } else {
          PB_NCCL(ncclSend(send_[q].get(), std::size_t(n_), ncclFloat, (g + 1) % gpus_, comms_[q],
                           fan_->stream(q)));
          PB_NCCL(ncclRecv(recv_[q].get(), std::size_t(n_), ncclFloat, (g + gpus_ - 1) % gpus_, comms_[q],
                           fan_->stream(q)));
        }
      }
      group.end();
    } catch (...) {
      failed_ = true;  // a communicator left inside a collective is aborted, not destroyed
      throw;
    }
    fan_->join();
  }
  void* cuda_stream() override { return fan_->home(); }
  Check check() override {
    const DeviceGuard guard;
    fan_->sync();
    for (int g = 0; g < gpus_; ++g) {
      const std::vector<float> got = download(g, recv_[std::size_t(g)], fan_->stream(std::size_t(g)));
      for (std::int64_t i = 0; i < n_; ++i) {
        float want = 0;
        if (what_ == Link::AllReduce)
          for (int h = 0; h < gpus_; ++h) want += pattern(i, h);
        else
          want = pattern(i, (g + gpus_ - 1) % gpus_);
        if (!(got[std::size_t(i)] == want))
          return {false,
                  element_error(what_ == Link::AllReduce ? "all-reduce" : "receive", g, i,
                                got[std::size_t(i)], want),
                  "full"};
      }
    }
    return {true, "", "full"};
  }
  Work work() const override {
    Work w;
    w.bytes = 4.0 * double(n_);
    return w;
  }
  // nccl-tests' names for the rate of the work: its algorithm and bus bandwidths.
  void report(Counters& out, double seconds, std::int64_t iterations) override {
    const double algbw = per_second(work().bytes, iterations ? seconds / double(iterations) : 0.0) * 1e-9;
    const double factor = what_ == Link::AllReduce ? 2.0 * (gpus_ - 1) / gpus_ : 1.0;
    out.emplace_back("algbw_GBps", algbw);
    out.emplace_back("busbw_GBps", algbw * factor);
  }

 private:
  void release() {
    release_comms(comms_, failed_);
    send_.clear();
    recv_.clear();
  }
  Link what_;
  int gpus_;
  std::int64_t n_;
  bool failed_ = false;
  std::unique_ptr<StreamFan> fan_;
  std::vector<ncclComm_t> comms_;
  std::vector<DeviceBuffer<float> > send_, recv_;
};
#endif

}  // namespace

std::unique_ptr<Job> make_peer_copy(int src, int dst, std::int64_t bytes) {
  return std::make_unique<PeerCopy>(src, dst, bytes);
}

std::unique_ptr<Job> make_collective(Link what, int gpus, std::int64_t bytes) {
#ifdef PARBENCH_WITH_NCCL
  return std::make_unique<Collective>(what, gpus, bytes);
#else
  (void)what, (void)gpus, (void)bytes;
  return std::make_unique<WithoutNccl>();
#endif
}

}  // namespace pb::ceiling
