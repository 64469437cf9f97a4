#pragma once
// RAII for device memory, streams and events. Allocation failure throws OutOfMemory.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/check.cuh"
#include "core/gpu.hpp"

namespace pb {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n) PB_CUDA(cudaMalloc(&p_, n * sizeof(T)));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

class Stream {
 public:
  Stream() { PB_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// An event for ordering work between streams (no timing).
class Event {
 public:
  Event() { PB_CUDA(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// The seconds between two points of a stream, for the untimed profiling
// passes (the benchmark's own timing is the CUDA timer's, core/cuda/gpu.cu).
// Its events belong to the device current when it is made.
class Stopwatch {
 public:
  Stopwatch() {
    PB_CUDA(cudaEventCreate(&begin_));
    PB_CUDA(cudaEventCreate(&end_));
  }
  ~Stopwatch() {
    cudaEventDestroy(begin_);
    cudaEventDestroy(end_);
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;
  void begin(cudaStream_t s) { PB_CUDA(cudaEventRecord(begin_, s)); }
  // Records the end on s, waits for it and returns the seconds since begin().
  double end(cudaStream_t s) {
    PB_CUDA(cudaEventRecord(end_, s));
    PB_CUDA(cudaEventSynchronize(end_));
    float ms = 0;
    PB_CUDA(cudaEventElapsedTime(&ms, begin_, end_));
    return double(ms) * 1e-3;
  }

 private:
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
};

// Work spread over one stream on each of several GPUs, bracketed by a home
// stream on the device current when the fan is made, the stream the CUDA
// timer brackets (core/job.hpp): start() makes every GPU's stream begin after
// what is queued on the home stream; join() makes the home stream go on after
// every GPU's work and leaves the home device current. With own_home the home
// stream is a stream of its own; without, it is the first GPU's stream (whose
// device must then be the current one). The fan makes its GPUs' streams, or
// takes streams others own (one a GPU, alive as long as the fan).
class StreamFan {
 public:
  StreamFan(const std::vector<int>& devs, bool own_home) : devs_(devs) {
    PB_CUDA(cudaGetDevice(&home_dev_));
    if (own_home) home_ = std::make_unique<Stream>();
    go_ = std::make_unique<Event>();
    for (int d : devs_) {
      PB_CUDA(cudaSetDevice(d));
      owned_.push_back(std::make_unique<Stream>());
      streams_.push_back(owned_.back()->get());
      done_.push_back(std::make_unique<Event>());
    }
    PB_CUDA(cudaSetDevice(home_dev_));
  }
  StreamFan(const std::vector<int>& devs, const std::vector<cudaStream_t>& streams)
      : devs_(devs), streams_(streams) {
    PB_CUDA(cudaGetDevice(&home_dev_));
    go_ = std::make_unique<Event>();
    for (int d : devs_) {
      PB_CUDA(cudaSetDevice(d));
      done_.push_back(std::make_unique<Event>());
    }
    PB_CUDA(cudaSetDevice(home_dev_));
  }
  cudaStream_t home() const { return home_ ? home_->get() : streams_[0]; }
  cudaStream_t stream(std::size_t g) const { return streams_[g]; }
  void start() const {
    PB_CUDA(cudaSetDevice(home_dev_));
    PB_CUDA(cudaEventRecord(go_->get(), home()));
    for (std::size_t g = first(); g < devs_.size(); ++g) {
      PB_CUDA(cudaSetDevice(devs_[g]));
      PB_CUDA(cudaStreamWaitEvent(stream(g), go_->get(), 0));
    }
  }
  void join() const {
    for (std::size_t g = first(); g < devs_.size(); ++g) {
      PB_CUDA(cudaSetDevice(devs_[g]));
      PB_CUDA(cudaEventRecord(done_[g]->get(), stream(g)));
    }
    PB_CUDA(cudaSetDevice(home_dev_));
    for (std::size_t g = first(); g < devs_.size(); ++g)
      PB_CUDA(cudaStreamWaitEvent(home(), done_[g]->get(), 0));
  }
  // Waits for every stream, the home stream last; the home device current.
  void sync() const {
    for (std::size_t g = 0; g < devs_.size(); ++g) {
      PB_CUDA(cudaSetDevice(devs_[g]));
      PB_CUDA(cudaStreamSynchronize(stream(g)));
    }
    PB_CUDA(cudaSetDevice(home_dev_));
    PB_CUDA(cudaStreamSynchronize(home()));
  }

 private:
  std::size_t first() const { return home_ ? 0 : 1; }  // the streams that are not the home stream
  std::vector<int> devs_;
  int home_dev_ = 0;
  std::unique_ptr<Stream> home_;
  std::vector<std::unique_ptr<Stream>> owned_;  // the streams the fan made
  std::vector<cudaStream_t> streams_;
  std::vector<std::unique_ptr<Event>> done_;
  std::unique_ptr<Event> go_;
};

// Lets GPU `from` access GPU `to`'s memory where the pair allows it (NVLink
// or PCIe peer to peer; already enabled is fine); false where it does not,
// and copies between them are staged by the driver. Leaves `from` current.
inline bool enable_peer_access(int from, int to) {
  int can = 0;
  PB_CUDA(cudaDeviceCanAccessPeer(&can, from, to));
  if (!can) return false;
  PB_CUDA(cudaSetDevice(from));
  const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled)
    (void)cudaGetLastError();
  else
    PB_CUDA(e);
  return true;
}

// Restores the current device when a scope that switches devices ends,
// returning or throwing: an out-of-memory on one GPU of a multi-GPU variant
// must not leave the later instances of the run on that GPU.
class DeviceGuard {
 public:
  DeviceGuard() { PB_CUDA(cudaGetDevice(&dev_)); }
  ~DeviceGuard() { cudaSetDevice(dev_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int dev_ = 0;
};

}  // namespace pb
