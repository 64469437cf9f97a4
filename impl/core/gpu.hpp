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

// Which GPUs a process drives in a team of `gpus` spread over `ranks`
// processes (core/cuda/team.cuh; one process: ranks 1). Each rank drives
// gpus / ranks of them; team member r * per + i is rank r's GPU i. The ranks
// of a host take consecutive devices (local rank l: devices l * per ...),
// unless the launcher shows each rank its own GPUs only (`visible` equals
// per, as Slurm's --gpus-per-task does), which the rank then takes from 0.
struct TeamLayout {
  int gpus = 0, ranks = 1;
  int per = 0;    // GPUs a rank; 0 when gpus do not split evenly
  int base = 0;   // this process's first CUDA device
  int first = 0;  // the team member of that device
  int host_ranks = 1, visible = 0;
  static TeamLayout make(int gpus, int ranks, int rank, int local_rank, int local_size, int visible) {
    TeamLayout t;
    t.gpus = gpus, t.ranks = ranks, t.visible = visible;
    t.per = ranks > 0 && gpus > 0 && gpus % ranks == 0 ? gpus / ranks : 0;
    const bool own_only = ranks > 1 && visible == t.per;
    t.host_ranks = ranks > 1 && !own_only ? local_size : 1;
    t.base = ranks > 1 && !own_only ? local_rank * t.per : 0;
    t.first = rank * t.per;
    return t;
  }
  // Why the team cannot run with its work in `parts` parts, or "".
  std::string why_not(int parts) const {
    if (gpus < 1) return "asks for no GPUs";
    if (per == 0)
      return std::to_string(gpus) + " GPUs do not split evenly over " + std::to_string(ranks) + " ranks";
    if (host_ranks * per > visible)
      return ranks > 1
                 ? std::to_string(host_ranks) + " ranks on this host x " + std::to_string(per) +
                       " GPUs a rank need " + std::to_string(host_ranks * per) + " GPUs, " +
                       std::to_string(visible) + " visible"
                 : "asks for " + std::to_string(gpus) + " GPUs, " + std::to_string(visible) + " visible";
    if (parts < gpus) return "fewer parts than GPUs";
    if (ranks > 1 && parts != gpus) return "over MPI ranks every GPU holds one part";
    return "";
  }
  // This process's GPU (0 .. per - 1) that holds part q (part q on member
  // q % gpus), or -1.
  int holder(long long q) const {
    const int i = int(q % gpus) - first;
    return i >= 0 && i < per ? i : -1;
  }
};

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
// The model of this process's current CUDA device ("" without one): under
// mpirun a rank's own GPU (core/cuda/team.cuh makes it current).
std::string current_gpu_name();
std::unique_ptr<Timer> make_cuda_timer(void* stream, const TimerOptions& opt);
// A meter of the energy GPUs 0 .. gpus - 1 spend together (the GPUs one
// process drives for a multi-GPU run); without CUDA, one that says why not.
std::unique_ptr<energy::Meter> gpus_energy_meter(int gpus);

// Key/value pairs for the JSON context (name, SMs, clocks, driver, runtime...).
std::vector<std::pair<std::string, std::string>> gpu_context();

}  // namespace pb
