// launch_early_enabled (early_launch.cuh): one query a kernel, cached.
#include <mutex>
#include <unordered_map>

#include "core/cuda/device_sm.cuh"
#include "core/cuda/early_launch.cuh"

namespace pb {

bool launch_early_enabled(const void* kernel) {
  // A build for older GPUs only, run by JIT on a Hopper, compiles grid_wait()
  // to nothing: its kernels must not start early.
  static std::mutex m;
  static std::unordered_map<const void*, bool> known;
  std::lock_guard<std::mutex> lock(m);
  auto it = known.find(kernel);
  if (it != known.end()) return it->second;
  cudaFuncAttributes a{};
  const bool on =
      device_sm_or_zero() >= 90 && cudaFuncGetAttributes(&a, kernel) == cudaSuccess && a.ptxVersion >= 90;
  cudaGetLastError();  // a failed query is not the launch's error
  return known[kernel] = on;
}

}  // namespace pb
