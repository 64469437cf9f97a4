#pragma once
// Every CUDA call goes through PB_CUDA; every launch is followed by
// PB_CUDA_LAUNCHED. Failures throw: an allocation failure as pb::OutOfMemory
// (the instance reports "out of memory" and the run goes on), anything else as
// pb::CudaError with the call, file and line.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "core/status.hpp"

namespace pb {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void cuda_fail(cudaError_t e, const char* what, const char* file, int line) {
  std::string msg = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " +
                    file + ":" + std::to_string(line);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so later instances start clean
    throw OutOfMemory(msg);
  }
  throw CudaError(msg);
}

}  // namespace pb

#define PB_CUDA(call)                                                                \
  do {                                                                               \
    cudaError_t pb_err_ = (call);                                                    \
    if (pb_err_ != cudaSuccess) ::pb::cuda_fail(pb_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define PB_CUDA_LAUNCHED() PB_CUDA(cudaGetLastError())
