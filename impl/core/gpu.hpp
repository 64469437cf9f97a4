#pragma once
// Host-clean view of the GPU: whether one is usable, what it is, and the CUDA
// event timer. Implemented in cuda/gpu.cu in CUDA builds and in
// gpu_none.cpp otherwise, so callers never need nvcc or #ifdefs.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/job.hpp"

namespace pb {

struct GpuStatus {
  bool available = false;
  std::string reason;  // why not, when !available
  std::string name;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  int count = 0;                       // CUDA devices visible to this process
  std::size_t shared_optin_bytes = 0;  // the most shared memory a block may opt in to
};

const GpuStatus& gpu_status();  // probes device 0 once

struct TimerOptions {
  bool flush_l2 = false;  // overwrite L2 before each timed run: cold-cache numbers
};
// Process-wide (--gpu-idle-start): whether a timed run starts on an idle GPU,
// its first launch's host latency inside the events (cuda/gpu.cu says why the
// default queues a spin kernel first).
void set_gpu_idle_start(bool idle);
bool gpu_idle_start();

// Test-only (core/fault.hpp): allocates device memory until none is left and
// never frees it. Returns the bytes taken (0 without a GPU).
std::size_t exhaust_gpu_memory();
std::unique_ptr<Timer> make_cuda_timer(void* stream, const TimerOptions& opt);

// Key/value pairs for the JSON context (name, SMs, clocks, driver, runtime...).
std::vector<std::pair<std::string, std::string>> gpu_context();

}  // namespace pb
