// CPU-only build: no GPU can be used; CUDA jobs are never registered.
#include <stdexcept>

#include "core/gpu.hpp"

namespace pb {

namespace {
bool idle_start = false;
}
void set_gpu_idle_start(bool idle) { idle_start = idle; }
std::size_t exhaust_gpu_memory() { return 0; }
std::string current_gpu_name() { return ""; }
bool gpu_idle_start() { return idle_start; }

const GpuStatus& gpu_status() {
  static const GpuStatus s{false, "parbench was built without CUDA", "", 0, 0, 0};
  return s;
}

std::unique_ptr<Timer> make_cuda_timer(void*, const TimerOptions&) {
  throw std::logic_error("CUDA timer requested in a build without CUDA");
}

std::unique_ptr<energy::Meter> gpus_energy_meter(int) {
  return energy::make_unavailable_meter("parbench was built without CUDA");
}

std::vector<std::pair<std::string, std::string>> gpu_context() {
  return {{"gpu", "none (built without CUDA)"}};
}

}  // namespace pb
