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

// Why a run that splits its work evenly over GPUs 0 .. n - 1 (their `names`,
// by index) cannot use them: they are not all one model, so the slowest would
// set the pace and the result would describe neither. "" when they are.
inline std::string mixed_gpu_models(const std::vector<std::string>& names) {
  std::string others;
  for (std::size_t g = 1; g < names.size(); ++g)
    if (names[g] != names[0]) others += ", " + std::to_string(g) + ": " + names[g];
  if (others.empty()) return "";
  return "GPUs of different models (0: " + names[0] + others +
         "): a run split evenly over GPUs needs one model";
}

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
