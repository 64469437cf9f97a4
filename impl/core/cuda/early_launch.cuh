#pragma once
// Programmatic dependent launch (sm_90): a kernel launched by launch_early
// may start while the kernel before it on the stream still runs. It calls
// grid_wait() before it touches anything that kernel writes (griddepcontrol
// .wait: that kernel has finished and its writes are visible); a kernel's
// grid_release() lets the one after it start (otherwise it starts as this
// one ends). Both are no-ops for a kernel launched the ordinary way, so a
// kernel written for early launch runs unchanged under <<<...>>>.
#include <cstddef>

#include "core/cuda/check.cuh"

namespace pb {

__device__ __forceinline__ void grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Whether kernel may be launched early: its code has griddepcontrol.wait
// (built from sm_90 PTX or newer) and the current device is an sm_90 or newer.
// Asked once a kernel (early_launch.cu).
bool launch_early_enabled(const void* kernel);

template <class... Params, class... Args>
void launch_early(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s,
                  Args... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid, cfg.blockDim = block, cfg.dynamicSmemBytes = smem, cfg.stream = s;
  cfg.attrs = &attr, cfg.numAttrs = launch_early_enabled(reinterpret_cast<const void*>(kernel)) ? 1 : 0;
  PB_CUDA(cudaLaunchKernelEx(&cfg, kernel, args...));
}

}  // namespace pb
