#pragma once
// The compute capability of the current device, for kernels that need a
// newer GPU than the build's lowest (the GEMM and k-means FP64 tensor-core
// kernels, the Hopper GEMM).
#include "core/cuda/check.cuh"

namespace pb {

// The current device's compute capability as major * 10 + minor (90: sm_90).
inline int device_sm() {
  int dev = 0, major = 0, minor = 0;
  PB_CUDA(cudaGetDevice(&dev));
  PB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  PB_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return major * 10 + minor;
}

// The same without throwing: 0 when no device can be asked (for supports()).
inline int device_sm_or_zero() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    cudaGetLastError();  // clear it: not this variant's failure
    return 0;
  }
  return major * 10 + minor;
}

}  // namespace pb
