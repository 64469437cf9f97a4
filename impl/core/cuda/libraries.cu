// The CUDA libraries' versions (core/libraries.hpp). cuBLAS and NCCL are asked
// at run time, so the library loaded is the one named; CUB and Thrust are
// header-only, so theirs is the version this build compiled.
#include <cublas_v2.h>
#include <thrust/version.h>

#include <cub/version.cuh>
#include <string>
#ifdef PARBENCH_WITH_NCCL
#include <nccl.h>
#endif

#include "core/libraries.hpp"

namespace pb {
namespace {

std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

std::string cuda_library_version(const std::string& library) {
  if (library == "cublas") {
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
      return "unknown";
    return dotted(major, minor, patch);
  }
  if (library == "cub") return dotted(CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
  if (library == "thrust") return dotted(THRUST_MAJOR_VERSION, THRUST_MINOR_VERSION, THRUST_SUBMINOR_VERSION);
#ifdef PARBENCH_WITH_NCCL
  if (library == "nccl") {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
    return dotted(v / 10000, v / 100 % 100, v % 100);
  }
#endif
  return {};
}

}  // namespace pb
