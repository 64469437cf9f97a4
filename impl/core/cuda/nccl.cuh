#pragma once
// Checked NCCL calls: a failed call throws CudaError naming the call, NCCL's
// message and the place, as PB_CUDA does for the runtime. Only in targets
// built with NCCL (PARBENCH_WITH_NCCL).
#include <nccl.h>

#include <string>

#include "core/cuda/check.cuh"

namespace pb {

[[noreturn]] inline void nccl_fail(ncclResult_t r, const char* what, const char* file, int line) {
  throw CudaError(std::string(what) + ": NCCL " + ncclGetErrorString(r) + " at " + file + ":" +
                  std::to_string(line));
}

}  // namespace pb

#define PB_NCCL(call)                                                                  \
  do {                                                                                 \
    ncclResult_t pb_nccl_ = (call);                                                    \
    if (pb_nccl_ != ncclSuccess) ::pb::nccl_fail(pb_nccl_, #call, __FILE__, __LINE__); \
  } while (0)
